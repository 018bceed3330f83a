//! The knowledge base: documents and their chunks in PostgreSQL, a copy in memory kept
//! in step with them (vectors, texts and a full-text index: retrieval never waits on
//! the database), and the operations on both.
//!
//! [`KnowledgeService`] is what the rest of bor uses: the HTTP API and `bor import` to
//! add and delete documents; the turns through [`ScopedKnowledge`], the `KnowledgeBase`
//! (hybrid retrieval, reading and listing documents) of the collections its asker may
//! read.

pub mod chunking;
pub mod full_text;
/// The format readers (PDF, HTML, Word, Markdown, plain text): the `bor-formats` crate.
pub use bor_formats as formats;
mod fusion;
pub mod index;
pub mod ingest;
mod live_index;
pub mod notify;
pub mod rerank;
mod retrieval;
pub mod search;
mod stop_words;
mod store;
pub mod summaries;
pub mod vision;

use std::sync::Arc;

use bor_actors::knowledge::{
    DocumentRef, DocumentText, KnowledgeBase, KnowledgeError, READ_DOCUMENT_MAX_CHARS, Retrieval,
};
use bor_actors::llm::LlmClient;
use bor_actors::text::prefix_chars;
use diesel::prelude::*;
use diesel_async::RunQueryDsl;
use futures_util::future::BoxFuture;

pub use index::IndexStats;
use ingest::{
    IngestError, IngestOutcome, Ingestor, ModelDimension, PreparedDocument, SourceDocument,
    Unobserved,
};
pub use live_index::LiveIndex;
pub use retrieval::{RANKED_PER_SIGNAL, RankedChunk, Rankings};

use crate::config::{Config, OcrMode};
use crate::db::documents::{self, DocumentSummary};
use crate::db::schema::documents as documents_table;
use crate::db::{DbError, DbPool};
use index::CollectionFilter;

/// The bounds of reading a file, with OCR as configured: the one place a file's
/// reader is set up (an upload sets its own input bound on them).
pub fn read_limits(config: &Config) -> formats::Limits {
    let engine = match config.ocr {
        OcrMode::Tesseract => formats::OcrEngine::Tesseract,
        OcrMode::Vision => formats::OcrEngine::Vision(std::sync::Arc::new(
            vision::VisionModel::from_config(config),
        )),
        OcrMode::Off => formats::OcrEngine::Off,
    };
    formats::Limits {
        ocr: formats::Ocr {
            engine,
            languages: config.ocr_languages.clone(),
            min_chars: config.ocr_min_chars,
            max_pages: config.ocr_max_pages,
            document_timeout: config.ocr_document_timeout,
            dpi: config.ocr_dpi,
            ..formats::Ocr::default()
        },
        ..formats::Limits::default()
    }
}

/// The knowledge base of a running service; cheap to clone.
#[derive(Clone)]
pub struct KnowledgeService {
    pool: DbPool,
    index: Arc<LiveIndex>,
    ingestor: Ingestor,
    model_dimension: Arc<ModelDimension>,
    /// Told of every document stored, when summaries are on.
    summaries: Option<summaries::Summaries>,
}

impl KnowledgeService {
    /// Loads the vector index from the database.
    pub async fn load(
        pool: DbPool,
        llm: LlmClient,
        chunking: chunking::ChunkingSettings,
    ) -> Result<KnowledgeService, DbError> {
        let model_dimension = Arc::new(ModelDimension::default());
        let index = Arc::new(LiveIndex::load(pool.clone()).await?);
        Ok(KnowledgeService {
            ingestor: Ingestor::new(pool.clone(), llm, chunking, Arc::clone(&model_dimension)),
            pool,
            index,
            model_dimension,
            summaries: None,
        })
    }

    /// Summarises documents in the background (`BOR_SUMMARIES`), with `llm`.
    pub fn with_summaries(mut self, llm: LlmClient) -> KnowledgeService {
        self.summaries = Some(summaries::Summaries::start(self.pool.clone(), llm));
        self
    }

    /// The database it stores into.
    pub fn pool(&self) -> &DbPool {
        &self.pool
    }

