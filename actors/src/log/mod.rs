//! The LogActor: one per process. It writes each turn's log line and its `query_log`
//! row. Rows wait in a bounded queue while the database is unavailable and are
//! retried until written; `Flush` waits for the queue to empty (graceful shutdown).
//!
//! A row the database refuses cannot hold the others back: the batch it was in is
//! written again one row at a time, and a row refused on its own is set aside, tried
//! again after [`WRITE_RETRY_INTERVAL`] while the rest are written, and given up (an
//! ERROR line with its turn id, counted as `refused`) after [`REFUSALS_BEFORE_GIVING_UP`]
//! refusals. docs/LIMITS.md says what is kept and what is given up.

mod messages;

use std::collections::{HashMap, VecDeque};
use std::sync::Arc;
use std::time::Duration;

use actix::prelude::*;
use futures_util::future::BoxFuture;
use tokio::sync::oneshot;

use uuid::Uuid;

pub use messages::{
    Flush, GetLogStats, LogStats, PathCounts, QueuedTurns, TurnCounts, TurnFinished,
};

use crate::metrics::metrics;
use crate::record::{TurnOutcome, TurnRecord, TurnStatus};

/// How long the actor waits before writing again after a failed write.
pub const WRITE_RETRY_INTERVAL: Duration = Duration::from_secs(1);
/// Rows written per statement.
const WRITE_BATCH: usize = 100;
/// Rows kept while the database is away; beyond this the oldest are dropped.
pub const DEFAULT_QUEUE_CAPACITY: usize = 100_000;
/// Times a row written on its own may be refused before it is given up. More than
/// once: a server shutting down refuses a statement with an error of its own before
/// the connection is seen to be gone.
pub const REFUSALS_BEFORE_GIVING_UP: u32 = 3;

/// Why a write failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum WriteError {
    /// The database cannot be reached or is overloaded: the same rows are written later.
    #[error("the database is unavailable: {0}")]
    Unavailable(String),
    /// The database refused the statement (bad data, a constraint): one of the rows
    /// may never be written.
    #[error("the database refused the rows: {0}")]
    Refused(String),
}

/// Where `query_log` rows go.
pub trait QueryLogStore: Send + Sync + 'static {
    /// Writes the rows; a turn id already stored is not written twice and is no error.
    fn insert(&self, records: Vec<TurnRecord>) -> BoxFuture<'static, Result<(), WriteError>>;
}

pub struct LogActor {
    store: Arc<dyn QueryLogStore>,
    queue: VecDeque<TurnRecord>,
    capacity: usize,
    /// A write is in flight or a retry is scheduled.
    busy: bool,
    /// Rows of the write in flight (out of `queue` until it fails).
    in_flight: Vec<TurnRecord>,
    /// Rows at the head of the queue to write one at a time (a batch was refused).
    one_at_a_time: usize,
    /// Rows refused on their own, waiting to be tried again; with their refusals.
    set_aside: Vec<TurnRecord>,
    refusals: HashMap<Uuid, u32>,
    stats: LogStats,
    flush_waiters: Vec<oneshot::Sender<usize>>,
}

impl LogActor {
    pub fn new(store: Arc<dyn QueryLogStore>, capacity: usize) -> Self {
        Self {
            store,
            queue: VecDeque::new(),
            capacity: capacity.max(1),
            busy: false,
            in_flight: Vec::new(),
            one_at_a_time: 0,
            set_aside: Vec::new(),
            refusals: HashMap::new(),
            stats: LogStats::default(),
            flush_waiters: Vec::new(),
        }
    }

    fn write_next(&mut self, ctx: &mut Context<Self>) {
        if self.busy {
            return;
        }
        if self.queue.is_empty() {
            if self.set_aside.is_empty() {
                for waiter in self.flush_waiters.drain(..) {
                    let _ = waiter.send(0);
                }
            }
            return;
        }
        self.busy = true;
        let count = if self.one_at_a_time > 0 {
            self.one_at_a_time -= 1;
            1
        } else {
            self.queue.len().min(WRITE_BATCH)
        };
        let batch: Vec<TurnRecord> = self.queue.drain(..count).collect();
        self.in_flight = batch.clone();
        ctx.spawn(self.store.insert(batch).into_actor(self).map(
            move |result, act, ctx| {
                // The rows come back out of `in_flight`: written, or queued again.
                let batch = std::mem::take(&mut act.in_flight);
                match result {
                    Ok(()) => {
                        act.busy = false;
                        act.stats.written += batch.len() as u64;
                        for record in &batch {
                            act.refusals.remove(&record.turn_id);
                        }
                        act.write_next(ctx);
                    }
                    Err(WriteError::Refused(error)) if batch.len() > 1 => {
                        act.stats.failed_writes += 1;
                        tracing::warn!(rows = batch.len(), %error, "query_log batch refused; writing its rows one at a time");
                        act.one_at_a_time = act.one_at_a_time.max(batch.len());
                        act.requeue_front(batch);
                        act.busy = false;
                        act.write_next(ctx);
                    }
                    Err(WriteError::Refused(error)) => {
                        act.stats.failed_writes += 1;
                        for record in batch {
                            act.refused(record, &error, ctx);
                        }
                        act.busy = false;
                        act.write_next(ctx);
                    }
                    Err(WriteError::Unavailable(error)) => {
                        act.stats.failed_writes += 1;
                        act.requeue_front(batch);
                        tracing::warn!(
                            queued = act.queue.len(),
                            %error,
                            "query_log write failed; retrying"
                        );
                        ctx.run_later(WRITE_RETRY_INTERVAL, |act, ctx| {
                            act.busy = false;
                            act.write_next(ctx);
                        });
                    }
                }
            },
        ));
    }

