//! This instance's cache of conversation histories: a turn that continues a
//! conversation whose history is cached reads no row (docs/LIMITS.md, "Histories each
//! instance keeps").
//!
//! - **Filled by reads.** A history read for a turn is kept when nothing changed it
//!   while the read ran.
//! - **Advanced by this instance's rows.** The LogActor's store hands each batch it
//!   wrote here after the commit and before the rows leave the LogActor's queue, so a
//!   turn finds each row in the queue, here, or in both.
//! - **Let go on every other change.** Triggers announce on [`CHANNEL`] the
//!   conversations whose rows another writer changed (another instance's rows, a
//!   deletion, a conversation given to somebody else); the announcement of a batch this
//!   instance wrote names it (`bor.writer`) and is skipped.
//! - **Off while the listener is.** Announcements sent while the listening connection
//!   is down are lost: from the loss until the connection is back, nothing is kept or
//!   served.
//! - **Bounded.** At most [`CACHE_BYTES`] of questions and answers; past that, the
//!   histories cached first go first.

use std::collections::hash_map::Entry;
use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use chrono::SubsecRound;
use futures_util::FutureExt;
use futures_util::future::BoxFuture;
use uuid::Uuid;

use crate::db::conversations::{HistoryRow, OwnerAndHistory};
use crate::db::query_log::NewQueryLogEntry;
use crate::notify::Follower;

/// The channel the triggers of `query_log` and `conversations` announce changes on.
pub const CHANNEL: &str = "bor_history";

/// The most bytes of questions and answers the cache holds.
pub const CACHE_BYTES: usize = 64 << 20;

/// What a cached turn costs beyond its text (its ids, times and place), counted
/// against [`CACHE_BYTES`].
const TURN_OVERHEAD: usize = 96;

pub struct HistoryCache {
    /// This instance's name on the rows its LogActor writes (`bor.writer`).
    writer: Uuid,
    /// The same, as announcements spell it.
    writer_text: String,
    /// The most turns a history holds.
    limit: usize,
    /// The most bytes of the histories held.
    budget: usize,
    state: Mutex<State>,
}

#[derive(Default)]
struct State {
    /// The listener is connected: every change is heard.
    following: bool,
    histories: HashMap<Uuid, Slot>,
    /// Conversations in the order their histories were cached, with the read that
    /// filled each (a history let go and cached again is a later read): the first to go
    /// past the budget.
    cached_order: VecDeque<(Uuid, u64)>,
    bytes: usize,
    /// The reads started, numbered.
    reads: u64,
}

enum Slot {
    /// Read number `read` runs; `changed`: a change came during it, so its result may
    /// be older than the change and is not kept.
    Reading {
        read: u64,
        changed: bool,
    },
    Cached(Cached),
}

struct Cached {
    read: u64,
    history: Arc<OwnerAndHistory>,
    /// The history holds every turn of the conversation with an answer (it has fewer
    /// than the limit): a turn leaving it leaves no older turn to take its place.
    whole: bool,
    bytes: usize,
}

/// A read that may fill the cache, from [`HistoryCache::start_read`]: ended by
/// [`Read::finish`]; dropped unfinished (its task ended), it lets its place go.
#[must_use]
pub struct Read<'a> {
    cache: &'a HistoryCache,
    conversation: Uuid,
    read: u64,
}

impl Read<'_> {
    /// Keeps what the read found, unless something changed the history while it ran.
    /// A conversation without a turn with an answer is not kept (it may be one without
    /// rows, whose deletion no row announces).
    pub fn finish(self, found: Option<&Arc<OwnerAndHistory>>) {
        self.cache.finish_read(&self, found);
    }
}

impl Drop for Read<'_> {
    fn drop(&mut self) {
        let mut state = self.cache.lock();
        if let Some(Slot::Reading { read, .. }) = state.histories.get(&self.conversation)
            && *read == self.read
        {
            state.histories.remove(&self.conversation);
        }
    }
}

impl HistoryCache {
    /// A cache of histories of at most `limit` turns, off until the listener is
    /// connected ([`Self::follow_from_now`]).
    pub fn new(limit: usize) -> Self {
        Self::with_budget(limit, CACHE_BYTES)
    }

    fn with_budget(limit: usize, budget: usize) -> Self {
        let writer = Uuid::new_v4();
        Self {
            writer,
            writer_text: writer.to_string(),
            limit,
            budget,
            state: Mutex::default(),
        }
    }

    /// This instance's name on its LogActor's writes (set as `bor.writer`).
    pub fn writer(&self) -> Uuid {
        self.writer
    }

