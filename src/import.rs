//! `bor import PATH…`: stores Markdown (`.md`, `.markdown`), plain text (`.txt`,
//! `.text`), PDF, HTML (`.html`, `.htm`) and Word (`.docx`) files in the knowledge base,
//! each read by the format reader of its kind (`bor_formats`). Folders are read
//! recursively, leaving out hidden entries (names starting with `.`) and links to
//! folders; every other file is skipped with a line saying so, as is a file that cannot
//! be read (with the reader's reason: damaged, encrypted, no text layer, too large, …).
//! The rest goes on.
//!
//! Re-importing an unchanged file does nothing; a changed file replaces its earlier
//! version (same source path). With `--sync`, the documents whose files are gone from
//! the folders named are removed too (`sync.rs`). A progress bar shows files, chunks and
//! embeddings on a terminal; elsewhere each file gets a plain line. A summary ends the
//! run.

mod files;
pub mod pages;
mod progress;
pub mod sync;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;
use std::time::{Duration, Instant};

use bor_actors::llm::LlmClient;
use futures_util::StreamExt;

use crate::config::Config;
use crate::db::documents::Adder;
use crate::db::{self, DbPool, chunks};
use crate::knowledge::KnowledgeService;
use crate::knowledge::formats::Limits;
use crate::knowledge::ingest::{
    CommitTurn, IngestError, IngestOutcome, IngestProgress, Ingestor, ModelDimension, PagesRead,
    PreparedDocument, SourceDocument, in_order,
};
use crate::state::{chunking_settings, llm_settings};
use crate::web::{FetchSettings, Fetcher};
pub use files::{ReadFile, collect_files, document_from_bytes, is_supported, read_document};
use progress::ImportProgress;

/// Where documents are stored: the [`Ingestor`] of `bor import`, or the running service's
/// [`KnowledgeService`] (which brings its index up to date at once), into `default`, or
/// either of them [`InCollection`].
pub trait DocumentSink {
    fn pool(&self) -> &DbPool;
    /// [`Ingestor::prepare`] into this sink: chunked and embedded, nothing written.
    fn prepare(
        &self,
        document: &SourceDocument,
        progress: &dyn IngestProgress,
    ) -> impl Future<Output = Result<PreparedDocument, IngestError>>;
    /// [`Ingestor::commit`], and whatever the sink keeps in step with what is stored.
    fn commit(
        &self,
        prepared: PreparedDocument,
    ) -> impl Future<Output = Result<IngestOutcome, IngestError>>;
    /// Prepares and commits one document.
    fn store(
        &self,
        document: &SourceDocument,
        progress: &dyn IngestProgress,
    ) -> impl Future<Output = Result<IngestOutcome, IngestError>> {
        self.store_in_turn(document, progress, CommitTurn::default())
    }
    /// Prepares `document`, then commits it once `turn` comes ([`in_order`]).
    fn store_in_turn(
        &self,
        document: &SourceDocument,
        progress: &dyn IngestProgress,
        turn: CommitTurn,
    ) -> impl Future<Output = Result<IngestOutcome, IngestError>> {
        async move {
            let prepared = self.prepare(document, progress).await?;
            turn.wait().await;
            self.commit(prepared).await
        }
    }
    /// The collection it stores into; `None`: `default`.
    fn collection_id(&self) -> Option<i64> {
        None
    }
}

/// A sink that stores into the collection `collection_id`, as added by `added_by`.
pub struct InCollection<'a, S> {
    pub sink: &'a S,
    pub collection_id: i64,
    /// Who or what imports: the person or the service token (a URL import through the
    /// admin API), `bor import`, the folder watcher.
    pub added_by: Adder,
}