    /// Puts rows back at the head of the queue, in order, to be written first.
    fn requeue_front(&mut self, rows: Vec<TurnRecord>) {
        for record in rows.into_iter().rev() {
            self.queue.push_front(record);
        }
    }

    /// A row written on its own was refused: set it aside to try again later, or give
    /// it up.
    fn refused(&mut self, record: TurnRecord, error: &str, ctx: &mut Context<Self>) {
        let refusals = self.refusals.entry(record.turn_id).or_insert(0);
        *refusals += 1;
        if *refusals >= REFUSALS_BEFORE_GIVING_UP {
            self.refusals.remove(&record.turn_id);
            self.stats.refused += 1;
            metrics().count_refused_row();
            tracing::error!(turn_id = %record.turn_id, %error, "query_log row refused by the database; given up");
            return;
        }
        let first_aside = self.set_aside.is_empty();
        self.set_aside.push(record);
        if first_aside {
            ctx.run_later(WRITE_RETRY_INTERVAL, |act, ctx| {
                let rows = std::mem::take(&mut act.set_aside);
                act.one_at_a_time += rows.len();
                act.requeue_front(rows);
                act.write_next(ctx);
            });
        }
    }

    /// Rows not yet written, the batch in flight and the rows set aside included.
    fn queued(&self) -> usize {
        self.queue.len() + self.in_flight.len() + self.set_aside.len()
    }
}

impl Actor for LogActor {
    type Context = Context<Self>;
}

impl Handler<TurnFinished> for LogActor {
    type Result = ();

    fn handle(&mut self, TurnFinished { record, span }: TurnFinished, ctx: &mut Self::Context) {
        span.in_scope(|| log_turn_line(&record));
        self.stats.turns.count(&record);
        metrics().observe_turn(&record);
        if record.outcome.row_status().is_none() {
            return;
        }
        if self.queue.len() >= self.capacity
            && let Some(lost) = self.queue.pop_front()
        {
            self.stats.dropped += 1;
            tracing::error!(turn_id = %lost.turn_id, "query_log queue full; row dropped");
        }
        self.queue.push_back(record);
        self.write_next(ctx);
    }
}

impl Handler<Flush> for LogActor {
    type Result = ResponseFuture<usize>;

    fn handle(&mut self, _: Flush, ctx: &mut Self::Context) -> Self::Result {
        if self.queued() == 0 {
            return Box::pin(async { 0 });
        }
        let (sender, receiver) = oneshot::channel();
        self.flush_waiters.push(sender);
        self.write_next(ctx);
        let left = self.queued();
        Box::pin(async move { receiver.await.unwrap_or(left) })
    }
}

impl Handler<QueuedTurns> for LogActor {
    type Result = MessageResult<QueuedTurns>;

    fn handle(
        &mut self,
        QueuedTurns { conversation_id }: QueuedTurns,
        _: &mut Self::Context,
    ) -> Self::Result {
        let of_conversation =
            |record: &&TurnRecord| record.conversation_id == Some(conversation_id);
        MessageResult(
            self.in_flight
                .iter()
                .chain(&self.set_aside)
                .chain(&self.queue)
                .filter(of_conversation)
                .cloned()
                .collect(),
        )
    }
}

impl Handler<GetLogStats> for LogActor {
    type Result = MessageResult<GetLogStats>;

    fn handle(&mut self, _: GetLogStats, _: &mut Self::Context) -> Self::Result {
        MessageResult(LogStats {
            queued: self.queued(),
            ..self.stats
        })
    }
}

/// The per-turn log line (docs/PROTOCOL.md, "Turn log line"): `retries=N
/// scaffold_stripped=N` always last, adjacent.
fn log_turn_line(record: &TurnRecord) {
    let TurnRecord {
        turn_id,
        path,
        rounds,
        elapsed_ms,
        retries,
        scaffold_stripped,
        ..
    } = record;
    match record.outcome {
        TurnOutcome::Error(code) => tracing::info!(
            turn_id = %turn_id,
            path = %path,
            outcome = %"error",
            code = %code,
            rounds,
            elapsed_ms,
            retries,
            scaffold_stripped,
            "chat turn"
        ),
        outcome => tracing::info!(
            turn_id = %turn_id,
            path = %path,
            outcome = %outcome.row_status().unwrap_or(TurnStatus::Done),
            rounds,
            elapsed_ms,
            retries,
            scaffold_stripped,
            "chat turn"
        ),
    }
}

#[cfg(test)]
mod tests;
