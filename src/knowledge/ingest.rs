//! Storing a document: cut it into chunks, embed them in batches through the LlmActor
//! (so the retry policy applies), and write the document and its chunks in one
//! transaction. Shared by `bor import` and `POST /api/admin/documents`.
//!
//! Idempotent by content: a text already stored (same SHA-256) is not stored again,
//! unless its chunks were embedded otherwise than the embedding model now embeds (another
//! dimension, or another model or document prefix recorded with them), in which case
//! they are embedded anew. A new text from a `source` already
//! stored (a changed file) replaces the older version in the same transaction.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use bor_actors::llm::{EmbedPurpose, LlmClient, LlmError};
use diesel_async::AsyncConnection;
use futures_util::{FutureExt, StreamExt};

use super::chunking::{ChunkingSettings, HeadingPaths, TextFormat, chunk_text_cut_at};
use super::formats::PageSource;
use crate::db::chunks::{self, NewChunk};
use crate::db::collections;
use crate::db::documents::{self, Adder, NewDocument, content_sha256};
use crate::db::{DbError, DbPool, storable_text};

/// Chunks embedded per request to the LLM server.
pub const EMBED_BATCH: usize = 32;
/// Documents an import prepares (chunks and embeds) at once, before storing them in
/// order: the embedding server reads the texts of some while bor stores another (SciFact
/// with the local embedder: 100 chunks/s one at a time, 127 four at a time;
/// bench/RESULTS.md).
pub const DOCUMENTS_AT_ONCE: usize = 4;

/// The media type of plain text; every other kind is read as Markdown-shaped text.
pub const PLAIN_TEXT: &str = "text/plain";
/// The media type of Markdown, and of documents posted as JSON.
pub const MARKDOWN: &str = "text/markdown";

/// A text to store.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SourceDocument {
    pub title: String,
    /// Where it came from (a file path); a new text from the same source replaces the old.
    pub source: Option<String>,
    /// Markdown-shaped for every kind but plain text (the format readers' output).
    pub content: String,
    /// The kind it was read from, as a media type (`text/markdown`, `application/pdf`, …).
    pub content_type: String,
    /// For a PDF or an image, the byte offset in `content` where each page begins; else
    /// empty.
    pub page_starts: Vec<usize>,
    /// For a PDF or an image, where the text of each page came from (its text layer,
    /// OCR, or skipped with the reason); else empty.
    pub pages: Vec<PageSource>,
    /// The collection it goes to; `None`: `default` (made again when it was deleted).
    pub collection_id: Option<i64>,
    /// Who or what added it (a command unless told otherwise).
    pub added_by: Adder,
}

impl SourceDocument {
    /// A Markdown text without pages.
    pub fn markdown(title: String, source: Option<String>, content: String) -> SourceDocument {
        SourceDocument {
            title,
            source,
            content,
            content_type: MARKDOWN.to_owned(),
            page_starts: Vec::new(),
            pages: Vec::new(),
            collection_id: None,
            added_by: Adder::default(),
        }
    }

    /// The same document, to go to the collection `collection_id`.
    pub fn in_collection(mut self, collection_id: Option<i64>) -> SourceDocument {
        self.collection_id = collection_id;
        self
    }

    /// The same document, added by `adder`.
    pub fn added_by(mut self, adder: Adder) -> SourceDocument {
        self.added_by = adder;
        self
    }

    /// How many of its pages OCR read, and which were skipped.
    pub fn pages_read(&self) -> PagesRead {
        let mut read = PagesRead::default();
        for (page, source) in (1..).zip(&self.pages) {
            match source {
                PageSource::Text => {}
                PageSource::Ocr { .. } => read.ocr += 1,
                PageSource::Skipped { reason } => read.skipped.push((page, reason.clone())),
            }
        }
        read
    }

