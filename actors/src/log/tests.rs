use std::sync::Mutex;

use chrono::Utc;
use futures_util::future;
use uuid::Uuid;

use super::*;
use crate::record::{ErrorCode, TurnPath};

/// The bounds bor starts with at its default of 256 turn slots.
fn bounds() -> QueueBounds {
    QueueBounds::for_turns(DEFAULT_HIGH_WATER, 256)
}

fn record(outcome: TurnOutcome) -> TurnRecord {
    TurnRecord {
        turn_id: Uuid::new_v4(),
        conversation_id: None,
        user_id: None,
        created_at: Utc::now(),
        question: "q".into(),
        query: "q".into(),
        answer: "a".into(),
        path: TurnPath::Grounded,
        outcome,
        chat_model: "m".into(),
        rounds: 2,
        tool_calls: 1,
        retries: 1,
        scaffold_stripped: 7,
        recovered: false,
        sources: Vec::new(),
        first_token_ms: Some(5),
        elapsed_ms: 840,
        key_id: None,
        usage: Default::default(),
        version_of: None,
    }
}

/// Log output kept in memory.
#[derive(Clone, Default)]
struct Buffer(Arc<Mutex<Vec<u8>>>);

impl std::io::Write for Buffer {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(bytes);
        Ok(bytes.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl Buffer {
    /// A text-format subscriber writing here.
    fn subscriber(&self) -> impl tracing::Subscriber + Send + Sync + use<> {
        let writer = self.clone();
        tracing_subscriber::fmt()
            .with_writer(move || writer.clone())
            .with_ansi(false)
            .finish()
    }

    fn text(&self) -> String {
        String::from_utf8(self.0.lock().unwrap().clone()).unwrap()
    }
}

/// Captures what `log_turn_line` writes, in the text format.
fn logged_line(record: &TurnRecord) -> String {
    let buffer = Buffer::default();
    tracing::subscriber::with_default(buffer.subscriber(), || log_turn_line(record));
    buffer.text()
}

#[test]
fn the_turn_line_has_the_fields_of_the_spec_in_order() {
    let done = record(TurnOutcome::Done);
    let line = logged_line(&done);
    let expected = format!(
        "chat turn turn_id={} path=grounded outcome=done rounds=2 elapsed_ms=840 retries=1 scaffold_stripped=7",
        done.turn_id
    );
    assert!(line.contains(" INFO "), "{line}");
    assert!(line.trim_end().ends_with(&expected), "{line}");

    let failed = record(TurnOutcome::Error(ErrorCode::LlmUnavailable));
    let line = logged_line(&failed);
    assert!(
        line.contains("outcome=error code=llm_unavailable rounds=2 elapsed_ms=840 retries=1 scaffold_stripped=7"),
        "{line}"
    );
    let stopped = logged_line(&record(TurnOutcome::Stopped));
    assert!(stopped.contains("outcome=stopped"), "{stopped}");
}

/// A store that is unavailable for its first `failures` writes, refuses every write
/// holding a row whose answer contains U+0000 (as PostgreSQL does), and keeps the rows
/// it accepts.
struct FlakyStore {
    failures: Mutex<usize>,
    rows: Mutex<Vec<TurnRecord>>,
    /// Every write attempted, by its number of rows.
    attempts: Mutex<Vec<usize>>,
}

impl FlakyStore {
    fn failing(failures: usize) -> Arc<Self> {
        Arc::new(FlakyStore {
            failures: Mutex::new(failures),
            rows: Mutex::new(Vec::new()),
            attempts: Mutex::new(Vec::new()),
        })
    }

    fn written(&self) -> Vec<Uuid> {
        self.rows
            .lock()
            .unwrap()
            .iter()
            .map(|r| r.turn_id)
            .collect()
    }
}

impl QueryLogStore for FlakyStore {
    fn insert(&self, records: Vec<TurnRecord>) -> BoxFuture<'static, Result<(), WriteError>> {
        self.attempts.lock().unwrap().push(records.len());
        let mut failures = self.failures.lock().unwrap();
        if *failures > 0 {
            *failures -= 1;
            let error = WriteError::Unavailable("connection refused".to_owned());
            return Box::pin(future::ready(Err(error)));
        }
        if records.iter().any(|r| r.answer.contains('\0')) {
            let error = WriteError::Refused("invalid byte sequence: 0x00".to_owned());
            return Box::pin(future::ready(Err(error)));
        }
        self.rows.lock().unwrap().extend(records);
        Box::pin(future::ready(Ok(())))
    }
}

#[actix::test]
async fn rows_wait_while_the_store_fails_and_are_written_once_in_order() {
    tokio::time::pause();
    let store = FlakyStore::failing(3);
    let log = LogActor::new(store.clone(), bounds()).start();
    let records: Vec<TurnRecord> = (0..5).map(|_| record(TurnOutcome::Done)).collect();
    for r in &records {
        log.send(TurnFinished::new(r.clone())).await.unwrap();
    }
    log.send(TurnFinished::new(record(TurnOutcome::Error(
        ErrorCode::Internal,
    ))))
    .await
    .unwrap();
    let stats = log.send(GetLogStats).await.unwrap();
    assert_eq!(stats.queued, 5, "error turns get no row");
    assert!(store.rows.lock().unwrap().is_empty());

    let left = log.send(Flush).await.unwrap();
    assert_eq!(left, 0);
    let written = store.written();
    let expected: Vec<Uuid> = records.iter().map(|r| r.turn_id).collect();
    assert_eq!(written, expected, "every row once, in order");
    let stats = log.send(GetLogStats).await.unwrap();
    assert_eq!(
        stats,
        LogStats {
            queued: 0,
            written: 5,
            failed_writes: 3,
            dropped: 0,
            refused: 0,
            turns: TurnCounts {
                done: 5,
                error: 1,
                stopped: 0,
                by_path: PathCounts {
                    grounded: 6,
                    deflected: 0,
                    undecided: 0,
                },
            },
        }
    );
}

#[actix::test]
async fn a_full_queue_drops_the_oldest_row_and_counts_it() {
    let store = FlakyStore::failing(usize::MAX);
    let log = LogActor::new(
        store,
        QueueBounds {
            high_water: 1,
            capacity: 2,
        },
    )
    .start();
    for _ in 0..4 {
        log.send(TurnFinished::new(record(TurnOutcome::Stopped)))
            .await
            .unwrap();
    }
    let stats = log.send(GetLogStats).await.unwrap();
    assert_eq!(stats.queued, 2);
    assert!(stats.dropped >= 1, "{stats:?}");
}

#[actix::test]
async fn the_backlog_is_full_from_the_high_water_mark_until_rows_are_written() {
    tokio::time::pause();
    let store = FlakyStore::failing(2);
    let actor = LogActor::new(store.clone(), QueueBounds::for_turns(3, 10));
    let backlog = actor.backlog();
    let log = actor.start();
    assert!(!backlog.is_full());
    for expected in 1..=3 {
        log.send(TurnFinished::new(record(TurnOutcome::Done)))
            .await
            .unwrap();
        assert_eq!(backlog.queued(), expected);
    }
    assert!(backlog.is_full(), "three rows wait at a mark of three");
    // Past the mark rows are still taken (turns in flight finish): none is dropped.
    for _ in 0..5 {
        log.send(TurnFinished::new(record(TurnOutcome::Done)))
            .await
            .unwrap();
    }
    assert_eq!(backlog.queued(), 8);
    assert_eq!(log.send(GetLogStats).await.unwrap().dropped, 0);
    // The store comes back: every row is written and the backlog empties.
    assert_eq!(log.send(Flush).await.unwrap(), 0);
    assert_eq!(store.written().len(), 8);
    assert_eq!(backlog.queued(), 0);
    assert!(!backlog.is_full());
}

#[test]
fn the_capacity_leaves_room_above_the_mark_for_every_turn_in_flight() {
    assert_eq!(
        QueueBounds::for_turns(5_000, 256),
        QueueBounds {
            high_water: 5_000,
            capacity: 5_256
        }
    );
    assert_eq!(QueueBounds::for_turns(0, 0).high_water, 1);
    assert_eq!(QueueBounds::for_turns(usize::MAX, 5).capacity, usize::MAX);
}

#[actix::test]
async fn the_turn_line_is_written_in_the_turn_span() {
    let buffer = Buffer::default();
    let _default = tracing::subscriber::set_default(buffer.subscriber());
    let store = FlakyStore::failing(0);
    let log = LogActor::new(store, bounds()).start();
    let span = tracing::info_span!("request", request_id = "req-42");
    let finished = span.in_scope(|| TurnFinished::new(record(TurnOutcome::Done)));
    log.send(finished).await.unwrap();
    let text = buffer.text();
    let line = text
        .lines()
        .find(|line| line.contains("chat turn"))
        .unwrap_or_else(|| panic!("no turn line in {text}"));
    assert!(line.contains("request{request_id=\"req-42\"}"), "{line}");
}

#[actix::test]
async fn every_turn_is_counted_by_outcome_and_path() {
    let store = FlakyStore::failing(0);
    let log = LogActor::new(store, bounds()).start();
    let turns = [
        (TurnOutcome::Done, TurnPath::Deflected),
        (TurnOutcome::Stopped, TurnPath::Grounded),
        (
            TurnOutcome::Error(ErrorCode::LlmUnavailable),
            TurnPath::Undecided,
        ),
        (
            TurnOutcome::Error(ErrorCode::MalformedReply),
            TurnPath::Grounded,
        ),
    ];
    for (outcome, path) in turns {
        let finished = TurnRecord {
            path,
            ..record(outcome)
        };
        log.send(TurnFinished::new(finished)).await.unwrap();
    }
    let stats = log.send(GetLogStats).await.unwrap();
    assert_eq!(
        stats.turns,
        TurnCounts {
            done: 1,
            error: 2,
            stopped: 1,
            by_path: PathCounts {
                grounded: 2,
                deflected: 1,
                undecided: 1,
            },
        }
    );
}

#[actix::test]
async fn a_row_the_database_refuses_holds_back_no_other_row() {
    tokio::time::pause();
    let buffer = Buffer::default();
    let _default = tracing::subscriber::set_default(buffer.subscriber());
    let store = FlakyStore::failing(0);
    let log = LogActor::new(store.clone(), bounds()).start();
    // The first write takes one row; the rest queue up behind it into one batch.
    let mut good: Vec<TurnRecord> = (0..6).map(|_| record(TurnOutcome::Done)).collect();
    let bad = TurnRecord {
        answer: "an answer with \0 in it".into(),
        ..record(TurnOutcome::Done)
    };
    let after = good.split_off(3);
    for r in good.iter().chain([&bad]).chain(&after) {
        log.send(TurnFinished::new(r.clone())).await.unwrap();
    }
    let later = record(TurnOutcome::Stopped);
    log.send(TurnFinished::new(later.clone())).await.unwrap();

    let left = log.send(Flush).await.unwrap();
    assert_eq!(left, 0, "the queue empties");
    let mut written = store.written();
    written.sort();
    let mut expected: Vec<Uuid> = good
        .iter()
        .chain(&after)
        .chain([&later])
        .map(|r| r.turn_id)
        .collect();
    expected.sort();
    assert_eq!(written, expected, "every other row is written, once");
    let stats = log.send(GetLogStats).await.unwrap();
    assert_eq!(stats.refused, 1, "{stats:?}");
    assert_eq!(stats.queued, 0);
    let single_attempts_of_the_bad_row = store
        .attempts
        .lock()
        .unwrap()
        .iter()
        .filter(|rows| **rows == 1)
        .count();
    assert!(
        single_attempts_of_the_bad_row >= REFUSALS_BEFORE_GIVING_UP as usize,
        "tried on its own before it is given up"
    );
    let text = buffer.text();
    let line = text
        .lines()
        .find(|line| line.contains("given up"))
        .unwrap_or_else(|| panic!("no ERROR line in {text}"));
    assert!(line.contains("ERROR"), "{line}");
    assert!(line.contains(&bad.turn_id.to_string()), "{line}");
}

#[actix::test]
async fn rows_written_while_a_refused_row_waits_are_not_delayed_by_it() {
    tokio::time::pause();
    let store = FlakyStore::failing(0);
    let log = LogActor::new(store.clone(), bounds()).start();
    let bad = TurnRecord {
        answer: "\0".into(),
        ..record(TurnOutcome::Done)
    };
    log.send(TurnFinished::new(bad)).await.unwrap();
    // The refused row waits to be tried again; a row that ends now is written once the
    // linger has passed, long before the refused row's retry.
    let next = record(TurnOutcome::Done);
    log.send(TurnFinished::new(next.clone())).await.unwrap();
    tokio::time::sleep(WRITE_LINGER * 2).await;
    let stats = log.send(GetLogStats).await.unwrap();
    assert_eq!(store.written(), vec![next.turn_id]);
    assert_eq!(
        stats.queued, 1,
        "the refused row is still queued: {stats:?}"
    );
    assert_eq!(stats.refused, 0, "not given up after one refusal");
}

#[actix::test]
async fn the_newest_rows_a_conversation_has_in_the_queue_are_handed_out() {
    let store = FlakyStore::failing(usize::MAX);
    let log = LogActor::new(store, bounds()).start();
    let conversation = Uuid::new_v4();
    let mine: Vec<TurnRecord> = (0..5)
        .map(|_| TurnRecord {
            conversation_id: Some(conversation),
            ..record(TurnOutcome::Done)
        })
        .collect();
    let other = TurnRecord {
        conversation_id: Some(Uuid::new_v4()),
        ..record(TurnOutcome::Done)
    };
    let finished = mine
        .iter()
        .cloned()
        .chain([other, record(TurnOutcome::Stopped)]);
    for finished in finished {
        log.send(TurnFinished::new(finished)).await.unwrap();
    }
    let queued = |limit| {
        log.send(QueuedTurns {
            conversation_id: conversation,
            limit,
        })
    };
    let all = queued(10).await.unwrap();
    assert_eq!(
        all.len(),
        5,
        "the rows waiting (or being written) are found"
    );
    assert!(mine.iter().all(|row| all.contains(&QueuedTurn::from(row))));
    assert_eq!(
        queued(2).await.unwrap(),
        vec![QueuedTurn::from(&mine[4]), QueuedTurn::from(&mine[3])],
        "the newest, when more wait than asked for"
    );
}

/// A store whose writes take `delay` each, counting how many run at once.
struct SlowStore {
    delay: Duration,
    running: Arc<std::sync::atomic::AtomicUsize>,
    most_at_once: Arc<std::sync::atomic::AtomicUsize>,
    rows: Arc<Mutex<Vec<Uuid>>>,
}

impl SlowStore {
    /// A store whose every write takes `delay`.
    fn taking(delay: Duration) -> Arc<Self> {
        Arc::new(SlowStore {
            delay,
            running: Arc::default(),
            most_at_once: Arc::default(),
            rows: Arc::default(),
        })
    }
}

impl QueryLogStore for SlowStore {
    fn insert(&self, records: Vec<TurnRecord>) -> BoxFuture<'static, Result<(), WriteError>> {
        use std::sync::atomic::Ordering::SeqCst;
        let (delay, running, most, rows) = (
            self.delay,
            Arc::clone(&self.running),
            Arc::clone(&self.most_at_once),
            Arc::clone(&self.rows),
        );
        Box::pin(async move {
            let now = running.fetch_add(1, SeqCst) + 1;
            most.fetch_max(now, SeqCst);
            tokio::time::sleep(delay).await;
            rows.lock()
                .unwrap()
                .extend(records.iter().map(|r| r.turn_id));
            running.fetch_sub(1, SeqCst);
            Ok(())
        })
    }
}

