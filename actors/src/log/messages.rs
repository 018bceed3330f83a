//! Messages to the LogActor.

use actix::Message;
use serde::Serialize;

use crate::record::{TurnOutcome, TurnPath, TurnRecord};

/// A turn ended: write its log line, and its row when it has one.
#[derive(Debug, Message)]
#[rtype(result = "()")]
pub struct TurnFinished {
    pub record: TurnRecord,
    /// The turn's span: its log line is written inside it, with the turn's context.
    pub span: tracing::Span,
    /// The turn's slot, freed once the row is queued.
    pub slot: Option<tokio::sync::OwnedSemaphorePermit>,
}

impl TurnFinished {
    /// The record, with the current span as the turn's.
    pub fn new(record: TurnRecord) -> Self {
        Self {
            record,
            span: tracing::Span::current(),
            slot: None,
        }
    }

    /// The same, carrying the turn's slot to the LogActor.
    pub fn holding(self, slot: Option<tokio::sync::OwnedSemaphorePermit>) -> Self {
        Self { slot, ..self }
    }
}

/// Resolves once every queued row is written (callers bound the wait); answers the
/// number of rows still queued.
#[derive(Debug, Message)]
#[rtype(result = "usize")]
pub struct Flush;

/// The newest rows of a conversation's turns not yet written (queued, being written or
/// set aside), at most `limit` of them, in no particular order: a turn that starts
/// right after another sees it in its history even before its row reaches the
/// database.
#[derive(Debug, Message)]
#[rtype(result = "Vec<QueuedTurn>")]
pub struct QueuedTurns {
    pub conversation_id: uuid::Uuid,
    pub limit: usize,
}

/// A turn not yet written, as a history reads it.
#[derive(Debug, Clone, PartialEq)]
pub struct QueuedTurn {
    pub turn_id: uuid::Uuid,
    pub user_id: Option<uuid::Uuid>,
    pub created_at: chrono::DateTime<chrono::Utc>,
    pub question: String,
    pub answer: String,
    /// The id its versions share: its first version's.
    pub first_version: uuid::Uuid,
    /// Whether the turn has a row (a turn that failed has none, and no place in a
    /// history).
    pub has_row: bool,
}

impl From<&TurnRecord> for QueuedTurn {
    fn from(record: &TurnRecord) -> Self {
        Self {
            turn_id: record.turn_id,
            user_id: record.user_id,
            created_at: record.created_at,
            question: record.question.clone(),
            answer: record.answer.clone(),
            first_version: record.version_of.unwrap_or(record.turn_id),
            has_row: record.outcome.row_status().is_some(),
        }
    }
}

/// Asks for the LogActor's counters.
#[derive(Debug, Message)]
#[rtype(result = "LogStats")]
pub struct GetLogStats;

/// The LogActor's counters since start.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct LogStats {
    /// Rows waiting to be written.
    pub queued: usize,
    pub written: u64,
    /// Write attempts that failed (each is retried).
    pub failed_writes: u64,
    /// Rows given up because the queue was full.
    pub dropped: u64,
    /// Rows given up because the database refused them, each on its own, every time.
    pub refused: u64,
    /// Every turn that ended, rows or not.
    pub turns: TurnCounts,
}

/// Turns ended since start, by how they ended and by the way they went.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, utoipa::ToSchema)]
pub struct TurnCounts {
    pub done: u64,
    pub error: u64,
    pub stopped: u64,
    pub by_path: PathCounts,
}

/// Turns by path (`undecided` = ended before retrieval decided).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, utoipa::ToSchema)]
pub struct PathCounts {
    pub grounded: u64,
    pub deflected: u64,
    pub undecided: u64,
}

impl TurnCounts {
    pub fn count(&mut self, record: &TurnRecord) {
        match record.outcome {
            TurnOutcome::Done => self.done += 1,
            TurnOutcome::Stopped => self.stopped += 1,
            TurnOutcome::Error(_) => self.error += 1,
        }
        let paths = &mut self.by_path;
        match record.path {
            TurnPath::Grounded => paths.grounded += 1,
            TurnPath::Deflected => paths.deflected += 1,
            TurnPath::Undecided => paths.undecided += 1,
        }
    }
}
