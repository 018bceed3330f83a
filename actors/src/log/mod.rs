//! The LogActor: one per process. It writes each turn's log line and its `query_log`
//! row. Rows wait in a bounded queue while the database is unavailable and are
//! retried until written; `Flush` waits for the queue to empty (graceful shutdown).

mod messages;

use std::collections::VecDeque;
use std::sync::Arc;
use std::time::Duration;

use actix::prelude::*;
use futures_util::future::BoxFuture;
use tokio::sync::oneshot;

pub use messages::{Flush, GetLogStats, LogStats, PathCounts, TurnCounts, TurnFinished};

use crate::metrics::metrics;
use crate::record::{TurnOutcome, TurnRecord};

/// How long the actor waits before writing again after a failed write.
pub const WRITE_RETRY_INTERVAL: Duration = Duration::from_secs(1);
/// Rows written per statement.
const WRITE_BATCH: usize = 100;
/// Rows kept while the database is away; beyond this the oldest are dropped.
pub const DEFAULT_QUEUE_CAPACITY: usize = 100_000;

/// Where `query_log` rows go.
pub trait QueryLogStore: Send + Sync + 'static {
    /// Writes the rows; a turn id already stored is not written twice and is no error.
    fn insert(&self, records: Vec<TurnRecord>) -> BoxFuture<'static, Result<(), String>>;
}

pub struct LogActor {
    store: Arc<dyn QueryLogStore>,
    queue: VecDeque<TurnRecord>,
    capacity: usize,
    /// A write is in flight or a retry is scheduled.
    busy: bool,
    /// Rows of the write in flight (out of `queue` until it fails).
    in_flight: usize,
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
            in_flight: 0,
            stats: LogStats::default(),
            flush_waiters: Vec::new(),
        }
    }

    fn write_next(&mut self, ctx: &mut Context<Self>) {
        if self.busy {
            return;
        }
        if self.queue.is_empty() {
            for waiter in self.flush_waiters.drain(..) {
                let _ = waiter.send(0);
            }
            return;
        }
        self.busy = true;
        let count = self.queue.len().min(WRITE_BATCH);
        let batch: Vec<TurnRecord> = self.queue.drain(..count).collect();
        self.in_flight = count;
        ctx.spawn(self.store.insert(batch.clone()).into_actor(self).map(
            move |result, act, ctx| {
                act.in_flight = 0;
                match result {
                    Ok(()) => {
                        act.busy = false;
                        act.stats.written += batch.len() as u64;
                        act.write_next(ctx);
                    }
                    Err(error) => {
                        act.stats.failed_writes += 1;
                        // Back to the front, in order, to be written first.
                        for record in batch.into_iter().rev() {
                            act.queue.push_front(record);
                        }
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

    /// Rows not yet written, the batch in flight included.
    fn queued(&self) -> usize {
        self.queue.len() + self.in_flight
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

impl Handler<GetLogStats> for LogActor {
    type Result = MessageResult<GetLogStats>;

    fn handle(&mut self, _: GetLogStats, _: &mut Self::Context) -> Self::Result {
        MessageResult(LogStats {
            queued: self.queued(),
            ..self.stats
        })
    }
}

/// The per-turn line of SPEC §8: `retries=N scaffold_stripped=N` always last, adjacent.
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
            outcome = %outcome.row_status().unwrap_or("done"),
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