    /// The most turns a history holds.
    pub fn limit(&self) -> usize {
        self.limit
    }

    /// Every change from now on is heard: the listener is connected.
    pub fn follow_from_now(&self) {
        let mut state = self.lock();
        state.forget_all();
        state.following = true;
    }

    /// The cached history of conversation `id`.
    pub fn get(&self, id: Uuid) -> Option<Arc<OwnerAndHistory>> {
        match self.lock().histories.get(&id) {
            Some(Slot::Cached(cached)) => Some(Arc::clone(&cached.history)),
            _ => None,
        }
    }

    /// A read of conversation `id`'s history starts; `None` when its result cannot be
    /// kept (the cache is off).
    pub fn start_read(&self, id: Uuid) -> Option<Read<'_>> {
        let mut state = self.lock();
        if !state.following {
            return None;
        }
        state.reads += 1;
        let read = state.reads;
        if let Some(Slot::Cached(cached)) = state.histories.get(&id) {
            state.bytes -= cached.bytes;
        }
        state.histories.insert(
            id,
            Slot::Reading {
                read,
                changed: false,
            },
        );
        Some(Read {
            cache: self,
            conversation: id,
            read,
        })
    }

    fn finish_read(&self, read: &Read<'_>, found: Option<&Arc<OwnerAndHistory>>) {
        let mut state = self.lock();
        let Entry::Occupied(mut slot) = state.histories.entry(read.conversation) else {
            return;
        };
        match slot.get() {
            Slot::Reading {
                read: running,
                changed,
            } if *running == read.read => {
                match found.filter(|history| !*changed && !history.1.is_empty()) {
                    Some(history) => {
                        let bytes = bytes_of(&history.1);
                        slot.insert(Slot::Cached(Cached {
                            read: read.read,
                            history: Arc::clone(history),
                            whole: history.1.len() < self.limit,
                            bytes,
                        }));
                        state.bytes += bytes;
                        state.cached_order.push_back((read.conversation, read.read));
                        state.keep_within(self.budget);
                    }
                    None => {
                        slot.remove();
                    }
                }
            }
            _ => {}
        }
    }

    /// Adds the rows this instance's LogActor has just written to the histories
    /// cached; a history whose new state cannot be told without the database is let
    /// go.
    pub fn advance(&self, written: &[NewQueryLogEntry]) {
        let mut state = self.lock();
        for entry in written {
            let Some(id) = entry.conversation_id else {
                continue;
            };
            let (kept, before, after) = match state.histories.get_mut(&id) {
                None => continue,
                Some(Slot::Reading { changed, .. }) => {
                    *changed = true;
                    continue;
                }
                Some(Slot::Cached(cached)) => {
                    let before = cached.bytes;
                    let history = Arc::make_mut(&mut cached.history);
                    let kept = add_row(&mut history.1, &mut cached.whole, self.limit, entry);
                    cached.bytes = bytes_of(&history.1);
                    (kept, before, cached.bytes)
                }
            };
            state.bytes = state.bytes - before + after;
            if !kept {
                state.forget(id);
            }
        }
        state.keep_within(self.budget);
    }

    /// Lets go of conversation `id`'s history (it was changed here, outside the
    /// LogActor).
    pub fn forget(&self, id: Uuid) {
        self.lock().forget(id);
    }

    /// Lets go of the histories of the rows' conversations (a write of them that may or
    /// may not have been committed).
    pub fn let_go(&self, rows: &[NewQueryLogEntry]) {
        let mut state = self.lock();
        for id in rows.iter().filter_map(|row| row.conversation_id) {
            state.forget(id);
        }
    }

    /// How many histories are cached, and the bytes of their questions and answers.
    pub fn size(&self) -> (usize, usize) {
        let state = self.lock();
        let histories = state
            .histories
            .values()
            .filter(|slot| matches!(slot, Slot::Cached(_)))
            .count();
        (histories, state.bytes)
    }

    /// Whether conversation `id`'s history is cached.
    pub fn holds(&self, id: Uuid) -> bool {
        matches!(self.lock().histories.get(&id), Some(Slot::Cached(_)))
    }

    /// Applies an announcement: `<writer>|<id>,<id>,…` or `<writer>|*`. One of this
    /// instance's own writes is already applied; one that cannot be read lets every
    /// history go.
    fn hear(&self, payload: &str) {
        let Some((writer, ids)) = payload.split_once('|') else {
            self.lock().forget_all();
            return;
        };
        if writer == self.writer_text {
            return;
        }
        let mut state = self.lock();
        if ids == "*" {
            state.forget_all();
            return;
        }
        for id in ids.split(',') {
            match Uuid::parse_str(id) {
                Ok(id) => state.forget(id),
                Err(_) => state.forget_all(),
            }
        }
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        // No holder of the lock leaves the state half changed.
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl State {
    fn forget(&mut self, id: Uuid) {
        match self.histories.get_mut(&id) {
            Some(Slot::Reading { changed, .. }) => *changed = true,
            Some(Slot::Cached(cached)) => {
                self.bytes -= cached.bytes;
                self.histories.remove(&id);
            }
            None => {}
        }
    }

    /// Lets every history go; a read running then is not kept.
    fn forget_all(&mut self) {
        self.histories.retain(|_, slot| match slot {
            Slot::Reading { changed, .. } => {
                *changed = true;
                true
            }
            Slot::Cached(_) => false,
        });
        self.cached_order.clear();
        self.bytes = 0;
    }

    /// Lets the histories cached first go until the rest fit in `budget`; drops the
    /// order's entries of histories already gone.
    fn keep_within(&mut self, budget: usize) {
        while self.bytes > budget
            && let Some((id, read)) = self.cached_order.pop_front()
        {
            if matches!(self.histories.get(&id), Some(Slot::Cached(cached)) if cached.read == read)
            {
                self.forget(id);
            }
        }
        if self.cached_order.len() > 2 * self.histories.len() + 64 {
            let histories = &self.histories;
            self.cached_order.retain(|(id, read)| {
                matches!(histories.get(id), Some(Slot::Cached(cached)) if cached.read == *read)
            });
        }
    }
}

impl Follower for HistoryCache {
    fn channel(&self) -> &'static str {
        CHANNEL
    }

    fn apply<'a>(&'a self, payloads: &'a [String]) -> BoxFuture<'a, ()> {
        async move {
            for payload in payloads {
                self.hear(payload);
            }
        }
        .boxed()
    }

    fn lost(&self) {
        let mut state = self.lock();
        state.following = false;
        state.forget_all();
    }

    fn reload(&self) -> BoxFuture<'_, ()> {
        async move { self.follow_from_now() }.boxed()
    }
}

