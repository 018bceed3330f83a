//! The stored part of a conversation's history, read for the turns that continue it.
//! Turns that continue one conversation at the same time share a read: a turn that
//! asks while a read of the same history runs waits for the next read to start, which
//! serves every turn that waited. Each read starts after every turn it serves asked, so
//! each turn sees at least what was stored when it asked, as if it had read alone; a
//! conversation that many clients continue at once costs one read a round trip instead
//! of one a turn. A failed read is every waiting turn's failure. A history this
//! instance caches ([`HistoryCache`]) is served without a read: it holds what was
//! stored, up to changes through other instances not yet announced.

use std::collections::HashMap;
use std::collections::hash_map::Entry;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use bor_actors::metrics::metrics;
use futures_util::future::BoxFuture;

use tokio::sync::oneshot;
use uuid::Uuid;

use crate::db::conversations::{self as stored, OwnerAndHistory};
use crate::db::{DbError, DbPool};
use crate::history_cache::HistoryCache;

/// What a read gives: `None` when there is no such conversation.
pub type StoredRead = Option<Arc<OwnerAndHistory>>;

/// Which history: the conversation, and the turn left out of it (a turn asked again
/// does not see itself).
type HistoryKey = (Uuid, Option<Uuid>);

/// Reads one history alone.
type Reader =
    Arc<dyn Fn(HistoryKey) -> BoxFuture<'static, Result<StoredRead, DbError>> + Send + Sync>;

/// What a turn waiting for a shared read gets: the read, or its failure.
type Answer = oneshot::Sender<Result<StoredRead, DbError>>;

/// Turns waiting for a history's next read, by history. A key is present while a task
/// reads it.
type Waiting = HashMap<HistoryKey, Vec<Answer>>;

/// The histories being read, and how one is read.
#[derive(Clone)]
pub struct StoredHistories {
    read_alone: Reader,
    waiting: Arc<Mutex<Waiting>>,
    cache: Arc<HistoryCache>,
}

impl StoredHistories {
    /// Histories of as many turns as `cache` holds, read from `pool` or, those it
    /// holds, from `cache`.
    pub fn new(pool: DbPool, cache: Arc<HistoryCache>) -> Self {
        let limit = cache.limit();
        let reader: Reader = Arc::new(move |(id, leaving_out)| {
            let pool = pool.clone();
            Box::pin(async move {
                let mut conn = pool.get().await?;
                Ok(stored::owner_and_history(&mut conn, id, limit, leaving_out)
                    .await?
                    .map(Arc::new))
            })
        });
        Self::with_reader(reader, cache)
    }

    fn with_reader(read_alone: Reader, cache: Arc<HistoryCache>) -> Self {
        Self {
            read_alone,
            waiting: Arc::default(),
            cache,
        }
    }

    /// The cache of this instance's histories.
    pub fn cache(&self) -> &Arc<HistoryCache> {
        &self.cache
    }

    /// The owner and stored history of conversation `id` without the turn whose first
    /// version is `leaving_out`, read with the other turns asking for it now.
    pub async fn read(&self, id: Uuid, leaving_out: Option<Uuid>) -> Result<StoredRead, DbError> {
        if leaving_out.is_none()
            && let Some(history) = self.cache.get(id)
        {
            metrics().count_history_read(true);
            return Ok(Some(history));
        }
        metrics().count_history_read(false);
        let key = (id, leaving_out);
        let (sender, receiver) = oneshot::channel();
        let first = match self.lock().entry(key) {
            Entry::Occupied(mut waiting) => {
                waiting.get_mut().push(sender);
                false
            }
            Entry::Vacant(slot) => {
                slot.insert(vec![sender]);
                true
            }
        };
        if first {
            // A task of its own, so that a turn whose client leaves does not leave the
            // others waiting on a read nobody drives.
            tokio::spawn(self.clone().serve(key));
        }
        match receiver.await {
            Ok(answer) => answer,
            // The reading task ended without an answer (a panic, or its worker's
            // runtime stopped): the turn reads alone.
            Err(_) => (self.read_alone)(key).await,
        }
    }

    /// Reads `key` for the turns waiting for it until none waits.
    async fn serve(self, key: HistoryKey) {
        let mut serving = Serving {
            histories: &self,
            key,
            done: false,
        };
        loop {
            let waiting = {
                let mut histories = self.lock();
                let waiting = histories
                    .get_mut(&key)
                    .map(std::mem::take)
                    .unwrap_or_default();
                if waiting.is_empty() {
                    histories.remove(&key);
                    serving.done = true;
                    return;
                }
                waiting
            };
            let read = match key {
                // Kept by the read before, or since: what a turn asking now gets.
                (id, None) if let Some(history) = self.cache.get(id) => Ok(Some(history)),
                // A whole history may be kept; one without the turn asked again may not.
                (id, None) => {
                    let filling = self.cache.start_read(id);
                    let read = (self.read_alone)(key).await.map_err(Arc::new);
                    if let Some(filling) = filling {
                        filling.finish(read.as_ref().ok().and_then(Option::as_ref));
                    }
                    read
                }
                _ => (self.read_alone)(key).await.map_err(Arc::new),
            };
            for turn in waiting {
                let answer = match &read {
                    Ok(read) => Ok(read.clone()),
                    Err(error) => Err(DbError::Shared(Arc::clone(error))),
                };
                // A turn that has left no longer waits.
                let _ = turn.send(answer);
            }
        }
    }

