//! The stored part of a conversation's history, read for the turns that continue it.
//! Turns that continue one conversation at the same time share a read: a turn that
//! asks while a read of the same history is running waits for it to end, then one read
//! serves every turn that waited. Each read starts after every turn it serves asked, so
//! each turn sees at least what was stored when it asked, as if it had read alone; a
//! conversation that many clients continue at once costs one read a round trip instead
//! of one a turn.

use std::collections::HashMap;
use std::collections::hash_map::Entry;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use futures_util::future::BoxFuture;

use tokio::sync::oneshot;
use uuid::Uuid;

use crate::db::conversations::{self as stored, HistoryRow};
use crate::db::{DbError, DbPool};

/// A conversation's owner (`None` for one without an owner) and its last turns with
/// an answer, oldest first, each as its chosen version.
pub type OwnerAndHistory = (Option<Uuid>, Vec<HistoryRow>);

/// What a read gives: `None` when there is no such conversation.
pub type StoredRead = Option<Arc<OwnerAndHistory>>;

/// Which history: the conversation, and the turn left out of it (a turn asked again
/// does not see itself).
type HistoryKey = (Uuid, Option<Uuid>);

/// Reads one history alone.
type Reader =
    Arc<dyn Fn(HistoryKey) -> BoxFuture<'static, Result<StoredRead, DbError>> + Send + Sync>;

/// Turns waiting for a history's next read, by history. A key is present while a task
/// reads it.
type Waiting = HashMap<HistoryKey, Vec<oneshot::Sender<StoredRead>>>;

/// The histories being read, and how one is read.
#[derive(Clone)]
pub struct StoredHistories {
    read_alone: Reader,
    waiting: Arc<Mutex<Waiting>>,
}

impl StoredHistories {
    /// Histories of at most `limit` turns, read from `pool`.
    pub fn new(pool: DbPool, limit: usize) -> Self {
        Self::with_reader(Arc::new(move |(id, leaving_out)| {
            let pool = pool.clone();
            Box::pin(async move {
                let mut conn = pool.get().await?;
                Ok(stored::owner_and_history(&mut conn, id, limit, leaving_out)
                    .await?
                    .map(Arc::new))
            })
        }))
    }

    fn with_reader(read_alone: Reader) -> Self {
        Self {
            read_alone,
            waiting: Arc::default(),
        }
    }

    /// The owner and stored history of conversation `id` without the turn whose first
    /// version is `leaving_out`, read with the other turns asking for it now.
    pub async fn read(&self, id: Uuid, leaving_out: Option<Uuid>) -> Result<StoredRead, DbError> {
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
            Ok(read) => Ok(read),
            // The shared read failed: each turn reads alone and has its own error.
            Err(_) => (self.read_alone)(key).await,
        }
    }

    /// Reads `key` for the turns waiting for it until none waits.
    async fn serve(self, key: HistoryKey) {
        loop {
            let waiting = {
                let mut histories = self.lock();
                let waiting = histories
                    .get_mut(&key)
                    .map(std::mem::take)
                    .unwrap_or_default();
                if waiting.is_empty() {
                    histories.remove(&key);
                    return;
                }
                waiting
            };
            // On an error the senders are dropped and each turn reads alone.
            if let Ok(read) = (self.read_alone)(key).await {
                for turn in waiting {
                    // A turn that has left no longer waits.
                    let _ = turn.send(read.clone());
                }
            }
        }
    }

    fn lock(&self) -> MutexGuard<'_, Waiting> {
        // Every holder of the lock leaves the map whole: a panic elsewhere while holding
        // it leaves nothing half done.
        self.waiting.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicU64, Ordering};

    use tokio::sync::Semaphore;
    use tokio::task::JoinHandle;

    use super::*;

    /// A reader that notes the stored state (a number) each read starts from, then waits
    /// to be let through; its answer names that state as the owner. Its first `fail`
    /// reads fail.
    struct FakeStore {
        state: AtomicU64,
        starts: Mutex<Vec<u64>>,
        gate: Semaphore,
        fail: AtomicU64,
    }

    impl FakeStore {
        fn new(fail: u64) -> Arc<Self> {
            Arc::new(Self {
                state: AtomicU64::new(1),
                starts: Mutex::default(),
                gate: Semaphore::new(0),
                fail: AtomicU64::new(fail),
            })
        }

        fn histories(self: &Arc<Self>) -> StoredHistories {
            let store = Arc::clone(self);
            StoredHistories::with_reader(Arc::new(move |_| {
                let store = Arc::clone(&store);
                Box::pin(async move {
                    let state = store.state.load(Ordering::SeqCst);
                    store.starts.lock().unwrap().push(state);
                    store.gate.acquire().await.unwrap().forget();
                    if store.fail.load(Ordering::SeqCst) > 0 {
                        store.fail.fetch_sub(1, Ordering::SeqCst);
                        return Err(DbError::Pool("the fake store failed".to_owned()));
                    }
                    Ok(Some(Arc::new((
                        Some(Uuid::from_u128(state.into())),
                        Vec::new(),
                    ))))
                })
            }))
        }

        fn starts(&self) -> Vec<u64> {
            self.starts.lock().unwrap().clone()
        }

        async fn until_started(&self, reads: usize) {
            while self.starts.lock().unwrap().len() < reads {
                tokio::task::yield_now().await;
            }
        }
    }

    fn ask(histories: &StoredHistories, id: Uuid) -> JoinHandle<Result<StoredRead, DbError>> {
        let histories = histories.clone();
        tokio::spawn(async move { histories.read(id, None).await })
    }

    async fn until_waiting(histories: &StoredHistories, id: Uuid, turns: usize) {
        while histories.lock().get(&(id, None)).map_or(0, Vec::len) < turns {
            tokio::task::yield_now().await;
        }
    }

    /// The state the read a turn got started from.
    async fn state_seen(turn: JoinHandle<Result<StoredRead, DbError>>) -> u128 {
        let read = turn.await.unwrap().unwrap().unwrap();
        read.0.unwrap().as_u128()
    }

    #[tokio::test]
    async fn turns_that_ask_during_a_read_share_the_next_one_which_starts_after_they_asked() {
        let store = FakeStore::new(0);
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
        while !histories.lock().is_empty() {
            tokio::task::yield_now().await;
        }
    }

    #[tokio::test]
    async fn a_turn_that_leaves_does_not_hold_up_those_that_wait() {
        let store = FakeStore::new(0);
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
    async fn when_a_shared_read_fails_each_turn_reads_alone() {
        let store = FakeStore::new(1);
        let histories = store.histories();
        let id = Uuid::new_v4();
        let first = ask(&histories, id);
        store.until_started(1).await;
        store.gate.add_permits(3);
        assert_eq!(state_seen(first).await, 1);
        assert_eq!(store.starts().len(), 2, "the shared read, then its own");

        // A read that fails for everyone gives each turn its own error.
        store.fail.store(u64::MAX, Ordering::SeqCst);
        let turns = [ask(&histories, id), ask(&histories, id)];
        store.gate.add_permits(10);
        for turn in turns {
            assert!(matches!(turn.await.unwrap(), Err(DbError::Pool(_))));
        }
    }
}
