//! The LogActor's store: `query_log` rows in PostgreSQL.

use bor_actors::log::{QueryLogStore, WriteError};
use bor_actors::record::{self, TurnOutcome, TurnRecord};
use futures_util::future::BoxFuture;

use crate::db::query_log::{NewQueryLogEntry, TurnPath, TurnStatus, insert_query_logs};
use crate::db::{DbError, DbPool, storable_text};
use bor_actors::error_chain;

pub struct PgQueryLogStore {
    pool: DbPool,
}

impl PgQueryLogStore {
    pub fn new(pool: DbPool) -> Self {
        Self { pool }
    }
}

impl QueryLogStore for PgQueryLogStore {
    fn insert(&self, records: Vec<TurnRecord>) -> BoxFuture<'static, Result<(), WriteError>> {
        let pool = self.pool.clone();
        Box::pin(async move {
            let entries: Vec<NewQueryLogEntry> = records.iter().filter_map(entry).collect();
            let mut conn = pool.get().await.map_err(write_error)?;
            insert_query_logs(&mut conn, &entries)
                .await
                .map(|_| ())
                .map_err(write_error)
        })
    }
}

fn write_error(error: DbError) -> WriteError {
    let text = error_chain(&error);
    if error.is_unavailable() {
        WriteError::Unavailable(text)
    } else {
        WriteError::Refused(text)
    }
}

/// The row of a turn that gets one (`done` or `stopped`).
fn entry(record: &TurnRecord) -> Option<NewQueryLogEntry> {
    let status = match record.outcome {
        TurnOutcome::Done => TurnStatus::Done,
        TurnOutcome::Stopped => TurnStatus::Stopped,
        TurnOutcome::Error(_) => return None,
    };
    let path = match record.path {
        record::TurnPath::Grounded => TurnPath::Grounded,
        record::TurnPath::Deflected => TurnPath::Deflected,
        record::TurnPath::Undecided => TurnPath::Undecided,
    };
    let count = |n: u32| i32::try_from(n).unwrap_or(i32::MAX);
    let millis = |n: u64| i64::try_from(n).unwrap_or(i64::MAX);
    Some(NewQueryLogEntry {
        turn_id: record.turn_id,
        created_at: record.created_at,
        question: storable_text(&record.question).into_owned(),
        answer: storable_text(&record.answer).into_owned(),
        path,
        status,
        chat_model: storable_text(&record.chat_model).into_owned(),
        rounds: count(record.rounds),
        tool_calls: count(record.tool_calls),
        retries: count(record.retries),
        scaffold_stripped: i32::try_from(record.scaffold_stripped).unwrap_or(i32::MAX),
        recovered: record.recovered,
        sources: sources_as_sent(&record.sources),
        first_token_ms: record.first_token_ms.map(millis),
        elapsed_ms: millis(record.elapsed_ms),
        conversation_id: record.conversation_id,
    })
}

/// The sources as the `done` frame writes them. Through text, so that an f32 score
/// keeps its shortest decimal form (0.50000006) instead of its widened f64 value
/// (0.5000000596046448), and the row holds the very list the client saw (but for
/// U+0000 in a title, which `jsonb` refuses as text does).
fn sources_as_sent(sources: &[record::Source]) -> serde_json::Value {
    let storable: Vec<record::Source> = sources
        .iter()
        .map(|source| record::Source {
            title: storable_text(&source.title).into_owned(),
            ..source.clone()
        })
        .collect();
    serde_json::to_string(&storable)
        .ok()
        .and_then(|text| serde_json::from_str(&text).ok())
        .unwrap_or_default()
}
