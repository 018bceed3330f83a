//! The LogActor: one per process. It writes each turn's log line and its `query_log`
//! row. Rows wait in a bounded queue while the database is unavailable and are
//! retried until written; `Flush` waits for the queue to empty (graceful shutdown).
//!
//! A row the database refuses cannot hold the others back: the batch it was in is
//! written again one row at a time, and a row refused on its own is set aside, tried
//! again after [`WRITE_RETRY_INTERVAL`] while the rest are written, and given up (an
//! ERROR line with its turn id, counted as `refused`) after [`REFUSALS_BEFORE_GIVING_UP`]
//! refusals. docs/LIMITS.md says what is kept and what is given up.
//!
//! The queue has two bounds ([`QueueBounds`]). Past the high-water mark the turn path
//! starts no new turn (it reads the [`Backlog`] without a message), so a database that
//! is merely slower than the turns costs refused turns, never lost rows. Past the
//! capacity the oldest rows are dropped; the capacity leaves room above the mark for
//! every turn that may be in flight, so only an outage that outlasts the queue and
//! more turns than that can reach it. A turn's slot travels with its record
//! (`TurnFinished::slot`) and is freed once the row is queued: rows still in this
//! actor's mailbox count among the turns in flight, however far it lags.

mod messages;

use std::collections::{HashMap, HashSet, VecDeque};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use actix::prelude::*;
use futures_util::future::BoxFuture;
use tokio::sync::oneshot;

use uuid::Uuid;

pub use messages::{
    Flush, GetLogStats, LogStats, PathCounts, QueuedTurn, QueuedTurns, TurnCounts, TurnFinished,
};

use crate::metrics::metrics;
use crate::record::{TurnOutcome, TurnRecord, TurnStatus};

/// How long the actor waits before writing again after a failed write.
pub const WRITE_RETRY_INTERVAL: Duration = Duration::from_secs(1);
/// The most rows one write takes: whatever is queued, up to this many, goes in one
/// transaction of a few statements (bench/RESULTS.md, "Writing turns").
const WRITE_BATCH: usize = 2_000;
/// Writes in flight at once: while one batch is being committed the next is already
/// being written, so the database works on the rows with two backends, as the turns
/// have several threads (docs/LIMITS.md, "Rows the database is slow to take").
pub const WRITES_IN_FLIGHT: usize = 2;
/// Fewer rows than this wait up to [`WRITE_LINGER`] for more before a write starts, so
/// that a busy stream of turns is written in batches rather than a transaction or two
/// per turn (bench/RESULTS.md, "Turns kept under load"); a flush writes at once.
const WRITE_MIN_ROWS: usize = 256;
pub const WRITE_LINGER: Duration = Duration::from_millis(5);
/// Rows waiting past which new turns are refused, unless configured
/// (`BOR_LOG_QUEUE_ROWS`): about a second of turns at full speed, so that a crash
/// while the database lags loses no more than that.
pub const DEFAULT_HIGH_WATER: usize = 5_000;
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

/// Told of every turn that ends, rows or not, before its row is queued: what counts
/// the turns' use (limits).
pub trait TurnObserver: Send + Sync + 'static {
    fn turn_ended(&self, record: &TurnRecord);
}

/// The queue's two bounds, in rows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct QueueBounds {
    /// Past this many rows waiting, new turns are refused ([`Backlog::is_full`]).
    pub high_water: usize,
    /// Past this many, the oldest row is dropped.
    pub capacity: usize,
}

impl QueueBounds {
    /// A high-water mark with room above it for `turns_in_flight` more rows: the most
    /// turns that can be running when the mark is passed, each of which adds one row.
    pub fn for_turns(high_water: usize, turns_in_flight: usize) -> QueueBounds {
        let high_water = high_water.max(1);
        QueueBounds {
            high_water,
            capacity: high_water.saturating_add(turns_in_flight),
        }
    }
}

/// How many rows wait to be written, readable from any thread without a message to
/// the actor: the turn path checks it before each turn. Cheap to clone.
#[derive(Debug, Clone)]
pub struct Backlog {
    queued: Arc<AtomicUsize>,
    high_water: usize,
}

impl Backlog {
    /// The rows waiting have reached the high-water mark: start no new turn.
    pub fn is_full(&self) -> bool {
        self.queued() >= self.high_water
    }

    /// Rows waiting to be written (queued, being written or set aside).
    pub fn queued(&self) -> usize {
        self.queued.load(Ordering::Relaxed)
    }

    pub fn high_water(&self) -> usize {
        self.high_water
    }
}

