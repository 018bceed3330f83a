//! Messages to the LogActor.

use actix::Message;

use crate::record::TurnRecord;

/// A turn ended: write its log line, and its row when it has one.
#[derive(Debug, Message)]
#[rtype(result = "()")]
pub struct TurnFinished(pub TurnRecord);

/// Resolves once every queued row is written (callers bound the wait); answers the
/// number of rows still queued.
#[derive(Debug, Message)]
#[rtype(result = "usize")]
pub struct Flush;

/// Asks for the LogActor's counters.
#[derive(Debug, Message)]
#[rtype(result = "LogStats")]
pub struct GetLogStats;

/// The LogActor's counters since start.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
pub struct LogStats {
    /// Rows waiting to be written.
    pub queued: usize,
    pub written: u64,
    /// Write attempts that failed (each is retried).
    pub failed_writes: u64,
    /// Rows given up because the queue was full.
    pub dropped: u64,
}