#[actix::test]
async fn two_writes_run_at_once_and_every_row_is_written_once() {
    tokio::time::pause();
    let store = SlowStore::taking(Duration::from_millis(50));
    let log = LogActor::new(store.clone(), bounds()).start();
    let mut sent = Vec::new();
    // A full batch starts a write at once; the rows after it, a second one.
    for _ in 0..WRITE_MIN_ROWS + 50 {
        let row = record(TurnOutcome::Done);
        sent.push(row.turn_id);
        log.send(TurnFinished::new(row)).await.unwrap();
    }
    assert_eq!(log.send(Flush).await.unwrap(), 0);
    let most = store.most_at_once.load(std::sync::atomic::Ordering::SeqCst);
    assert_eq!(most, WRITES_IN_FLIGHT);
    let mut written = store.rows.lock().unwrap().clone();
    assert_eq!(written.len(), WRITE_MIN_ROWS + 50, "each row once");
    written.sort();
    sent.sort();
    assert_eq!(written, sent);
}

/// Rows fewer than a batch wait for the linger, then go in one write; a flush writes
/// at once.
#[actix::test]
async fn a_few_rows_wait_for_the_linger_and_go_in_one_write() {
    tokio::time::pause();
    let store = FlakyStore::failing(0);
    let log = LogActor::new(store.clone(), bounds()).start();
    let rows: Vec<TurnRecord> = (0..10).map(|_| record(TurnOutcome::Done)).collect();
    for row in &rows {
        log.send(TurnFinished::new(row.clone())).await.unwrap();
    }
    assert!(
        store.written().is_empty(),
        "nothing written before the linger"
    );
    tokio::time::sleep(WRITE_LINGER * 2).await;
    assert_eq!(store.written().len(), 10);
    assert_eq!(*store.attempts.lock().unwrap(), [10], "one write");

    let last = record(TurnOutcome::Done);
    log.send(TurnFinished::new(last.clone())).await.unwrap();
    assert_eq!(log.send(Flush).await.unwrap(), 0);
    assert_eq!(store.written().len(), 11, "a flush does not wait");
}