impl<S: DocumentSink> DocumentSink for InCollection<'_, S> {
    fn pool(&self) -> &DbPool {
        self.sink.pool()
    }

    async fn prepare(
        &self,
        document: &SourceDocument,
        progress: &dyn IngestProgress,
    ) -> Result<PreparedDocument, IngestError> {
        let document = document
            .clone()
            .in_collection(Some(self.collection_id))
            .added_by(self.added_by);
        self.sink.prepare(&document, progress).await
    }

    async fn commit(&self, prepared: PreparedDocument) -> Result<IngestOutcome, IngestError> {
        self.sink.commit(prepared).await
    }

    fn collection_id(&self) -> Option<i64> {
        Some(self.collection_id)
    }
}

/// The id of the collection a sink stores into (`default` made again when deleted).
pub async fn sink_collection(
    conn: &mut diesel_async::AsyncPgConnection,
    sink: &impl DocumentSink,
) -> Result<i64, crate::db::DbError> {
    crate::db::collections::resolve(conn, sink.collection_id()).await
}

impl DocumentSink for Ingestor {
    fn pool(&self) -> &DbPool {
        Ingestor::pool(self)
    }

    async fn prepare(
        &self,
        document: &SourceDocument,
        progress: &dyn IngestProgress,
    ) -> Result<PreparedDocument, IngestError> {
        Ingestor::prepare(self, document, progress).await
    }

    async fn commit(&self, prepared: PreparedDocument) -> Result<IngestOutcome, IngestError> {
        Ingestor::commit(self, prepared).await
    }
}

impl DocumentSink for KnowledgeService {
    fn pool(&self) -> &DbPool {
        KnowledgeService::pool(self)
    }

    async fn prepare(
        &self,
        document: &SourceDocument,
        _: &dyn IngestProgress,
    ) -> Result<PreparedDocument, IngestError> {
        self.prepare_document(document).await
    }

    async fn commit(&self, prepared: PreparedDocument) -> Result<IngestOutcome, IngestError> {
        self.commit_document(prepared).await
    }
}

/// Counts for the summary line.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct ImportSummary {
    pub imported: usize,
    pub unchanged: usize,
    pub replaced: usize,
    /// Same content, embedded anew for a new embedding model.
    pub refreshed: usize,
    pub skipped: usize,
    /// Documents removed because their files are gone; `None` without `--sync`.
    pub removed: Option<usize>,
    /// Chunks written.
    pub chunks: usize,
}

/// How an import goes beyond storing what it finds.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct ImportOptions {
    /// Also remove the documents whose files are gone from the folders named.
    pub sync: bool,
    /// How files are read ([`read_limits`](crate::knowledge::read_limits));
    /// the default reads no page by OCR.
    pub limits: Limits,
    /// For each web address, import up to this many pages of its site instead of the
    /// one page.
    pub crawl: Option<usize>,
}

/// Whether a command-line argument is a web address rather than a path.
pub fn is_web_address(argument: &Path) -> bool {
    argument
        .to_str()
        .is_some_and(|text| text.starts_with("http://") || text.starts_with("https://"))
}

impl ImportSummary {
    /// Counts what storing one document did.
    fn count(&mut self, outcome: &IngestOutcome) {
        let (label, count) = match outcome {
            IngestOutcome::Created { chunks, .. } => (&mut self.imported, Some(chunks)),
            IngestOutcome::Unchanged { .. } => (&mut self.unchanged, None),
            IngestOutcome::Replaced { chunks, .. } => (&mut self.replaced, Some(chunks)),
            IngestOutcome::Refreshed { chunks, .. } => (&mut self.refreshed, Some(chunks)),
        };
        *label += 1;
        self.chunks += count.copied().unwrap_or(0);
    }

    pub fn line(&self, elapsed: Duration) -> String {
        let removed = self
            .removed
            .map(|removed| format!("removed {removed}, "))
            .unwrap_or_default();
        format!(
            "imported {}, unchanged {}, replaced {}, re-embedded {}, {removed}skipped {}; {} chunks in {:.1} s",
            self.imported,
            self.unchanged,
            self.replaced,
            self.refreshed,
            self.skipped,
            self.chunks,
            elapsed.as_secs_f64()
        )
    }
}

