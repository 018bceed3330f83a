//! Finding the files to import and reading them as documents.

use std::collections::HashSet;
use std::fs;
use std::path::{Path, PathBuf};

use crate::db::documents::Adder;
use crate::knowledge::formats::{self, Limits, SUPPORTED_EXTENSIONS};
use crate::knowledge::ingest::SourceDocument;

/// The files to import, and those skipped while looking, with why.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct FoundFiles {
    pub files: Vec<PathBuf>,
    pub skipped: Vec<(PathBuf, String)>,
}

/// The supported files named by `paths` or inside them (folders recursively, in name
/// order, hidden entries and links to folders left out).
pub fn collect_files(paths: &[PathBuf]) -> FoundFiles {
    let mut found = FoundFiles::default();
    for path in paths {
        match fs::metadata(path) {
            Ok(meta) if meta.is_dir() => walk(path, &mut found),
            Ok(_) => consider(path, &mut found),
            Err(error) => found
                .skipped
                .push((path.clone(), format!("unreadable ({error})"))),
        }
    }
    let mut seen = HashSet::new();
    found
        .files
        .retain(|path| seen.insert(fs::canonicalize(path).unwrap_or_else(|_| path.clone())));
    found
}

fn walk(folder: &Path, found: &mut FoundFiles) {
    let entries = match fs::read_dir(folder) {
        Ok(entries) => entries,
        Err(error) => {
            found
                .skipped
                .push((folder.to_owned(), format!("unreadable folder ({error})")));
            return;
        }
    };
    let mut entries: Vec<_> = entries.filter_map(Result::ok).collect();
    entries.sort_by_key(|entry| entry.file_name());
    for entry in entries {
        let path = entry.path();
        if entry.file_name().to_string_lossy().starts_with('.') {
            continue;
        }
        let Ok(file_type) = entry.file_type() else {
            found.skipped.push((path, "unreadable".to_owned()));
            continue;
        };
        if file_type.is_dir() {
            walk(&path, found);
        } else if file_type.is_symlink() && path.is_dir() {
            found
                .skipped
                .push((path, "a link to a folder (not followed)".to_owned()));
        } else {
            consider(&path, found);
        }
    }
}

fn consider(path: &Path, found: &mut FoundFiles) {
    if is_supported(path) {
        found.files.push(path.to_owned());
    } else {
        found.skipped.push((path.to_owned(), not_supported()));
    }
}

/// Whether bor reads files named so (by extension, in any case).
pub fn is_supported(path: &Path) -> bool {
    path.extension()
        .and_then(|extension| extension.to_str())
        .is_some_and(|extension| {
            SUPPORTED_EXTENSIONS
                .iter()
                .any(|supported| supported.eq_ignore_ascii_case(extension))
        })
}

fn not_supported() -> String {
    format!(
        "not a kind bor reads (.{})",
        SUPPORTED_EXTENSIONS.join(", .")
    )
}

/// A file read as a document, or why it is skipped.
#[derive(Debug, PartialEq, Eq)]
pub enum ReadFile {
    Document(SourceDocument),
    Skipped(String),
}

/// Reads `path` with the reader of its kind (told from its content as well as its
/// name): its title is the document's own, else the file name; its source is the
/// absolute path, so a changed file replaces its earlier version. Blocking.
pub fn read_document(path: &Path, limits: &Limits) -> ReadFile {
    if !is_supported(path) {
        return ReadFile::Skipped(not_supported());
    }
    let bytes = match fs::read(path) {
        Ok(bytes) => bytes,
        Err(error) => return ReadFile::Skipped(format!("unreadable ({error})")),
    };
    let file_name = path.file_name().map_or_else(
        || path.display().to_string(),
        |name| name.to_string_lossy().into_owned(),
    );
    let source = fs::canonicalize(path).unwrap_or_else(|_| path.to_owned());
    match document_from_bytes(
        bytes,
        &file_name,
        Some(source.display().to_string()),
        limits,
    ) {
        Ok(document) => ReadFile::Document(document),
        Err(reason) => ReadFile::Skipped(reason),
    }
}

/// Reads a file's bytes as a document (the upload and the import share it); the error
/// is the reason a person reads. Blocking.
pub fn document_from_bytes(
    bytes: Vec<u8>,
    file_name: &str,
    source: Option<String>,
    limits: &Limits,
) -> Result<SourceDocument, String> {
    let extracted =
        formats::read_document(bytes, file_name, limits).map_err(|error| error.to_string())?;
    if extracted.text.trim().is_empty() {
        return Err("empty".to_owned());
    }
    Ok(SourceDocument {
        title: extracted
            .title
            .filter(|title| !title.trim().is_empty())
            .unwrap_or_else(|| file_name.to_owned()),
        source,
        content: extracted.text,
        content_type: extracted.content_type.to_owned(),
        page_starts: extracted.page_starts,
        pages: extracted.pages,
        collection_id: None,
        added_by: Adder::default(),
    })
}