    /// Where the pages read by OCR begin in `content`, and the pages after them: a
    /// chunk starts at each, so that a passage is either OCR's reading of one page or
    /// text-layer text, and says its page.
    fn ocr_page_starts(&self) -> Vec<usize> {
        let mut cuts = Vec::new();
        for (index, source) in self.pages.iter().enumerate() {
            if matches!(source, PageSource::Ocr { .. }) {
                cuts.extend(self.page_starts.get(index).copied());
                cuts.extend(self.page_starts.get(index + 1).copied());
            }
        }
        cuts.sort_unstable();
        cuts.dedup();
        cuts
    }

    /// How its text is cut: plain text by paragraphs, the rest at headings too.
    pub fn text_format(&self) -> TextFormat {
        if self.content_type == PLAIN_TEXT {
            TextFormat::Plain
        } else {
            TextFormat::Markdown
        }
    }

    /// The page (from 1) holding byte `offset` of the content; `None` without pages.
    fn page_at(&self, offset: usize) -> Option<i32> {
        if self.page_starts.is_empty() {
            return None;
        }
        let started = self.page_starts.partition_point(|&start| start <= offset);
        i32::try_from(started.max(1)).ok()
    }

    /// The document as PostgreSQL can store it: without U+0000 in any text.
    fn storable(&self) -> std::borrow::Cow<'_, SourceDocument> {
        let title = storable_text(&self.title);
        let content = storable_text(&self.content);
        let source = self.source.as_deref().map(storable_text);
        let clean =
            |text: &std::borrow::Cow<'_, str>| matches!(text, std::borrow::Cow::Borrowed(_));
        if clean(&title) && clean(&content) && source.as_ref().is_none_or(clean) {
            return std::borrow::Cow::Borrowed(self);
        }
        // Removing U+0000 moves later pages' starts back by the characters before them.
        let nuls: Vec<usize> = self.content.match_indices('\0').map(|(at, _)| at).collect();
        let removed_before = |offset: usize| nuls.partition_point(|&at| at < offset);
        std::borrow::Cow::Owned(SourceDocument {
            title: title.into_owned(),
            source: source.map(std::borrow::Cow::into_owned),
            content: content.into_owned(),
            content_type: self.content_type.clone(),
            page_starts: self
                .page_starts
                .iter()
                .map(|&start| start - removed_before(start))
                .collect(),
            pages: self.pages.clone(),
            collection_id: self.collection_id,
            added_by: self.added_by,
        })
    }
}

/// How the pages of a document were read, as an import and an upload say it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PagesRead {
    /// Pages read by OCR.
    pub ocr: usize,
    /// Pages not read (from 1), with the reason.
    pub skipped: Vec<(u32, String)>,
}

impl PagesRead {
    /// "3 pages read by OCR, 2 skipped (pages 4–5: …)"; `None` when every page was read
    /// from its text layer.
    pub fn line(&self) -> Option<String> {
        if self.ocr == 0 && self.skipped.is_empty() {
            return None;
        }
        let pages = |count: usize| if count == 1 { "page" } else { "pages" };
        let mut line = format!("{} {} read by OCR", self.ocr, pages(self.ocr));
        if !self.skipped.is_empty() {
            // Runs of consecutive pages skipped for one reason: "pages 201–450: …".
            let mut runs: Vec<(u32, u32, &str)> = Vec::new();
            for (page, reason) in &self.skipped {
                match runs.last_mut() {
                    Some((_, last, run_reason)) if *last + 1 == *page && *run_reason == reason => {
                        *last = *page;
                    }
                    _ => runs.push((*page, *page, reason)),
                }
            }
            let runs: Vec<String> = runs
                .iter()
                .map(|(first, last, reason)| match first == last {
                    true => format!("page {first}: {reason}"),
                    false => format!("pages {first}–{last}: {reason}"),
                })
                .collect();
            line.push_str(&format!(
                ", {} skipped ({})",
                self.skipped.len(),
                runs.join("; ")
            ));
        }
        Some(line)
    }
}

/// What storing a document did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum IngestOutcome {
    Created {
        id: i64,
        chunks: usize,
    },
    /// The same content was already stored (with `chunks` chunks); nothing changed.
    Unchanged {
        id: i64,
        chunks: usize,
    },
    /// The same content was stored with embeddings made otherwise (another dimension,
    /// model or document prefix): its chunks were embedded anew (same document id).
    Refreshed {
        id: i64,
        chunks: usize,
    },
    /// A new version of `source`: the documents `replaced` are gone.
    Replaced {
        id: i64,
        chunks: usize,
        replaced: Vec<i64>,
    },
}