/// Adds a row just written to `history` (oldest first) as the database would then
/// read it: a row is its turn's chosen version when no newer row has its first
/// version, and a history holds the last `limit` turns whose chosen version has an
/// answer. False when that cannot be told from the history alone: the history is then
/// to be read again.
fn add_row(
    history: &mut Vec<HistoryRow>,
    whole: &mut bool,
    limit: usize,
    entry: &NewQueryLogEntry,
) -> bool {
    if history.iter().any(|turn| turn.turn_id == entry.turn_id) {
        // Written again (a retried write whose first commit went through).
        return true;
    }
    // The time as stored, to the microsecond.
    let created_at = entry.created_at.trunc_subsecs(6);
    if history.iter().any(|turn| turn.created_at == created_at) {
        // Rows of one time are ordered by their ids, which this row's is not known.
        return false;
    }
    let row = HistoryRow {
        turn_id: entry.turn_id,
        question: entry.question.clone(),
        answer: entry.answer.clone(),
        created_at,
        version_of: entry.version_of,
    };
    let first_version = row.first_version();
    match history
        .iter()
        .position(|turn| turn.first_version() == first_version)
    {
        // An older version than the one held is not its turn's chosen one.
        Some(at) if history[at].created_at > created_at => return true,
        Some(at) => {
            history.remove(at);
            if row.answer.is_empty() {
                // The turn leaves the history; an older turn would take its place.
                return *whole;
            }
        }
        // A version of a turn the history does not hold: which of its versions is
        // chosen (one newer without an answer?) is not known here.
        None if row.version_of.is_some() => return false,
        None if row.answer.is_empty() => return true,
        None => {}
    }
    let at = history.partition_point(|turn| turn.created_at < created_at);
    history.insert(at, row);
    if history.len() > limit {
        history.remove(0);
        *whole = false;
    }
    true
}

fn bytes_of(history: &[HistoryRow]) -> usize {
    history
        .iter()
        .map(|turn| turn.question.len() + turn.answer.len() + TURN_OVERHEAD)
        .sum()
}

#[cfg(test)]
mod tests {
    use chrono::{DateTime, Duration, Utc};

    use super::*;
    use crate::db::conversations::owner_and_history;
    use crate::query_log_store::write_turns;
    use crate::testing::{TestDatabase, query_log_entry};

    const LIMIT: usize = 5;

    fn following() -> HistoryCache {
        let cache = HistoryCache::new(LIMIT);
        cache.follow_from_now();
        cache
    }