    pub fn index(&self) -> &Arc<LiveIndex> {
        &self.index
    }

    /// Stores a document (see `ingest.rs`) and brings the index up to date at once.
    pub async fn add_document(
        &self,
        document: &SourceDocument,
    ) -> Result<IngestOutcome, IngestError> {
        let prepared = self.prepare_document(document).await?;
        self.commit_document(prepared).await
    }

    /// [`Ingestor::prepare`]: chunked and embedded, nothing written yet.
    pub async fn prepare_document(
        &self,
        document: &SourceDocument,
    ) -> Result<PreparedDocument, IngestError> {
        self.ingestor.prepare(document, &Unobserved).await
    }

    /// [`Ingestor::commit`], then the index brought up to date.
    pub async fn commit_document(
        &self,
        prepared: PreparedDocument,
    ) -> Result<IngestOutcome, IngestError> {
        let outcome = self.ingestor.commit(prepared).await?;
        if let Some(dimension) = self.model_dimension.get() {
            self.index.ensure_dimension(dimension).await?;
        }
        self.index
            .refresh_documents(&outcome.changed_documents())
            .await?;
        if let Some(summaries) = &self.summaries {
            summaries.wake();
        }
        Ok(outcome)
    }

    /// Deletes a document; false when there was none.
    pub async fn delete_document(&self, id: i64) -> Result<bool, DbError> {
        let deleted = {
            let mut conn = self.pool.get().await?;
            documents::delete_document(&mut conn, id).await?
        };
        if deleted {
            self.index.refresh_documents(&[id]).await?;
        }
        Ok(deleted)
    }

    /// The documents of the collections of `scope` (`None`: of all), oldest first.
    pub async fn documents(
        &self,
        scope: Option<&CollectionFilter>,
    ) -> Result<Vec<DocumentSummary>, DbError> {
        let mut conn = self.pool.get().await?;
        documents::list_documents(&mut conn, scope.map(CollectionFilter::ids)).await
    }

    /// A document with its chunks in order; `None` when it is not stored or not in a
    /// collection that `can_read` says yes to.
    pub async fn document(
        &self,
        id: i64,
        can_read: impl Fn(i64) -> bool,
    ) -> Result<Option<(documents::Document, Vec<crate::db::chunks::Chunk>)>, DbError> {
        let mut conn = self.pool.get().await?;
        let Some(document) = documents::find_document(&mut conn, id).await? else {
            return Ok(None);
        };
        if !can_read(document.collection_id) {
            return Ok(None);
        }
        let chunks = crate::db::chunks::chunks_of(&mut conn, id).await?;
        Ok(Some((document, chunks)))
    }

    /// The chunk `chunk_id` with up to `span` chunks before and after it, and its
    /// document; `None` when it is not stored or its document is not in a collection
    /// that `can_read` says yes to (the same answer: an unreadable passage is absent).
    pub async fn passage(
        &self,
        chunk_id: i64,
        span: i32,
        can_read: impl Fn(i64) -> bool,
    ) -> Result<Option<(documents::Document, Vec<crate::db::chunks::Chunk>)>, DbError> {
        let mut conn = self.pool.get().await?;
        let chunks = crate::db::chunks::neighbourhood(&mut conn, chunk_id, span).await?;
        // `first()` of a slice, not diesel's query method of the same name.
        let Some(document_id) = chunks.iter().map(|chunk| chunk.document_id).next() else {
            return Ok(None);
        };
        let document = documents::find_document(&mut conn, document_id).await?;
        Ok(document
            .filter(|document| can_read(document.collection_id))
            .map(|document| (document, chunks)))
    }

    /// The collection of the document `id`; `None` when it is not stored.
    pub async fn collection_of(&self, id: i64) -> Result<Option<i64>, DbError> {
        let mut conn = self.pool.get().await?;
        Ok(documents_table::table
            .find(id)
            .select(documents_table::collection_id)
            .first(&mut conn)
            .await
            .optional()?)
    }

    /// Reloads the whole index from the database (rows written by other means).
    pub async fn reindex(&self) -> Result<IndexStats, DbError> {
        self.index.reload(self.model_dimension.get()).await
    }