pub struct LogActor {
    store: Arc<dyn QueryLogStore>,
    queue: VecDeque<TurnRecord>,
    capacity: usize,
    backlog: Backlog,
    /// The rows of each write in flight, by the write's number (out of `queue` until
    /// it fails).
    in_flight: HashMap<u64, Vec<TurnRecord>>,
    /// The number the next write gets.
    next_write: u64,
    /// The database was unavailable: no write starts until the retry.
    retry_scheduled: bool,
    /// A write of fewer than [`WRITE_MIN_ROWS`] waits for the linger timer, set.
    linger_set: bool,
    /// Rows at the head of the queue to write one at a time (a batch was refused).
    one_at_a_time: usize,
    /// Rows refused on their own, waiting to be tried again; with their refusals.
    set_aside: Vec<TurnRecord>,
    refusals: HashMap<Uuid, u32>,
    stats: LogStats,
    flush_waiters: Vec<oneshot::Sender<usize>>,
    observer: Option<Arc<dyn TurnObserver>>,
}

impl LogActor {
    pub fn new(store: Arc<dyn QueryLogStore>, bounds: QueueBounds) -> Self {
        Self {
            store,
            queue: VecDeque::new(),
            capacity: bounds.capacity.max(1),
            backlog: Backlog {
                queued: Arc::new(AtomicUsize::new(0)),
                high_water: bounds.high_water,
            },
            in_flight: HashMap::new(),
            next_write: 0,
            retry_scheduled: false,
            linger_set: false,
            one_at_a_time: 0,
            set_aside: Vec::new(),
            refusals: HashMap::new(),
            stats: LogStats::default(),
            flush_waiters: Vec::new(),
            observer: None,
        }
    }

    /// The same, telling `observer` of every turn that ends.
    pub fn observed_by(self, observer: Arc<dyn TurnObserver>) -> Self {
        Self {
            observer: Some(observer),
            ..self
        }
    }

    /// The queue's fill, for the turn path (take it before starting the actor).
    pub fn backlog(&self) -> Backlog {
        self.backlog.clone()
    }

    /// Publishes the number of rows waiting; called after every change to it.
    fn publish_backlog(&self) {
        self.backlog.queued.store(self.queued(), Ordering::Relaxed);
    }

    /// Starts writes while fewer than [`WRITES_IN_FLIGHT`] are in flight and rows wait;
    /// answers the flush waiters once nothing is left.
    fn write_next(&mut self, ctx: &mut Context<Self>) {
        self.start_writes(ctx, false);
    }

    /// [`Self::write_next`]; `lingered`: the linger has passed, whatever is queued is
    /// written.
    fn start_writes(&mut self, ctx: &mut Context<Self>, lingered: bool) {
        if self.retry_scheduled {
            return;
        }
        while self.in_flight.len() < WRITES_IN_FLIGHT && !self.queue.is_empty() {
            if !(lingered || self.may_write_now()) {
                self.set_linger(ctx);
                break;
            }
            if !self.start_write(ctx) {
                break;
            }
        }
        if self.queued() == 0 {
            for waiter in self.flush_waiters.drain(..) {
                let _ = waiter.send(0);
            }
        }
    }

    /// Whether the rows queued are written before the linger passes: enough of them, a
    /// flush waiting, or rows to write one at a time.
    fn may_write_now(&self) -> bool {
        self.queue.len() >= WRITE_MIN_ROWS
            || !self.flush_waiters.is_empty()
            || self.one_at_a_time > 0
    }

    fn set_linger(&mut self, ctx: &mut Context<Self>) {
        if self.linger_set {
            return;
        }
        self.linger_set = true;
        ctx.run_later(WRITE_LINGER, |act, ctx| {
            act.linger_set = false;
            act.start_writes(ctx, true);
        });
    }