/// Runs the command; the exit code is non-zero when the import had to stop.
pub async fn run(
    config: &Config,
    paths: &[PathBuf],
    collection: Option<&str>,
    options: &ImportOptions,
) -> ExitCode {
    let started = Instant::now();
    let (pool, ingestor) = match open_ingestor(config, "bor import").await {
        Ok(opened) => opened,
        Err(code) => return code,
    };
    let sink = match into_collection(
        &pool,
        &ingestor,
        collection,
        "bor import",
        Adder::CommandLine,
    )
    .await
    {
        Ok(sink) => sink,
        Err(code) => return code,
    };
    let (addresses, files): (Vec<&PathBuf>, Vec<&PathBuf>) =
        paths.iter().partition(|path| is_web_address(path));
    let files: Vec<PathBuf> = files.into_iter().cloned().collect();
    let mut result = import(&sink, &files, options).await;
    if let (Ok(summary), false) = (&mut result, addresses.is_empty()) {
        let fetcher = Fetcher::new(FetchSettings::from_config(config));
        let progress = ImportProgress::new(0);
        let mut lines = PageLines {
            summary,
            progress: &progress,
        };
        for address in addresses {
            let address = address.to_string_lossy();
            let imported = pages::import_address(
                &sink,
                &fetcher,
                &address,
                options.crawl,
                &progress,
                &mut lines,
            )
            .await;
            if let Err(error) = imported {
                progress.finish();
                result = Err((lines.summary.clone(), error));
                break;
            }
        }
        progress.finish();
    }
    let summary = match result {
        Ok(summary) => summary,
        Err((summary, error)) => {
            println!("{}", summary.line(started.elapsed()));
            eprintln!("bor import: stopped: {}", bor_actors::error_chain(&error));
            return ExitCode::FAILURE;
        }
    };
    println!("{}", summary.line(started.elapsed()));
    if let Ok(current) = ingestor
        .model_dimension(&crate::knowledge::ingest::Unobserved)
        .await
    {
        report_other_embeddings(&pool, current, ingestor.embedder()).await;
    }
    ExitCode::SUCCESS
}

/// `sink` storing into the collection `name` (made when absent; `default` when `None`),
/// as added by `added_by`; on failure the line is printed (prefixed with `command`) and the exit code given: 2
/// for a name that breaks the rule.
pub async fn into_collection<'a, S: DocumentSink>(
    pool: &DbPool,
    sink: &'a S,
    name: Option<&str>,
    command: &str,
    added_by: Adder,
) -> Result<InCollection<'a, S>, ExitCode> {
    let name = name.unwrap_or(crate::db::collections::DEFAULT_COLLECTION);
    if !crate::db::collections::is_valid_name(name) {
        eprintln!(
            "{command}: --collection {name:?}: {}",
            crate::db::collections::NAME_RULE
        );
        return Err(ExitCode::from(2));
    }
    let made = async {
        let mut conn = pool.get().await?;
        crate::db::collections::get_or_create(&mut conn, name).await
    };
    match made.await {
        Ok(collection) => Ok(InCollection {
            sink,
            collection_id: collection.id,
            added_by,
        }),
        Err(error) => {
            eprintln!(
                "{command}: the collection {name} could not be made: {}",
                bor_actors::error_chain(&error)
            );
            Err(ExitCode::FAILURE)
        }
    }
}