impl IngestOutcome {
    pub fn id(&self) -> i64 {
        match self {
            Self::Created { id, .. }
            | Self::Unchanged { id, .. }
            | Self::Refreshed { id, .. }
            | Self::Replaced { id, .. } => *id,
        }
    }

    /// The document's chunks now.
    pub fn chunks(&self) -> usize {
        match self {
            Self::Created { chunks, .. }
            | Self::Unchanged { chunks, .. }
            | Self::Refreshed { chunks, .. }
            | Self::Replaced { chunks, .. } => *chunks,
        }
    }

    /// Documents whose chunks were written or deleted.
    pub fn changed_documents(&self) -> Vec<i64> {
        match self {
            Self::Created { id, .. } | Self::Refreshed { id, .. } => vec![*id],
            Self::Unchanged { .. } => Vec::new(),
            Self::Replaced { id, replaced, .. } => {
                let mut ids = replaced.clone();
                ids.push(*id);
                ids
            }
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum IngestError {
    #[error("the document is empty")]
    Empty,
    /// Written with its cause by `error_chain`, once.
    #[error("embedding failed")]
    Embedding(#[from] LlmError),
    #[error("the embedding server returned unusable vectors: {0}")]
    BadEmbeddings(String),
    #[error(transparent)]
    Database(#[from] DbError),
}

/// Hears how an ingest goes (the progress bar of `bor import`); every method may be
/// left out.
pub trait IngestProgress: Sync {
    /// `chunks` chunks are about to be embedded.
    fn chunked(&self, _chunks: usize) {}
    /// `chunks` more chunks were embedded.
    fn embedded(&self, _chunks: usize) {}
    /// An embedding request failed and waits for retry `attempt` of `max`.
    fn retrying(&self, _attempt: u32, _max: u32) {}
}

/// Progress nobody watches.
pub struct Unobserved;

impl IngestProgress for Unobserved {}

/// The dimension of the embedding model's vectors, once a response has shown it.
#[derive(Debug, Default)]
pub struct ModelDimension(AtomicUsize);

impl ModelDimension {
    pub fn get(&self) -> Option<usize> {
        Some(self.0.load(Ordering::Relaxed)).filter(|&d| d > 0)
    }

    /// Records the dimension seen; says whether it differs from the one known before.
    /// An empty vector shows nothing.
    pub fn observe(&self, dimension: usize) -> bool {
        if dimension == 0 {
            return false;
        }
        let before = self.0.swap(dimension, Ordering::Relaxed);
        before != 0 && before != dimension
    }
}

/// Chunks, embeds and stores documents.
#[derive(Clone)]
pub struct Ingestor {
    pool: DbPool,
    llm: LlmClient,
    chunking: ChunkingSettings,
    model_dimension: Arc<ModelDimension>,
    /// What makes the vectors now ([`chunks::embedder`]), recorded with each chunk.
    embedder: String,
}

impl Ingestor {
    pub fn new(
        pool: DbPool,
        llm: LlmClient,
        chunking: ChunkingSettings,
        model_dimension: Arc<ModelDimension>,
    ) -> Ingestor {
        let embedder = chunks::embedder_of(llm.settings());
        Ingestor {
            pool,
            llm,
            chunking,
            model_dimension,
            embedder,
        }
    }

    /// What makes the vectors now, as each chunk records it.
    pub fn embedder(&self) -> &str {
        &self.embedder
    }

    /// The database it stores into.
    pub fn pool(&self) -> &DbPool {
        &self.pool
    }

    /// Stores `document` (see the module documentation): [`Ingestor::prepare`], then
    /// [`Ingestor::commit`]. Must run inside an actix system (the embeddings go through
    /// an LlmActor).
    pub async fn ingest(
        &self,
        document: &SourceDocument,
        progress: &dyn IngestProgress,
    ) -> Result<IngestOutcome, IngestError> {
        let prepared = self.prepare(document, progress).await?;
        self.commit(prepared).await
    }

    /// Finds out what storing `document` takes, and chunks and embeds it when that is
    /// needed; nothing is written. Several documents can be prepared at once and
    /// committed one after the other, in the order they should be numbered.
    pub async fn prepare(
        &self,
        document: &SourceDocument,
        progress: &dyn IngestProgress,
    ) -> Result<PreparedDocument, IngestError> {
        let storable = document.storable();
        let document = storable.as_ref();
        if document.content.trim().is_empty() {
            return Err(IngestError::Empty);
        }
        let digest = content_sha256(&document.content);
        let (collection_id, existing) = {
            let mut conn = self.pool.get().await?;
            let collection_id = collections::resolve(&mut conn, document.collection_id).await?;
            let existing = documents::find_by_sha256(&mut conn, &digest, collection_id).await?;
            (collection_id, existing)
        };
        if let Some(id) = existing {
            let dimension = self.model_dimension(progress).await?;
            let mut conn = self.pool.get().await?;
            if let Some(chunks) =
                chunks::all_embedded_alike(&mut conn, id, dimension, &self.embedder).await?
            {
                return Ok(PreparedDocument(Plan::Unchanged { id, chunks }));
            }
            drop(conn);
            let chunks = self.chunk_and_embed(document, progress).await?;
            return Ok(PreparedDocument(Plan::Refresh { id, chunks }));
        }
        let chunks = self.chunk_and_embed(document, progress).await?;
        Ok(PreparedDocument(Plan::New {
            document: Box::new(storable.into_owned()),
            digest,
            collection_id,
            chunks,
        }))
    }

    /// Stores what [`Ingestor::prepare`] made ready.
    pub async fn commit(&self, prepared: PreparedDocument) -> Result<IngestOutcome, IngestError> {
        let (document, digest, collection_id, prepared) = match prepared.0 {
            Plan::Unchanged { id, chunks } => return Ok(IngestOutcome::Unchanged { id, chunks }),
            Plan::Refresh {
                id,
                chunks: prepared,
            } => {
                let mut conn = self.pool.get().await?;
                conn.transaction::<_, DbError, _>(async |conn| {
                    chunks::delete_chunks_of(conn, id).await?;
                    chunks::insert_chunks(conn, &new_chunks(id, &prepared, &self.embedder)).await
                })
                .await?;
                return Ok(IngestOutcome::Refreshed {
                    id,
                    chunks: prepared.len(),
                });
            }
            Plan::New {
                document,
                digest,
                collection_id,
                chunks,
            } => (document, digest, collection_id, chunks),
        };
        let mut conn = self.pool.get().await?;
        let stored = conn
            .transaction::<_, DbError, _>(async |conn| {
                let replaced = match &document.source {
                    Some(source) => documents::ids_from_source(conn, source, collection_id).await?,
                    None => Vec::new(),
                };
                for old in &replaced {
                    documents::delete_document(conn, *old).await?;
                }
                let new = NewDocument::of_kind(
                    &document.title,
                    document.source.as_deref(),
                    &document.content,
                    &document.content_type,
                )
                .with_pages(&document.page_starts)
                .with_page_sources(&document.pages)
                .in_collection(collection_id)
                .added_by(document.added_by);
                let id = documents::insert_document(conn, &new).await?;
                chunks::insert_chunks(conn, &new_chunks(id, &prepared, &self.embedder)).await?;
                Ok((id, replaced))
            })
            .await;
        let chunks = prepared.len();
        match stored {
            Ok((id, replaced)) if replaced.is_empty() => Ok(IngestOutcome::Created { id, chunks }),
            Ok((id, replaced)) => Ok(IngestOutcome::Replaced {
                id,
                chunks,
                replaced,
            }),
            // Stored by someone else meanwhile.
            Err(error) if is_unique_violation(&error) => {
                match documents::find_by_sha256(&mut conn, &digest, collection_id).await? {
                    Some(id) => Ok(IngestOutcome::Unchanged { id, chunks }),
                    None => Err(error.into()),
                }
            }
            Err(error) => Err(error.into()),
        }
    }

    /// The embedding model's dimension: known from an earlier response, else asked.
    pub async fn model_dimension(
        &self,
        progress: &dyn IngestProgress,
    ) -> Result<usize, IngestError> {
        if let Some(dimension) = self.model_dimension.get() {
            return Ok(dimension);
        }
        let vectors = self
            .embed(vec!["dimension probe".to_owned()], progress)
            .await?;
        Ok(vectors.first().map_or(0, Vec::len))
    }

    async fn chunk_and_embed(
        &self,
        document: &SourceDocument,
        progress: &dyn IngestProgress,
    ) -> Result<Vec<PreparedChunk>, IngestError> {
        let format = document.text_format();
        let headings = HeadingPaths::of(&document.content, format);
        let cuts = document.ocr_page_starts();
        let mut prepared: Vec<PreparedChunk> =
            chunk_text_cut_at(&document.content, format, self.chunking, &cuts)
                .into_iter()
                .map(|chunk| PreparedChunk {
                    text: chunk.text.to_owned(),
                    heading: headings.at(chunk.start).to_owned(),
                    page: document.page_at(chunk.start),
                    embedding: Vec::new(),
                })
                .collect();
        progress.chunked(prepared.len());
        for batch in prepared.chunks_mut(EMBED_BATCH) {
            let texts = batch.iter().map(|chunk| chunk.text.clone()).collect();
            let vectors = self.embed(texts, progress).await?;
            for (chunk, vector) in batch.iter_mut().zip(vectors) {
                chunk.embedding = vector;
            }
            progress.embedded(batch.len());
        }
        Ok(prepared)
    }

    /// Embeds one batch and checks the vectors: one per text, all of one dimension,
    /// finite and not zero.
    async fn embed(
        &self,
        inputs: Vec<String>,
        progress: &dyn IngestProgress,
    ) -> Result<Vec<Vec<f32>>, IngestError> {
        let sent = inputs.len();
        let vectors = self
            .llm
            .embed(EmbedPurpose::Document, inputs, |attempt, max| {
                progress.retrying(attempt, max)
            })
            .await?;
        if vectors.len() != sent {
            return Err(IngestError::BadEmbeddings(format!(
                "{} vectors for {sent} texts",
                vectors.len()
            )));
        }
        let dimension = vectors.first().map_or(0, Vec::len);
        if dimension == 0 || vectors.iter().any(|v| v.len() != dimension) {
            return Err(IngestError::BadEmbeddings(
                "the vectors are empty or of different dimensions".to_owned(),
            ));
        }
        if vectors
            .iter()
            .any(|v| v.iter().any(|x| !x.is_finite()) || v.iter().all(|x| *x == 0.0))
        {
            return Err(IngestError::BadEmbeddings(
                "a vector is zero or not finite".to_owned(),
            ));
        }
        if self.model_dimension.observe(dimension) {
            tracing::warn!(
                dimension,
                "the embedding model now gives vectors of another dimension"
            );
        }
        Ok(vectors)
    }
}

/// A document made ready to store by [`Ingestor::prepare`].
pub struct PreparedDocument(Plan);

enum Plan {
    /// Stored already, with vectors of the current model.
    Unchanged { id: i64, chunks: usize },
    /// Stored already, with vectors of another model: its chunks embedded anew.
    Refresh { id: i64, chunks: Vec<PreparedChunk> },
    /// Not stored yet.
    New {
        /// Boxed: far larger than the other variants.
        document: Box<SourceDocument>,
        digest: String,
        collection_id: i64,
        chunks: Vec<PreparedChunk>,
    },
}

/// A chunk cut and embedded, not yet stored.
struct PreparedChunk {
    text: String,
    heading: String,
    page: Option<i32>,
    embedding: Vec<f32>,
}

fn new_chunks<'a>(
    document_id: i64,
    prepared: &'a [PreparedChunk],
    embedder: &'a str,
) -> Vec<NewChunk<'a>> {
    prepared
        .iter()
        .zip(0..)
        .map(|(chunk, ord)| NewChunk {
            document_id,
            ord,
            text: &chunk.text,
            embedding: &chunk.embedding,
            heading: &chunk.heading,
            page: chunk.page,
            embedder: Some(embedder),
        })
        .collect()
}

fn is_unique_violation(error: &DbError) -> bool {
    matches!(
        error,
        DbError::Query(diesel::result::Error::DatabaseError(
            diesel::result::DatabaseErrorKind::UniqueViolation,
            _
        ))
    )
}

/// Runs `work` for each item, [`DOCUMENTS_AT_ONCE`] at a time, and yields the results in
/// the items' order. Each `work` gets its item's [`CommitTurn`]: what it does after
/// [`CommitTurn::wait`] runs after every earlier item's `work` has ended, so documents
/// prepared together are still stored, and numbered, in order.
///
/// The commits run inside the stream's futures, not in the loop that reads the stream:
/// a future left unpolled while the loop awaits could hold the pool's last connection.
pub fn in_order<T, F, Fut>(
    items: impl IntoIterator<Item = T>,
    mut work: F,
) -> impl futures_util::Stream<Item = Fut::Output>
where
    F: FnMut(T, CommitTurn) -> Fut,
    Fut: Future,
{
    let mut earlier_ended: Option<EarlierEnded> = None;
    futures_util::stream::iter(items)
        .map(move |item| {
            let (ended, next) = tokio::sync::oneshot::channel::<()>();
            let earlier = earlier_ended.replace(next.shared());
            let work = work(
                item,
                CommitTurn {
                    earlier: earlier.clone(),
                },
            );
            async move {
                let output = work.await;
                // This item ends when it and every earlier one have: a work that never
                // waited (a file skipped) must not let the next one go first.
                if let Some(earlier) = earlier {
                    let _ = earlier.await;
                }
                drop(ended);
                output
            }
        })
        .buffered(DOCUMENTS_AT_ONCE)
}

/// Resolves once an item of [`in_order`], and every one before it, has ended (its sender
/// dropped).
type EarlierEnded = futures_util::future::Shared<tokio::sync::oneshot::Receiver<()>>;

/// An item's place in the order of [`in_order`]; the default one has nothing before it.
#[derive(Default)]
pub struct CommitTurn {
    earlier: Option<EarlierEnded>,
}

impl CommitTurn {
    /// Waits until every earlier item's work has ended (or was dropped).
    pub async fn wait(self) {
        if let Some(earlier) = self.earlier {
            // An error only says the earlier work ended without a word: it ended.
            let _ = earlier.await;
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Mutex;

    use futures_util::StreamExt;

    use super::{DOCUMENTS_AT_ONCE, in_order};

    #[tokio::test]
    async fn in_order_runs_what_follows_the_wait_in_the_items_order() {
        let events = Mutex::new(Vec::new());
        let log = |event: (&'static str, usize)| events.lock().expect("not poisoned").push(event);
        let count = 3 * DOCUMENTS_AT_ONCE;
        let results: Vec<usize> = in_order(0..count, |item, turn| async move {
            // Later items get ready sooner.
            for _ in 0..(count - item) {
                tokio::task::yield_now().await;
            }
            log(("ready", item));
            turn.wait().await;
            log(("stored", item));
            item
        })
        .collect()
        .await;

        assert_eq!(results, (0..count).collect::<Vec<_>>());
        let events = events.into_inner().expect("not poisoned");
        let stored: Vec<usize> = events
            .iter()
            .filter(|(what, _)| *what == "stored")
            .map(|(_, item)| *item)
            .collect();
        assert_eq!(stored, (0..count).collect::<Vec<_>>());
        // Several were prepared at once: item 1 was ready before item 0 was stored.
        let at = |event| events.iter().position(|e| *e == event);
        assert!(at(("ready", 1)) < at(("stored", 0)), "{events:?}");
        // And never more than DOCUMENTS_AT_ONCE: the item that many places later was not
        // ready before item 0 was stored.
        assert!(
            at(("ready", DOCUMENTS_AT_ONCE)) > at(("stored", 0)),
            "{events:?}"
        );
    }
}
