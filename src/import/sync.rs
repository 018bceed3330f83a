//! `bor import --sync`: after the import, the documents whose files are gone from the
//! folders named are removed. Sources are the absolute paths of the files, links
//! resolved (`files::read_document`), so a folder is matched by that same path and
//! documents from elsewhere are never touched.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};

use diesel_async::AsyncPgConnection;

use crate::db::DbError;
use crate::db::documents;

/// The folders `--sync` keeps in step: each of `paths` that is a folder now, as the path
/// sources are recorded with. A path that is not found is left out, so an unmounted disk
/// or a mistyped name removes nothing.
pub fn folders_to_sync(paths: &[PathBuf]) -> Vec<PathBuf> {
    paths
        .iter()
        .filter(|path| path.is_dir())
        .filter_map(|path| std::fs::canonicalize(path).ok())
        .collect()
}

/// What became of a document whose file is gone.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Gone {
    /// Deleted with its chunks.
    Removed { source: String },
    /// A file of the same content was imported in the same run (the file was moved or
    /// renamed): the document is kept and now comes from there.
    Moved { from: String, to: String },
}

impl Gone {
    /// The line `bor import` prints for it.
    pub fn line(&self) -> String {
        match self {
            Gone::Removed { source, .. } => format!("removed   {source} (the file is gone)"),
            Gone::Moved { from, to, .. } => format!("moved     {from} → {to}"),
        }
    }
}

/// Removes the documents of the files gone from `folders`. `imported` maps the id of
/// each document this run stored or found unchanged to the source it was read from now.
pub async fn settle_gone_files(
    conn: &mut AsyncPgConnection,
    folders: &[PathBuf],
    collection_id: i64,
    imported: &HashMap<i64, String>,
) -> Result<Vec<Gone>, DbError> {
    let mut candidates = Vec::new();
    for folder in folders {
        let folder = folder.display().to_string();
        candidates.extend(documents::sources_inside(conn, &folder, collection_id).await?);
    }
    settle(conn, candidates, imported).await
}

/// Removes the documents of `gone` (files, or folders and every file inside them) when
/// nothing is there any more; see [`settle_gone_files`] for `imported`.
pub async fn settle_gone_paths(
    conn: &mut AsyncPgConnection,
    gone: &[PathBuf],
    collection_id: i64,
    imported: &HashMap<i64, String>,
) -> Result<Vec<Gone>, DbError> {
    let mut candidates = Vec::new();
    for path in gone {
        let source = path.display().to_string();
        for id in documents::ids_from_source(conn, &source, collection_id).await? {
            candidates.push((id, source.clone()));
        }
        candidates.extend(documents::sources_inside(conn, &source, collection_id).await?);
    }
    settle(conn, candidates, imported).await
}

async fn settle(
    conn: &mut AsyncPgConnection,
    candidates: Vec<(i64, String)>,
    imported: &HashMap<i64, String>,
) -> Result<Vec<Gone>, DbError> {
    let mut settled = Vec::new();
    let mut looked_at = HashSet::new();
    for (id, source) in candidates {
        if !looked_at.insert(id) || file_exists(&source).await {
            continue;
        }
        let gone = match imported.get(&id) {
            Some(now) if *now != source => {
                documents::set_source(conn, id, now).await?;
                Gone::Moved {
                    from: source,
                    to: now.clone(),
                }
            }
            _ => {
                documents::delete_document(conn, id).await?;
                Gone::Removed { source }
            }
        };
        settled.push(gone);
    }
    Ok(settled)
}

/// Whether anything is at `path` (a file that is there but can no longer be read keeps
/// its document: only a file that is gone removes it).
async fn file_exists(path: &str) -> bool {
    tokio::fs::symlink_metadata(Path::new(path)).await.is_ok()
}