/// The database, migrated, and an ingestor storing into it; on failure the line is
/// printed (prefixed with `command`) and the exit code given.
pub async fn open_ingestor(config: &Config, command: &str) -> Result<(DbPool, Ingestor), ExitCode> {
    if let Err(error) = db::run_migrations(&config.database_url).await {
        eprintln!(
            "{command}: the database at {} is not usable: {}",
            config.database_url_redacted(),
            bor_actors::error_chain(&error)
        );
        return Err(ExitCode::FAILURE);
    }
    let pool = match DbPool::new(&config.database_url, 2) {
        Ok(pool) => pool,
        Err(error) => {
            eprintln!("{command}: {error}");
            return Err(ExitCode::FAILURE);
        }
    };
    let ingestor = Ingestor::new(
        pool.clone(),
        LlmClient::new(Arc::new(llm_settings(config))),
        chunking_settings(config),
        Arc::new(ModelDimension::default()),
    );
    Ok((pool, ingestor))
}

/// Imports every file under `paths` (see [`import`]).
pub async fn import_paths(
    ingestor: &Ingestor,
    paths: &[PathBuf],
) -> Result<ImportSummary, (ImportSummary, IngestError)> {
    import(ingestor, paths, &ImportOptions::default()).await
}

/// Imports every file under `paths`, then (with `sync`) removes the documents whose
/// files are gone from the folders among them. Stops at the first failure that would
/// fail every later file too (the LLM server or the database being unavailable); then
/// nothing is removed.
pub async fn import(
    sink: &impl DocumentSink,
    paths: &[PathBuf],
    options: &ImportOptions,
) -> Result<ImportSummary, (ImportSummary, IngestError)> {
    let mut summary = ImportSummary::default();
    // Each document stored or found unchanged, with the source it was read from now.
    let mut imported = HashMap::new();
    let found = collect_files(paths);
    let progress = ImportProgress::new(found.files.len());
    for (path, reason) in &found.skipped {
        summary.skipped += 1;
        progress.say(&format!("skipped   {}: {reason}", path.display()));
    }
    let limits = &options.limits;
    // Read, chunked and embedded several at a time; stored one after the other in the
    // folder's order, so that documents are numbered (and listed) in it.
    let mut stored = in_order(&found.files, |path, turn| {
        let progress = &progress;
        async move {
            let stored = match read_file(path, limits).await {
                ReadFile::Skipped(reason) => Stored::Skipped(reason),
                ReadFile::Document(document) => {
                    let stored = sink.store_in_turn(&document, progress, turn).await;
                    let pages_read = document.pages_read();
                    Stored::Outcome(document.source, pages_read, stored)
                }
            };
            (path, stored)
        }
    });
    while let Some((path, stored)) = stored.next().await {
        match stored {
            Stored::Outcome(source, pages_read, Ok(outcome)) => {
                if let Some(source) = source {
                    imported.insert(outcome.id(), source);
                }
                summary.count(&outcome);
                progress.say(&describe_read(
                    &outcome,
                    &pages_read,
                    &path.display().to_string(),
                ));
            }
            Stored::Outcome(
                _,
                _,
                Err(error @ (IngestError::Embedding(_) | IngestError::Database(_))),
            ) => {
                progress.finish();
                return Err((summary, error));
            }
            Stored::Outcome(_, _, Err(error)) => {
                summary.skipped += 1;
                progress.say(&format!("skipped   {}: {error}", path.display()));
            }
            Stored::Skipped(reason) => {
                summary.skipped += 1;
                progress.say(&format!("skipped   {}: {reason}", path.display()));
            }
        }
        progress.file_done();
    }
    if options.sync {
        let settled = match remove_gone_files(sink, paths, &imported).await {
            Ok(settled) => settled,
            Err(error) => {
                progress.finish();
                return Err((summary, error.into()));
            }
        };
        for gone in &settled {
            progress.say(&gone.line());
        }
        let removed = settled
            .iter()
            .filter(|gone| matches!(gone, sync::Gone::Removed { .. }))
            .count();
        summary.removed = Some(removed);
    }
    progress.finish();
    Ok(summary)
}

/// What became of a file of an import.
enum Stored {
    /// Not read.
    Skipped(String),
    /// Read; its source, how its pages were read, and whether it was stored.
    Outcome(
        Option<String>,
        PagesRead,
        Result<IngestOutcome, IngestError>,
    ),
}