    /// The retrieval a turn does for `query` among the collections of `scope`, its
    /// fused top `top_k` as hits, with each signal's ranking of its best `per_signal`
    /// chunks (`POST /api/search`, `bor eval`).
    pub async fn search(
        &self,
        query: String,
        embedding: Vec<f32>,
        per_signal: usize,
        top_k: usize,
        scope: Option<CollectionFilter>,
    ) -> Result<(Rankings, Retrieval), DbError> {
        self.model_dimension.observe(embedding.len());
        self.index.ensure_dimension(embedding.len()).await?;
        Ok(self
            .index
            .rank(query, embedding, per_signal, top_k, scope)
            .await)
    }

    /// The knowledge base as a turn sees it: the collections of `scope` only (`None`:
    /// all).
    pub fn scoped(&self, scope: Option<CollectionFilter>) -> ScopedKnowledge {
        ScopedKnowledge {
            service: self.clone(),
            scope: scope.map(Arc::new),
        }
    }
}

/// The knowledge base of one turn: retrieval, the document tools and the list see the
/// documents of its collections only; another document is unknown, as an absent one.
#[derive(Clone)]
pub struct ScopedKnowledge {
    service: KnowledgeService,
    scope: Option<Arc<CollectionFilter>>,
}

impl ScopedKnowledge {
    fn sees(&self, collection_id: i64) -> bool {
        self.scope
            .as_ref()
            .is_none_or(|scope| scope.contains(collection_id))
    }

    async fn retrieve_now(
        &self,
        query: String,
        embedding: Vec<f32>,
        top_k: usize,
    ) -> Result<Retrieval, DbError> {
        let service = &self.service;
        service.model_dimension.observe(embedding.len());
        service.index.ensure_dimension(embedding.len()).await?;
        let scope = self.scope.as_deref().cloned();
        Ok(service.index.retrieve(query, embedding, top_k, scope).await)
    }
}

/// A database failure as the turns see it, its cause kept.
fn knowledge_error(error: DbError) -> KnowledgeError {
    if error.is_unavailable() {
        KnowledgeError::Unavailable(Box::new(error))
    } else {
        KnowledgeError::Failed(Box::new(error))
    }
}

impl KnowledgeBase for ScopedKnowledge {
    fn retrieve(
        &self,
        query: String,
        embedding: Vec<f32>,
        top_k: usize,
    ) -> BoxFuture<'static, Result<Retrieval, KnowledgeError>> {
        let this = self.clone();
        Box::pin(async move {
            this.retrieve_now(query, embedding, top_k)
                .await
                .map_err(knowledge_error)
        })
    }

    fn read_document(
        &self,
        document_id: i64,
    ) -> BoxFuture<'static, Result<Option<DocumentText>, KnowledgeError>> {
        let this = self.clone();
        Box::pin(async move {
            let mut conn = this.service.pool.get().await.map_err(knowledge_error)?;
            let found: Option<(i64, String, String, i64)> = documents_table::table
                .find(document_id)
                .select((
                    documents_table::id,
                    documents_table::title,
                    documents_table::content,
                    documents_table::collection_id,
                ))
                .first(&mut conn)
                .await
                .optional()
                .map_err(|err| knowledge_error(err.into()))?;
            let found = found.filter(|(.., collection_id)| this.sees(*collection_id));
            Ok(found.map(|(document_id, title, content, _)| {
                let text = prefix_chars(&content, READ_DOCUMENT_MAX_CHARS).to_owned();
                let truncated = text.len() < content.len();
                DocumentText {
                    document_id,
                    title,
                    text,
                    truncated,
                }
            }))
        })
    }

    fn list_documents(&self) -> BoxFuture<'static, Result<Vec<DocumentRef>, KnowledgeError>> {
        let this = self.clone();
        Box::pin(async move {
            let documents = this
                .service
                .documents(this.scope.as_deref())
                .await
                .map_err(knowledge_error)?;
            Ok(documents
                .into_iter()
                .map(|document| DocumentRef {
                    id: document.id,
                    title: document.title,
                    summary: document.summary,
                })
                .collect())
        })
    }
}
