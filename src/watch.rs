//! Keeping folders in step: `bor watch PATH…`, and `bor serve` with `BOR_WATCH`. The
//! folders are imported with `--sync` first; then every file created, changed, deleted
//! or renamed is imported, replaced or removed within a second or two.
//!
//! Changes come from `notify` (inotify on Linux: one watch per folder) through
//! `notify-debouncer-full`, which gathers the events of each path for [`DEBOUNCE`]: an
//! editor's save dance (write a temporary file, rename it over the old one) arrives as
//! one batch. (`notify-debouncer-mini` gathers paths only, without the kinds: bor's own
//! reading of a file, an access event, would then look like a change and start again
//! forever.) Apart from leaving out access events, bor looks at each path: a file
//! there is imported (unchanged text is left alone), a path gone removes the documents
//! of that file (or of every file under a folder gone), and a file renamed keeps its
//! document under its new path (`import/sync.rs`). Each file's state is recorded in
//! `watched_files`, which `bor check` shows.

use std::collections::{BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::time::Duration;

use notify::{EventKind, RecursiveMode};
use notify_debouncer_full::{DebounceEventResult, Debouncer, RecommendedCache, new_debouncer};
use tokio::sync::mpsc;

use crate::db::watched_files::{self, FileState};
use crate::import::sync::{Gone, settle_gone_files, settle_gone_paths};
use crate::import::{DocumentSink, ReadFile, collect_files, is_supported, read_document};
use crate::knowledge::formats::Limits;
use crate::knowledge::ingest::{IngestError, IngestOutcome, Unobserved};

/// How long the events of one path are gathered before they are acted on.
pub const DEBOUNCE: Duration = Duration::from_millis(500);
/// How long no change must come before the documents of paths gone are removed.
pub const GONE_GRACE: Duration = Duration::from_secs(1);
/// The pause before changes are tried again when the database or the LLM server failed.
const RETRY_DELAY: Duration = Duration::from_secs(5);

/// Runs `bor watch`: until stopped (Ctrl-C), or at once when a folder cannot be watched.
pub async fn run(
    config: &crate::config::Config,
    folders: &[PathBuf],
    collection: Option<&str>,
) -> std::process::ExitCode {
    let (pool, ingestor) = match crate::import::open_ingestor(config, "bor watch").await {
        Ok(opened) => opened,
        Err(code) => return code,
    };
    let ingestor = match crate::import::into_collection(
        &pool,
        &ingestor,
        collection,
        "bor watch",
        crate::db::documents::Adder::FolderSync,
    )
    .await
    {
        Ok(sink) => sink,
        Err(code) => return code,
    };
    let watch = match start(folders, crate::knowledge::read_limits(config)) {
        Ok(watch) => watch,
        Err(problem) => {
            eprintln!("bor watch: {problem}");
            return std::process::ExitCode::FAILURE;
        }
    };
    println!(
        "watching {} (Ctrl-C stops)",
        watch
            .folders
            .iter()
            .map(|folder| folder.display().to_string())
            .collect::<Vec<_>>()
            .join(", ")
    );
    let say = |line: &str| println!("{line}");
    tokio::select! {
        () = keep_in_step(&ingestor, watch, &say) => {}
        _ = tokio::signal::ctrl_c() => {}
    }
    std::process::ExitCode::SUCCESS
}

/// Folders being watched, and the changes heard in them.
pub struct FolderWatch {
    folders: Vec<PathBuf>,
    /// Stops watching when dropped.
    _debouncer: Debouncer<notify::RecommendedWatcher, RecommendedCache>,
    changes: mpsc::UnboundedReceiver<DebounceEventResult>,
    /// How the files are read.
    limits: Limits,
}

/// Starts watching `folders` (each recursively), their files read within `limits`; the
/// error says what to do.
pub fn start(folders: &[PathBuf], limits: Limits) -> Result<FolderWatch, String> {
    let (sender, changes) = mpsc::unbounded_channel();
    let mut debouncer = new_debouncer(DEBOUNCE, None, move |result| {
        let _ = sender.send(result);
    })
    .map_err(|error| watch_error(&error))?;
    let mut watched = Vec::new();
    for folder in folders {
        let folder = std::fs::canonicalize(folder)
            .map_err(|error| format!("{}: cannot be watched ({error})", folder.display()))?;
        if !folder.is_dir() {
            return Err(format!("{}: not a folder", folder.display()));
        }
        debouncer
            .watch(&folder, RecursiveMode::Recursive)
            .map_err(|error| format!("{}: {}", folder.display(), watch_error(&error)))?;
        watched.push(folder);
    }
    Ok(FolderWatch {
        folders: watched,
        _debouncer: debouncer,
        changes,
        limits,
    })
}

/// What a person reads when watching fails; the OS limit of watches names its fix.
pub fn watch_error(error: &notify::Error) -> String {
    match error.kind {
        notify::ErrorKind::MaxFilesWatch => "the system's limit of inotify watches (one per folder) is reached: raise fs.inotify.max_user_watches, e.g. `sudo sysctl fs.inotify.max_user_watches=524288` (and in /etc/sysctl.d/ to keep it), then start again".to_owned(),
        _ => format!("cannot be watched ({error})"),
    }
}

/// Imports the folders with `--sync`, then keeps them in step until the watch ends.
/// `say` hears a line for each file stored, skipped or removed, and each problem.
///
/// The documents of paths gone are removed once no change has come for [`GONE_GRACE`]:
/// a rename can arrive as two batches (the old path gone, then the new one), and the new
/// path must be imported first for its document to be kept.
pub async fn keep_in_step(sink: &impl DocumentSink, mut watch: FolderWatch, say: &dyn Fn(&str)) {
    let mut pending: BTreeSet<PathBuf> = collect_files(&watch.folders).files.into_iter().collect();
    let mut changes = Changes {
        limits: watch.limits.clone(),
        ..Changes::default()
    };
    // The first pass sweeps the folders; so does the first quiet moment after it: a file
    // created and deleted while the first pass read the folders leaves no event (the
    // debouncer drops a file created and removed within its window).
    let mut sweep_now = true;
    let mut sweep_when_quiet = true;
    loop {
        let mut quiet = false;
        if pending.is_empty() && !sweep_now {
            let next = if changes.gone.is_empty() && !sweep_when_quiet {
                watch.changes.recv().await
            } else {
                match tokio::time::timeout(GONE_GRACE, watch.changes.recv()).await {
                    Ok(next) => next,
                    Err(_) => {
                        quiet = true;
                        None
                    }
                }
            };
            match next {
                Some(result) => absorb(result, &mut pending, say),
                None if quiet => {}
                None => return,
            }
        }
        while let Ok(result) = watch.changes.try_recv() {
            absorb(result, &mut pending, say);
        }
        let sweep = sweep_now || (quiet && sweep_when_quiet);
        let sweep_folders = if sweep {
            watch.folders.clone()
        } else {
            Vec::new()
        };
        let settle = quiet || sweep;
        match changes
            .apply(sink, &watch.folders, &pending, settle, &sweep_folders, say)
            .await
        {
            Ok(()) => {
                pending.clear();
                if sweep_now {
                    sweep_now = false;
                } else if sweep {
                    sweep_when_quiet = false;
                }
            }
            Err(error) => {
                say(&format!(
                    "stopped: {}; trying again in {} s",
                    bor_actors::error_chain(&error),
                    RETRY_DELAY.as_secs()
                ));
                tokio::time::sleep(RETRY_DELAY).await;
            }
        }
    }
}

/// Notes the paths of the events that may change a file: reading one (bor's own reads
/// among them) is not a change.
fn absorb(result: DebounceEventResult, pending: &mut BTreeSet<PathBuf>, say: &dyn Fn(&str)) {
    match result {
        Ok(events) => pending.extend(
            events
                .into_iter()
                .filter(|event| !matches!(event.kind, EventKind::Access(_)))
                .flat_map(|event| event.event.paths),
        ),
        Err(errors) => {
            for error in errors {
                say(&format!("watching: {}", watch_error(&error)));
            }
        }
    }
}

/// What the batches since the last removal did.
#[derive(Default)]
struct Changes {
    /// Each document stored or found unchanged, with the path it was read from.
    imported: HashMap<i64, String>,
    /// Paths found gone, waiting to be settled.
    gone: BTreeSet<PathBuf>,
    /// How the files are read.
    limits: Limits,
}

impl Changes {
    /// Imports what is at `paths` and notes those gone; with `settle`, removes the
    /// documents of the paths gone (and, with `sweep`, of every file gone from those
    /// folders).
    async fn apply(
        &mut self,
        sink: &impl DocumentSink,
        roots: &[PathBuf],
        paths: &BTreeSet<PathBuf>,
        settle: bool,
        sweep: &[PathBuf],
        say: &dyn Fn(&str),
    ) -> Result<(), IngestError> {
        for path in paths.iter().filter(|path| !is_hidden(path, roots)) {
            match tokio::fs::symlink_metadata(path).await {
                Err(error) if error.kind() == std::io::ErrorKind::NotFound => {
                    self.gone.insert(path.clone());
                }
                Err(_) => {}
                Ok(meta) if meta.is_dir() => {
                    for file in collect_files(std::slice::from_ref(path)).files {
                        import_file(sink, &file, &self.limits, &mut self.imported, say).await?;
                    }
                }
                Ok(_) if is_supported(path) => {
                    import_file(sink, path, &self.limits, &mut self.imported, say).await?;
                }
                // Editors' temporary files and other kinds: not documents.
                Ok(_) => {}
            }
        }
        if !settle {
            return Ok(());
        }
        let gone: Vec<PathBuf> = self.gone.iter().cloned().collect();
        let mut conn = sink.pool().get().await?;
        for path in &gone {
            watched_files::mark_removed(&mut conn, &path.display().to_string()).await?;
        }
        let collection_id = crate::import::sink_collection(&mut conn, sink).await?;
        let mut settled =
            settle_gone_paths(&mut conn, &gone, collection_id, &self.imported).await?;
        settled.extend(settle_gone_files(&mut conn, sweep, collection_id, &self.imported).await?);
        for gone in &settled {
            let (path, reason) = match gone {
                Gone::Removed { source } => (source, None),
                Gone::Moved { from, to } => (from, Some(format!("moved to {to}"))),
            };
            watched_files::record(&mut conn, path, FileState::Removed, reason.as_deref()).await?;
            say(&gone.line());
        }
        self.gone.clear();
        self.imported.clear();
        Ok(())
    }
}

async fn import_file(
    sink: &impl DocumentSink,
    path: &Path,
    limits: &Limits,
    imported: &mut HashMap<i64, String>,
    say: &dyn Fn(&str),
) -> Result<(), IngestError> {
    let read = {
        let (path, limits) = (path.to_owned(), limits.clone());
        tokio::task::spawn_blocking(move || read_document(&path, &limits)).await
    };
    let shown = path.display().to_string();
    let read = read.unwrap_or_else(|error| ReadFile::Skipped(format!("unreadable ({error})")));
    let skipped = match read {
        ReadFile::Document(document) => {
            let document = document.added_by(crate::db::documents::Adder::FolderSync);
            match sink.store(&document, &Unobserved).await {
                Ok(outcome) => {
                    let pages_read = document.pages_read();
                    let source = document.source.unwrap_or_else(|| shown.clone());
                    let mut conn = sink.pool().get().await?;
                    watched_files::record(&mut conn, &source, FileState::Imported, None).await?;
                    if !matches!(outcome, IngestOutcome::Unchanged { .. }) {
                        say(&crate::import::describe_read(&outcome, &pages_read, &shown));
                    }
                    imported.insert(outcome.id(), source);
                    return Ok(());
                }
                Err(error @ (IngestError::Embedding(_) | IngestError::Database(_))) => {
                    return Err(error);
                }
                Err(error) => error.to_string(),
            }
        }
        ReadFile::Skipped(reason) => reason,
    };
    let mut conn = sink.pool().get().await?;
    watched_files::record(&mut conn, &shown, FileState::Skipped, Some(&skipped)).await?;
    say(&format!("skipped   {shown}: {skipped}"));
    Ok(())
}

/// Whether `path` lies in a hidden entry (a name starting with `.`) below its root.
fn is_hidden(path: &Path, roots: &[PathBuf]) -> bool {
    let below = roots
        .iter()
        .find_map(|root| path.strip_prefix(root).ok())
        .unwrap_or(path);
    below
        .components()
        .any(|part| part.as_os_str().to_string_lossy().starts_with('.'))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_limit_of_watches_names_its_setting() {
        let message = watch_error(&notify::Error::new(notify::ErrorKind::MaxFilesWatch));
        assert!(message.contains("fs.inotify.max_user_watches"), "{message}");
    }

    #[test]
    fn hidden_entries_below_the_root_are_left_out() {
        let roots = [PathBuf::from("/home/me/.notes")];
        assert!(!is_hidden(Path::new("/home/me/.notes/cats.md"), &roots));
        assert!(is_hidden(Path::new("/home/me/.notes/.cats.md.swp"), &roots));
        assert!(is_hidden(Path::new("/home/me/.notes/.git/config"), &roots));
    }
}