    fn row(conversation: Uuid, question: &str, at: DateTime<Utc>) -> NewQueryLogEntry {
        NewQueryLogEntry {
            conversation_id: Some(conversation),
            question: question.to_owned(),
            answer: format!("Answer to {question}"),
            created_at: at,
            ..query_log_entry()
        }
    }

    fn history_of(questions: &[&str]) -> Arc<OwnerAndHistory> {
        let start = Utc::now();
        let rows = questions
            .iter()
            .zip(0..)
            .map(|(question, n)| HistoryRow {
                turn_id: Uuid::new_v4(),
                question: (*question).to_owned(),
                answer: format!("Answer to {question}"),
                created_at: (start + Duration::milliseconds(n)).trunc_subsecs(6),
                version_of: None,
            })
            .collect();
        Arc::new((None, rows))
    }

    /// Reads `id` as a turn would, and lets the cache keep it.
    fn fill(cache: &HistoryCache, id: Uuid, found: &Arc<OwnerAndHistory>) {
        let read = cache.start_read(id).expect("the cache is on");
        read.finish(Some(found));
    }

    fn questions(cache: &HistoryCache, id: Uuid) -> Vec<String> {
        let history = cache.get(id).expect("cached");
        history.1.iter().map(|turn| turn.question.clone()).collect()
    }

    #[test]
    fn a_read_is_kept_and_this_instances_rows_advance_it() {
        let cache = following();
        let id = Uuid::new_v4();
        fill(&cache, id, &history_of(&["One?", "Two?"]));
        assert_eq!(questions(&cache, id), ["One?", "Two?"]);
        cache.advance(&[row(id, "Three?", Utc::now() + Duration::seconds(1))]);
        assert_eq!(questions(&cache, id), ["One?", "Two?", "Three?"]);
        // A row of a conversation not cached is not made a history.
        let other = Uuid::new_v4();
        cache.advance(&[row(other, "Elsewhere?", Utc::now())]);
        assert!(cache.get(other).is_none());
    }

    #[test]
    fn a_read_during_which_the_history_changed_is_not_kept() {
        let cache = following();
        let id = Uuid::new_v4();
        let found = history_of(&["One?"]);
        let changes: [&dyn Fn(&HistoryCache); 4] = [
            &|cache| cache.advance(&[row(id, "Written here?", Utc::now())]),
            &|cache| cache.hear(&format!("{}|{id}", Uuid::new_v4())),
            &|cache| cache.hear("|*"),
            &|cache| cache.lost(),
        ];
        for change in changes {
            cache.follow_from_now();
            let read = cache.start_read(id).unwrap();
            change(&cache);
            read.finish(Some(&found));
            assert!(!cache.holds(id));
            // The next read is kept.
            cache.follow_from_now();
            fill(&cache, id, &found);
            assert!(cache.holds(id));
        }
        // This instance's own announcement changes nothing.
        let read = cache.start_read(id).unwrap();
        cache.hear(&format!("{}|{id}", cache.writer()));
        read.finish(Some(&found));
        assert!(cache.holds(id));
    }

    #[test]
    fn a_write_that_failed_lets_its_conversations_go() {
        let cache = following();
        let (written, other) = (Uuid::new_v4(), Uuid::new_v4());
        fill(&cache, written, &history_of(&["One?"]));
        fill(&cache, other, &history_of(&["One?"]));
        cache.let_go(&[row(written, "Committed or not?", Utc::now())]);
        assert!(!cache.holds(written) && cache.holds(other));
    }

    #[test]
    fn a_read_left_unfinished_lets_its_place_go() {
        let cache = following();
        let id = Uuid::new_v4();
        let read = cache.start_read(id).unwrap();
        assert_eq!(cache.lock().histories.len(), 1);
        drop(read);
        assert!(cache.lock().histories.is_empty());
        // A finished read's history stays.
        fill(&cache, id, &history_of(&["One?"]));
        assert!(cache.holds(id));
    }

    #[test]
    fn announcements_let_go_of_what_they_name() {
        let cache = following();
        let (a, b, c) = (Uuid::new_v4(), Uuid::new_v4(), Uuid::new_v4());
        for id in [a, b, c] {
            fill(&cache, id, &history_of(&["One?"]));
        }
        cache.hear(&format!("{}|{a}", cache.writer()));
        assert!(cache.holds(a), "its own write is already in");
        cache.hear(&format!("|{a},{b}"));
        assert!(!cache.holds(a) && !cache.holds(b) && cache.holds(c));
        cache.hear("|not-an-id");
        assert!(!cache.holds(c), "what cannot be read lets everything go");
        fill(&cache, c, &history_of(&["One?"]));
        cache.hear("no separator");
        assert!(!cache.holds(c));
    }