    fn lock(&self) -> MutexGuard<'_, Waiting> {
        // Every holder of the lock leaves the map whole: a panic elsewhere while holding
        // it leaves nothing half done.
        self.waiting.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// A history being read by a task: when the task ends without finishing (a panic, or
/// its worker's runtime stopped), the history is let go, and the turns that waited for
/// it, their answers dropped, read alone.
struct Serving<'a> {
    histories: &'a StoredHistories,
    key: HistoryKey,
    /// Ended the normal way, the key already removed (a new task may hold it now).
    done: bool,
}

impl Drop for Serving<'_> {
    fn drop(&mut self) {
        if !self.done {
            self.histories.lock().remove(&self.key);
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicU64, Ordering};
    use std::time::Duration;

    use tokio::sync::Semaphore;
    use tokio::task::JoinHandle;

    use super::*;
    use crate::db::conversations::HistoryRow;
    use crate::notify::Follower;

    /// A reader that notes the stored state (a number) each read starts from, then waits
    /// to be let through; its answer names that state as the owner. Its first `fail`
    /// reads fail, and its first `panic` reads panic.
    struct FakeStore {
        state: AtomicU64,
        starts: Mutex<Vec<u64>>,
        gate: Semaphore,
        fail: AtomicU64,
        panic: AtomicU64,
    }

    impl FakeStore {
        fn new() -> Arc<Self> {
            Arc::new(Self {
                state: AtomicU64::new(1),
                starts: Mutex::default(),
                gate: Semaphore::new(0),
                fail: AtomicU64::new(0),
                panic: AtomicU64::new(0),
            })
        }

        fn histories(self: &Arc<Self>) -> StoredHistories {
            // Off, as it is until the listener is connected: every turn reads.
            self.histories_cached_in(Arc::new(HistoryCache::new(20)))
        }

        /// Histories of one turn each, which `cache` may keep.
        fn histories_cached_in(self: &Arc<Self>, cache: Arc<HistoryCache>) -> StoredHistories {
            let store = Arc::clone(self);
            let reader: Reader = Arc::new(move |_| {
                let store = Arc::clone(&store);
                Box::pin(async move {
                    let state = store.state.load(Ordering::SeqCst);
                    store.starts.lock().unwrap().push(state);
                    store.gate.acquire().await.unwrap().forget();
                    let take = |count: &AtomicU64| {
                        count
                            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| n.checked_sub(1))
                            .is_ok()
                    };
                    if take(&store.panic) {
                        panic!("the fake store panicked");
                    }
                    if take(&store.fail) {
                        return Err(DbError::Pool("the fake store failed".to_owned()));
                    }
                    let turn = HistoryRow {
                        turn_id: Uuid::new_v4(),
                        question: "Stored?".to_owned(),
                        answer: "Yes.".to_owned(),
                        created_at: chrono::Utc::now(),
                        version_of: None,
                    };
                    Ok(Some(Arc::new((
                        Some(Uuid::from_u128(state.into())),
                        vec![turn],
                    ))))
                })
            });
            StoredHistories::with_reader(reader, cache)
        }

        fn starts(&self) -> Vec<u64> {
            self.starts.lock().unwrap().clone()
        }

        async fn until_started(&self, reads: usize) {
            until("the reads to start", || {
                self.starts.lock().unwrap().len() >= reads
            })
            .await;
        }
    }

    /// `what` happens well within a second or two (a guard against a hang, not a
    /// measure of speed).
    async fn soon<T>(what: &str, happening: impl Future<Output = T>) -> T {
        tokio::time::timeout(Duration::from_secs(30), happening)
            .await
            .unwrap_or_else(|_| panic!("waited 30 s for {what}"))
    }

    /// Yields until `holds`.
    async fn until(what: &str, holds: impl Fn() -> bool) {
        soon(what, async {
            while !holds() {
                tokio::task::yield_now().await;
            }
        })
        .await;
    }

    fn ask(histories: &StoredHistories, id: Uuid) -> JoinHandle<Result<StoredRead, DbError>> {
        let histories = histories.clone();
        tokio::spawn(async move { histories.read(id, None).await })
    }

    async fn until_waiting(histories: &StoredHistories, id: Uuid, turns: usize) {
        until("the turns to wait", || {
            histories.lock().get(&(id, None)).map_or(0, Vec::len) >= turns
        })
        .await;
    }

    async fn until_let_go(histories: &StoredHistories) {
        until("every history to be let go", || histories.lock().is_empty()).await;
    }

    /// The state the read a turn got started from.
    async fn state_seen(turn: JoinHandle<Result<StoredRead, DbError>>) -> u128 {
        let read = soon("the turn's history", turn)
            .await
            .unwrap()
            .unwrap()
            .unwrap();
        read.0.unwrap().as_u128()
    }

    #[tokio::test]
    async fn turns_that_ask_during_a_read_share_the_next_one_which_starts_after_they_asked() {
        let store = FakeStore::new();
        let histories = store.histories();
        let id = Uuid::new_v4();
        let first = ask(&histories, id);
        store.until_started(1).await;
        // A row is stored while the first read runs; two turns ask after it.
        store.state.store(2, Ordering::SeqCst);
        let (second, third) = (ask(&histories, id), ask(&histories, id));
        until_waiting(&histories, id, 2).await;
        assert_eq!(store.starts(), [1], "no second read while the first runs");
        // Another conversation's history is read at once.
        let other = ask(&histories, Uuid::new_v4());
        store.until_started(2).await;

        store.gate.add_permits(2);
        assert_eq!(state_seen(first).await, 1);
        assert_eq!(state_seen(other).await, 2);
        store.until_started(3).await;
        store.gate.add_permits(1);
        assert_eq!(
            state_seen(second).await,
            2,
            "the row stored before it asked is seen"
        );
        assert_eq!(state_seen(third).await, 2);
        assert_eq!(store.starts(), [1, 2, 2], "three reads for four turns");
        until_let_go(&histories).await;
    }

    #[tokio::test]
    async fn a_history_the_cache_keeps_serves_the_turns_after_without_a_read() {
        let store = FakeStore::new();
        let cache = Arc::new(HistoryCache::new(20));
        cache.follow_from_now();
        let histories = store.histories_cached_in(Arc::clone(&cache));
        let id = Uuid::new_v4();
        let first = ask(&histories, id);
        store.until_started(1).await;
        let waited = ask(&histories, id);
        until_waiting(&histories, id, 1).await;
        store.gate.add_permits(1);
        assert_eq!(state_seen(first).await, 1);
        assert_eq!(
            state_seen(waited).await,
            1,
            "the history the first read kept"
        );
        assert!(cache.holds(id));
        assert_eq!(state_seen(ask(&histories, id)).await, 1);
        assert_eq!(store.starts(), [1], "one read for three turns");
        // Another instance's row lets it go: the next turn reads.
        store.state.store(2, Ordering::SeqCst);
        cache.apply(&[format!("|{id}")]).await;
        store.gate.add_permits(1);
        assert_eq!(state_seen(ask(&histories, id)).await, 2);
        assert_eq!(store.starts(), [1, 2]);
    }

    #[tokio::test]
    async fn a_turn_that_leaves_does_not_hold_up_those_that_wait() {
        let store = FakeStore::new();
        let histories = store.histories();
        let id = Uuid::new_v4();
        let leaving = ask(&histories, id);
        store.until_started(1).await;
        let staying = ask(&histories, id);
        until_waiting(&histories, id, 1).await;
        leaving.abort();
        store.gate.add_permits(2);
        assert_eq!(state_seen(staying).await, 1);
        assert_eq!(store.starts().len(), 2);
    }

    #[tokio::test]
    async fn a_failed_read_is_the_failure_of_every_turn_that_waited_for_it() {
        let store = FakeStore::new();
        store.fail.store(2, Ordering::SeqCst);
        let histories = store.histories();
        let id = Uuid::new_v4();
        let first = ask(&histories, id);
        store.until_started(1).await;
        let (second, third) = (ask(&histories, id), ask(&histories, id));
        until_waiting(&histories, id, 2).await;
        store.gate.add_permits(2);
        for turn in [first, second, third] {
            let failure = soon("the turn's failure", turn).await.unwrap().unwrap_err();
            assert!(
                matches!(&failure, DbError::Shared(error) if matches!(**error, DbError::Pool(_)))
            );
            assert!(failure.is_unavailable(), "a 503, as the failure it shares");
        }
        assert_eq!(store.starts().len(), 2, "one read each time, none alone");
        until_let_go(&histories).await;
    }

    #[tokio::test]
    async fn a_reading_task_that_dies_lets_its_turns_read_alone_and_the_history_go() {
        let store = FakeStore::new();
        store.panic.store(1, Ordering::SeqCst);
        let histories = store.histories();
        let id = Uuid::new_v4();
        let first = ask(&histories, id);
        store.until_started(1).await;
        let second = ask(&histories, id);
        until_waiting(&histories, id, 1).await;
        store.gate.add_permits(10);
        assert_eq!(state_seen(first).await, 1);
        assert_eq!(state_seen(second).await, 1);
        until_let_go(&histories).await;
        // The history is read again as before.
        assert_eq!(state_seen(ask(&histories, id)).await, 1);
    }
}
