//! What a turn needs from the knowledge base. The bor binary implements it over
//! PostgreSQL; the actors only see this trait.

use futures_util::future::BoxFuture;
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

/// One chunk found for a query. `score` is its cosine similarity to the query.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ChunkHit {
    pub document_id: i64,
    pub title: String,
    pub chunk_id: i64,
    pub score: f32,
    pub text: String,
    /// The headings above the chunk, outermost first (`""` when none).
    pub heading: String,
    /// The PDF page the chunk starts on.
    pub page: Option<u32>,
    pub signals: Signals,
}

/// Each ranking's score for a retrieved chunk: what put it where it is, kept with the
/// turn for whoever reviews it (docs/PROTOCOL.md, "Sources and citations").
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct Signals {
    /// Cosine similarity of the embeddings (also the hit's `score`).
    pub vector: Option<f32>,
    /// BM25 of the query's words; `null` when full text did not rank the chunk among
    /// its best.
    pub full_text: Option<f32>,
    /// The fused score, 0 to 1 (docs/RETRIEVAL.md, "Hybrid ranking").
    pub fused: Option<f32>,
    /// The re-ranking server's score, when it re-ranked the candidates.
    pub rerank: Option<f32>,
}

/// The outcome of retrieval for a question (docs/PROTOCOL.md, "Retrieval" and "Grounded
/// and deflected").
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Retrieval {
    /// Best first (by fused rank).
    pub hits: Vec<ChunkHit>,
    /// The best cosine similarity over the whole knowledge base; `None` when it is empty.
    pub best_cosine: Option<f32>,
    /// Full-text search of the question matched at least one chunk.
    pub text_match: bool,
}

impl Retrieval {
    /// Grounded when the best cosine reaches the threshold or full text found a match.
    pub fn is_grounded(&self, deflect_threshold: f32) -> bool {
        !self.hits.is_empty()
            && (self.text_match
                || self
                    .best_cosine
                    .is_some_and(|best| best >= deflect_threshold))
    }

    /// The best `top_k` hits in the order they are in.
    pub fn top(mut self, top_k: usize) -> Retrieval {
        self.hits.truncate(top_k);
        self
    }
}

/// A whole document, bounded for the model.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DocumentText {
    pub document_id: i64,
    pub title: String,
    pub text: String,
    /// The text was cut to the bound.
    pub truncated: bool,
}

/// A document's id, title and summary.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DocumentRef {
    pub id: i64,
    pub title: String,
    /// A few sentences from the chat model (`BOR_SUMMARIES`); `null` until written.
    pub summary: Option<String>,
}

/// A knowledge-base operation that failed, with its cause kept for the log (see
/// [`crate::error_chain`]). Its own text, without the cause, is what the model is told.
#[derive(Debug, thiserror::Error)]
pub enum KnowledgeError {
    /// The store could not be reached: the database is down or every connection busy.
    #[error("the knowledge base is unavailable")]
    Unavailable(#[source] Box<dyn std::error::Error + Send + Sync>),
    /// The store was reached but the operation failed.
    #[error("the knowledge base failed to answer")]
    Failed(#[source] Box<dyn std::error::Error + Send + Sync>),
}

/// The longest document text handed to the model by `read_document`.
pub const READ_DOCUMENT_MAX_CHARS: usize = 12_000;

pub trait KnowledgeBase: Send + Sync + 'static {
    /// The `top_k` chunks for `query`: cosine similarity of `embedding` fused with
    /// full-text rank of `query`.
    fn retrieve(
        &self,
        query: String,
        embedding: Vec<f32>,
        top_k: usize,
    ) -> BoxFuture<'static, Result<Retrieval, KnowledgeError>>;

    /// The document's text, cut at `READ_DOCUMENT_MAX_CHARS`; `None` when absent.
    fn read_document(
        &self,
        document_id: i64,
    ) -> BoxFuture<'static, Result<Option<DocumentText>, KnowledgeError>>;

    fn list_documents(&self) -> BoxFuture<'static, Result<Vec<DocumentRef>, KnowledgeError>>;
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hit(score: f32) -> ChunkHit {
        ChunkHit {
            document_id: 1,
            title: "t".into(),
            chunk_id: 1,
            score,
            text: "x".into(),
            heading: String::new(),
            page: None,
            signals: Default::default(),
        }
    }

    #[test]
    fn grounded_by_cosine_or_by_full_text() {
        let by_cosine = Retrieval {
            hits: vec![hit(0.5)],
            best_cosine: Some(0.5),
            text_match: false,
        };
        assert!(by_cosine.is_grounded(0.35));
        assert!(!by_cosine.is_grounded(0.6));
        let by_text = Retrieval {
            text_match: true,
            ..by_cosine.clone()
        };
        assert!(by_text.is_grounded(0.9));
        assert!(!Retrieval::default().is_grounded(-1.0));
    }
}