/// While a write holds rows of a conversation, its later rows wait for it (a
/// conversation's rows are committed in order); rows of other conversations go in a
/// second write at once.
#[actix::test]
async fn a_conversations_rows_are_never_in_two_writes_at_once() {
    tokio::time::pause();
    let store = SlowStore::taking(Duration::from_millis(50));
    let log = LogActor::new(store.clone(), bounds()).start();
    let (busy, other) = (Uuid::new_v4(), Uuid::new_v4());
    let of = |conversation| TurnRecord {
        conversation_id: Some(conversation),
        ..record(TurnOutcome::Done)
    };
    let mut busy_rows = Vec::new();
    // A full batch: its write starts at once.
    for _ in 0..WRITE_MIN_ROWS {
        let row = of(busy);
        busy_rows.push(row.turn_id);
        log.send(TurnFinished::new(row)).await.unwrap();
    }
    let mut other_rows = Vec::new();
    for _ in 0..5 {
        let (mine, theirs) = (of(busy), of(other));
        busy_rows.push(mine.turn_id);
        other_rows.push(theirs.turn_id);
        log.send(TurnFinished::new(mine)).await.unwrap();
        log.send(TurnFinished::new(theirs)).await.unwrap();
    }
    assert_eq!(log.send(Flush).await.unwrap(), 0);
    let written = store.rows.lock().unwrap().clone();
    let busy_written: Vec<Uuid> = written
        .iter()
        .copied()
        .filter(|id| busy_rows.contains(id))
        .collect();
    assert_eq!(busy_written, busy_rows, "in the order the turns ended");
    let at = |id: &Uuid| written.iter().position(|row| row == id);
    assert!(
        other_rows.iter().map(at).max() < busy_rows[WRITE_MIN_ROWS..].iter().map(at).min(),
        "the other conversation's rows did not wait for the first write to end"
    );
    let most = store.most_at_once.load(std::sync::atomic::Ordering::SeqCst);
    assert_eq!(most, WRITES_IN_FLIGHT);
}
