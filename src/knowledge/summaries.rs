//! Summaries of documents (`BOR_SUMMARIES=true`): a few sentences from the chat model
//! for each document that has none, written in the background, one document at a time.
//! It never delays an import or a turn (they do not wait for it); a document whose
//! summary fails keeps `summary = NULL` and is tried again at the next start.

use std::collections::HashSet;
use std::sync::Arc;
use std::time::Duration;

use bor_actors::llm::{ChatMessage, LlmClient};
use bor_actors::record::shortened;
use bor_actors::scaffolding::{FilterEvent, ScaffoldingFilter};
use bor_actors::turn::TOOL_NAMES;
use tokio::sync::Notify;

use crate::db::documents;
use crate::db::{DbError, DbPool, storable_text};

/// The characters of a document the model reads to summarise it.
const SUMMARY_INPUT_CHARS: usize = 6_000;
/// The longest summary kept, in characters.
const SUMMARY_CHARS: usize = 600;
/// How often documents imported by another process are looked for.
const LOOK_AGAIN: Duration = Duration::from_secs(60);

const INSTRUCTION: &str = "Summarise the document the user gives in at most three short sentences: what it is about and what it can answer. Plain text only.";

/// Wakes the summariser when a document was stored.
#[derive(Clone, Default)]
pub struct Summaries {
    wake: Arc<Notify>,
}

impl Summaries {
    /// Starts the summariser on the current actix system.
    pub fn start(pool: DbPool, llm: LlmClient) -> Summaries {
        let summaries = Summaries::default();
        let wake = Arc::clone(&summaries.wake);
        actix_web::rt::spawn(async move { summarise_forever(pool, llm, wake).await });
        summaries
    }

    /// A document was stored: summarise it soon.
    pub fn wake(&self) {
        self.wake.notify_one();
    }
}

async fn summarise_forever(pool: DbPool, llm: LlmClient, wake: Arc<Notify>) {
    // Documents whose summary failed in this process: tried again at the next start.
    let mut failed: HashSet<i64> = HashSet::new();
    loop {
        match next_document(&pool, &failed).await {
            Ok(Some(document)) => {
                if let Err(error) = summarise(&pool, &llm, &document).await {
                    tracing::warn!(document_id = document.id, error = %bor_actors::error_chain(&error), "no summary for the document; tried again at the next start");
                    failed.insert(document.id);
                }
            }
            Ok(None) => {
                let _ = tokio::time::timeout(LOOK_AGAIN, wake.notified()).await;
            }
            Err(error) => {
                tracing::warn!(error = %bor_actors::error_chain(&error), "cannot look for documents to summarise");
                tokio::time::sleep(LOOK_AGAIN).await;
            }
        }
    }
}

async fn next_document(
    pool: &DbPool,
    failed: &HashSet<i64>,
) -> Result<Option<documents::Document>, DbError> {
    let mut conn = pool.get().await?;
    let skip: Vec<i64> = failed.iter().copied().collect();
    documents::next_without_summary(&mut conn, &skip).await
}

/// Errors of one summary, for the log.
#[derive(Debug, thiserror::Error)]
enum SummaryError {
    #[error("the chat model failed: {0}")]
    Model(#[from] bor_actors::llm::LlmError),
    #[error("the model's answer was empty")]
    Empty,
    #[error(transparent)]
    Database(#[from] DbError),
}

async fn summarise(
    pool: &DbPool,
    llm: &LlmClient,
    document: &documents::Document,
) -> Result<(), SummaryError> {
    let excerpt = bor_actors::text::prefix_chars(&document.content, SUMMARY_INPUT_CHARS);
    let answer = llm
        .complete(vec![
            ChatMessage::system(INSTRUCTION),
            ChatMessage::user(format!("Title: {}\n\n{excerpt}", document.title)),
        ])
        .await?;
    let summary = shortened(&visible_text(&answer), SUMMARY_CHARS);
    if summary.is_empty() {
        return Err(SummaryError::Empty);
    }
    let mut conn = pool.get().await?;
    documents::set_summary(&mut conn, document.id, &storable_text(&summary)).await?;
    tracing::info!(document_id = document.id, "document summarised");
    Ok(())
}

/// The answer without model scaffolding or reasoning, as a turn would show it.
fn visible_text(answer: &str) -> String {
    let mut filter = ScaffoldingFilter::new(&TOOL_NAMES, false);
    let mut events = Vec::new();
    filter.push(answer, &mut events);
    filter.finish(&mut events);
    events
        .into_iter()
        .filter_map(|event| match event {
            FilterEvent::Visible(text) => Some(text),
            _ => None,
        })
        .collect()
}