    #[test]
    fn without_the_listener_nothing_is_kept_or_served() {
        let cache = HistoryCache::new(LIMIT);
        let id = Uuid::new_v4();
        assert!(cache.start_read(id).is_none(), "off until following");
        cache.follow_from_now();
        fill(&cache, id, &history_of(&["One?"]));
        cache.lost();
        assert!(cache.get(id).is_none());
        assert!(cache.start_read(id).is_none());
        cache.follow_from_now();
        assert!(
            cache.get(id).is_none(),
            "what was held before the loss is gone"
        );
        fill(&cache, id, &history_of(&["One?"]));
        assert!(cache.holds(id));
    }

    #[test]
    fn past_its_budget_the_histories_cached_first_go_first() {
        let one = history_of(&["One?"]);
        let cache = HistoryCache::with_budget(LIMIT, bytes_of(&one.1) * 5 / 2);
        cache.follow_from_now();
        let ids: Vec<Uuid> = (0..3).map(|_| Uuid::new_v4()).collect();
        for id in &ids {
            fill(&cache, *id, &one);
        }
        assert_eq!(
            ids.iter().map(|id| cache.holds(*id)).collect::<Vec<_>>(),
            [false, true, true]
        );
        // A history that grows past the budget pushes the oldest out.
        cache.advance(&[row(ids[2], "Longer?", Utc::now() + Duration::seconds(1))]);
        assert!(!cache.holds(ids[1]) && cache.holds(ids[2]));
        // A conversation without a turn with an answer is not kept.
        let empty = Uuid::new_v4();
        fill(&cache, empty, &Arc::new((None, Vec::new())));
        assert!(!cache.holds(empty));
    }

    /// A small generator of numbers, the same each run.
    struct Steps(u64);

    impl Steps {
        fn next(&mut self, below: u64) -> u64 {
            self.0 = self
                .0
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            (self.0 >> 33) % below
        }
    }

    /// Turns, versions with and without an answer, rows written out of order and at a
    /// time another row has, in batches of one to three: after every batch the history
    /// cached is the one the database reads, or it was let go.
    #[tokio::test]
    async fn a_history_advanced_by_the_rows_written_is_the_one_the_database_reads() {
        let db = TestDatabase::migrated().await;
        let mut conn = db.connect().await;
        let cache = following();
        let id = Uuid::new_v4();
        let mut steps = Steps(42);
        let start = Utc::now();
        let mut written: Vec<NewQueryLogEntry> = Vec::new();
        let (mut compared, mut read_again) = (0, 0);
        for batch_number in 0..400 {
            let mut batch = Vec::new();
            for _ in 0..=steps.next(3) {
                let newest = written.iter().chain(&batch).map(|row| row.created_at).max();
                let at = match (newest, steps.next(10)) {
                    (None, _) => start,
                    // At the time of one of the last rows written.
                    (Some(_), 0) if !written.is_empty() => {
                        let back = steps.next(written.len().min(3) as u64) as usize;
                        written[written.len() - 1 - back].created_at
                    }
                    // Written after a turn that started later.
                    (Some(newest), 1) => newest - Duration::milliseconds(steps.next(30) as i64),
                    (Some(newest), _) => newest + Duration::milliseconds(1),
                };
                let mut entry = row(id, &format!("Turn {batch_number}?"), at);
                if steps.next(4) == 0 {
                    entry.answer.clear();
                }
                let last = written
                    .iter()
                    .chain(&batch)
                    .max_by_key(|row| row.created_at);
                if let Some(last) = last.filter(|_| steps.next(3) == 0) {
                    entry.version_of = Some(last.version_of.unwrap_or(last.turn_id));
                }
                batch.push(entry);
            }
            write_turns(&mut conn, &batch, Some(cache.writer()))
                .await
                .unwrap();
            cache.advance(&batch);
            written.extend(batch);
            let stored = owner_and_history(&mut conn, id, LIMIT, None)
                .await
                .unwrap()
                .map(Arc::new);
            match cache.get(id) {
                Some(cached) => {
                    assert_eq!(cached, stored.unwrap(), "after batch {batch_number}");
                    compared += 1;
                }
                None => {
                    read_again += 1;
                    let read = cache.start_read(id).unwrap();
                    read.finish(stored.as_ref());
                }
            }
        }
        eprintln!("compared {compared}, read again {read_again}");
        assert!(
            compared > 200,
            "the cache held the history after most batches ({compared} of 400, read again {read_again})"
        );
    }
}