/// Reads the file at `path`, on a blocking thread.
async fn read_file(path: &Path, limits: &Limits) -> ReadFile {
    let (path, limits) = (path.to_owned(), limits.clone());
    tokio::task::spawn_blocking(move || read_document(&path, &limits))
        .await
        .unwrap_or_else(|error| ReadFile::Skipped(format!("unreadable ({error})")))
}

async fn remove_gone_files(
    sink: &impl DocumentSink,
    paths: &[PathBuf],
    imported: &HashMap<i64, String>,
) -> Result<Vec<sync::Gone>, crate::db::DbError> {
    let mut conn = sink.pool().get().await?;
    let collection_id = sink_collection(&mut conn, sink).await?;
    sync::settle_gone_files(
        &mut conn,
        &sync::folders_to_sync(paths),
        collection_id,
        imported,
    )
    .await
}

/// Prints each page's line and counts it in the summary.
struct PageLines<'a> {
    summary: &'a mut ImportSummary,
    progress: &'a ImportProgress,
}

impl pages::PageListener for PageLines<'_> {
    fn page(&mut self, report: pages::PageReport) {
        let line = match &report {
            pages::PageReport::Stored { url, outcome, .. } => {
                self.summary.count(outcome);
                describe(outcome, url)
            }
            pages::PageReport::NotModified { url, .. } => {
                self.summary.unchanged += 1;
                format!("unchanged {url} (not modified)")
            }
            pages::PageReport::Skipped { url, reason } => {
                self.summary.skipped += 1;
                format!("skipped   {url}: {reason}")
            }
        };
        self.progress.say(&line);
    }

    fn note(&mut self, note: &str) {
        self.progress.say(&format!("note: {note}"));
    }
}

/// The line said of a file or page stored.
pub fn describe(outcome: &IngestOutcome, path: &str) -> String {
    match outcome {
        IngestOutcome::Created { chunks, .. } => format!("imported  {path} ({chunks} chunks)"),
        IngestOutcome::Unchanged { .. } => format!("unchanged {path}"),
        IngestOutcome::Replaced { chunks, .. } => {
            format!("replaced  {path} ({chunks} chunks; the earlier version is deleted)")
        }
        IngestOutcome::Refreshed { chunks, .. } => {
            format!("re-embedded {path} ({chunks} chunks, for the current embedding model)")
        }
    }
}

/// [`describe`], and how many pages OCR read and which were skipped (when some
/// were): "imported  scan.pdf (12 chunks); 3 pages read by OCR, 1 skipped (page 4: …)".
pub fn describe_read(outcome: &IngestOutcome, pages_read: &PagesRead, path: &str) -> String {
    let line = describe(outcome, path);
    match pages_read.line() {
        Some(pages) if !matches!(outcome, IngestOutcome::Unchanged { .. }) => {
            format!("{line}; {pages}")
        }
        _ => line,
    }
}

/// Says which stored chunks were embedded otherwise than the embedding model embeds
/// now: of another dimension (left out of retrieval), or of the same dimension by
/// another model or document prefix (compared, although not alike).
async fn report_other_embeddings(pool: &DbPool, current: usize, embedder: &str) {
    let Ok(mut conn) = pool.get().await else {
        return;
    };
    let Ok(dimensions) = chunks::dimensions(&mut conn, embedder).await else {
        return;
    };
    for counted in dimensions.iter().filter(|d| !d.has(current)) {
        println!(
            "note: {} chunks were embedded with {} dimensions, but the embedding model gives {current}: they are left out of retrieval until they are embedded anew: run `bor reembed`",
            counted.chunks, counted.dimension
        );
    }
    if let Some(count) = dimensions
        .iter()
        .find(|d| d.has(current))
        .map(|d| d.other_embedder)
        && count > 0
    {
        println!(
            "note: {count} chunks were embedded by another model or with another document prefix than {embedder} now: run `bor reembed`"
        );
    }
}