    /// Starts a write of the rows at the head of the queue, but for rows of a
    /// conversation a write in flight holds: those wait for it, so that the rows of a
    /// conversation are committed in the order its turns ended (its first turn gives
    /// its title; a new version's words replace the older ones). Whether a write
    /// started.
    fn start_write(&mut self, ctx: &mut Context<Self>) -> bool {
        let count = if self.one_at_a_time > 0 {
            1
        } else {
            self.queue.len().min(WRITE_BATCH)
        };
        let batch: Vec<TurnRecord> = if self.in_flight.is_empty() {
            self.queue.drain(..count).collect()
        } else {
            let busy: HashSet<Uuid> = self
                .in_flight
                .values()
                .flatten()
                .filter_map(|record| record.conversation_id)
                .collect();
            let is_busy =
                |record: &TurnRecord| record.conversation_id.is_some_and(|id| busy.contains(&id));
            // Most often every row waiting is of a conversation being written (one
            // busy conversation): looked at, not moved.
            if self.queue.iter().all(is_busy) {
                return false;
            }
            let mut batch = Vec::new();
            let mut waiting = VecDeque::new();
            while batch.len() < count
                && let Some(record) = self.queue.pop_front()
            {
                if is_busy(&record) {
                    waiting.push_back(record);
                } else {
                    batch.push(record);
                }
            }
            waiting.append(&mut self.queue);
            self.queue = waiting;
            batch
        };
        if batch.is_empty() {
            return false;
        }
        if self.one_at_a_time > 0 {
            self.one_at_a_time -= 1;
        }
        let write = self.next_write;
        self.next_write += 1;
        self.in_flight.insert(write, batch.clone());
        ctx.spawn(self.store.insert(batch).into_actor(self).map(
            move |result, act, ctx| {
                // The rows come back out of `in_flight`: written, or queued again.
                let batch = act.in_flight.remove(&write).unwrap_or_default();
                match result {
                    Ok(()) => {
                        act.stats.written += batch.len() as u64;
                        metrics().count_written_rows(batch.len());
                        for record in &batch {
                            act.refusals.remove(&record.turn_id);
                        }
                        act.publish_backlog();
                        act.write_next(ctx);
                    }
                    Err(WriteError::Refused(error)) if batch.len() > 1 => {
                        act.stats.failed_writes += 1;
                        tracing::warn!(rows = batch.len(), %error, "query_log batch refused; writing its rows one at a time");
                        act.one_at_a_time = act.one_at_a_time.max(batch.len());
                        act.requeue_front(batch);
                        act.write_next(ctx);
                    }
                    Err(WriteError::Refused(error)) => {
                        act.stats.failed_writes += 1;
                        for record in batch {
                            act.refused(record, &error, ctx);
                        }
                        act.publish_backlog();
                        act.write_next(ctx);
                    }
                    Err(WriteError::Unavailable(error)) => {
                        act.stats.failed_writes += 1;
                        act.requeue_front(batch);
                        tracing::warn!(
                            queued = act.queued(),
                            %error,
                            "query_log write failed; retrying"
                        );
                        if !act.retry_scheduled {
                            act.retry_scheduled = true;
                            ctx.run_later(WRITE_RETRY_INTERVAL, |act, ctx| {
                                act.retry_scheduled = false;
                                act.write_next(ctx);
                            });
                        }
                    }
                }
            },
        ));
        true
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
        self.queue.len()
            + self.in_flight.values().map(Vec::len).sum::<usize>()
            + self.set_aside.len()
    }
}

impl Actor for LogActor {
    type Context = Context<Self>;
}

impl Handler<TurnFinished> for LogActor {
    type Result = ();

    fn handle(
        &mut self,
        TurnFinished { record, span, slot }: TurnFinished,
        ctx: &mut Self::Context,
    ) {
        span.in_scope(|| log_turn_line(&record));
        self.stats.turns.count(&record);
        metrics().observe_turn(&record);
        if let Some(observer) = &self.observer {
            observer.turn_ended(&record);
        }
        if record.outcome.row_status().is_none() {
            return;
        }
        if self.queued() >= self.capacity
            && let Some(lost) = self.queue.pop_front()
        {
            self.stats.dropped += 1;
            metrics().count_dropped_row();
            tracing::error!(
                turn_id = %lost.turn_id,
                capacity = self.capacity,
                "query_log queue full (the database has been away longer than the queue lasts); oldest row dropped"
            );
        }
        self.queue.push_back(record);
        self.publish_backlog();
        // The row counts in the backlog now: the turn's slot may take a new turn.
        drop(slot);
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

    /// Newest first: the queue from its end, then the rows set aside and in flight,
    /// which are older than anything queued after them. Only what a history reads of
    /// the rows handed out is copied, so a long queue costs a scan.
    fn handle(
        &mut self,
        QueuedTurns {
            conversation_id,
            limit,
        }: QueuedTurns,
        _: &mut Self::Context,
    ) -> Self::Result {
        let of_conversation =
            |record: &&TurnRecord| record.conversation_id == Some(conversation_id);
        MessageResult(
            self.queue
                .iter()
                .rev()
                .chain(self.set_aside.iter().rev())
                .chain(self.in_flight.values().flat_map(|batch| batch.iter().rev()))
                .filter(of_conversation)
                .take(limit)
                .map(QueuedTurn::from)
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
