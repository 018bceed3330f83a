//! Re-ranking outside a turn (`POST /api/search`, `bor eval`): the scores of the fused
//! candidates from the re-ranking server, within `BOR_RERANK_TIMEOUT`. A turn asks its
//! own LLM actor under its own timer (`bor_actors::turn`); both read the candidates
//! with `bor_actors::rerank::passage_of`.

use std::time::Duration;

use bor_actors::knowledge::ChunkHit;
use bor_actors::llm::{LlmClient, LlmError};
use bor_actors::rerank::{RerankSettings, passage_of};

/// Why the fused order stands.
#[derive(Debug, thiserror::Error)]
pub enum RerankFailure {
    #[error("the re-ranking server failed: {0}")]
    Failed(#[from] LlmError),
    #[error("the re-ranking server did not answer within {0:?}")]
    TimedOut(Duration),
}

/// One score per hit, in order.
pub async fn rerank_scores(
    llm: &LlmClient,
    settings: RerankSettings,
    query: &str,
    hits: &[ChunkHit],
) -> Result<Vec<f32>, RerankFailure> {
    let documents = hits.iter().map(passage_of).collect();
    match tokio::time::timeout(settings.timeout, llm.rerank(query.to_owned(), documents)).await {
        Ok(scores) => Ok(scores?),
        Err(_) => Err(RerankFailure::TimedOut(settings.timeout)),
    }
}
