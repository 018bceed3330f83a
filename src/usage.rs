//! Limits on turns and tokens, checked from memory before a turn starts
//! (docs/LIMITS.md, "Limits").
//!
//! Each instance keeps the day's turns and the day's and month's tokens of every person
//! and API key in memory: read from `query_log` at start (and after the listener
//! reconnects), counted as its own turns start (turns) and end (tokens), and told of the
//! other instances' turns by `NOTIFY` on [`CHANNEL`]. The limits and the group
//! memberships they depend on are read again whenever either changes (the triggers of
//! the `usage_limits` migration). Days and months are UTC, read from a [`Clock`] that
//! tests set.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError, RwLock, Weak};

use bor_actors::log::TurnObserver;
use bor_actors::record::TurnRecord;
use chrono::{DateTime, Datelike, NaiveDate, TimeZone, Utc};
use futures_util::FutureExt;
use futures_util::future::BoxFuture;
use serde::{Deserialize, Serialize};
use tokio::sync::mpsc;
use utoipa::ToSchema;
use uuid::Uuid;

use crate::db::usage::{self as stored, Counted, LimitRow};
use crate::db::{DbError, DbPool};
use crate::notify::{Follower, RETRY_DELAY};

mod turn_blocks;

use turn_blocks::{Take, TurnBlocks};

/// The channel of usage and limit changes.
pub const CHANNEL: &str = "bor_usage";
/// The payload the triggers send when limits or memberships change.
const LIMITS_CHANGED: &str = "limits";

/// The time of day, for the periods; tests set their own.
pub trait Clock: Send + Sync {
    fn now(&self) -> DateTime<Utc>;
}

/// The system's clock.
pub struct SystemClock;

impl Clock for SystemClock {
    fn now(&self) -> DateTime<Utc> {
        Utc::now()
    }
}

/// What a limit counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum Measure {
    TurnsPerDay,
    TokensPerDay,
    TokensPerMonth,
}

impl Measure {
    const ALL: [Measure; 3] = [
        Measure::TurnsPerDay,
        Measure::TokensPerDay,
        Measure::TokensPerMonth,
    ];

    /// When the period that holds `now` ends: the next UTC midnight, or the first of
    /// the next month at UTC midnight.
    pub fn resets_at(self, now: DateTime<Utc>) -> DateTime<Utc> {
        let today = now.date_naive();
        let next = match self {
            Measure::TurnsPerDay | Measure::TokensPerDay => today.succ_opt(),
            Measure::TokensPerMonth => first_of_next_month(today),
        };
        next.and_then(|day| day.and_hms_opt(0, 0, 0))
            .map_or(DateTime::<Utc>::MAX_UTC, |midnight| {
                Utc.from_utc_datetime(&midnight)
            })
    }

    /// In words, for the refusal's message.
    fn phrase(self, limit: u64) -> String {
        match self {
            Measure::TurnsPerDay => format!("{limit} turns a day"),
            Measure::TokensPerDay => format!("{limit} tokens a day"),
            Measure::TokensPerMonth => format!("{limit} tokens a month"),
        }
    }
}

fn first_of_next_month(day: NaiveDate) -> Option<NaiveDate> {
    let (year, month) = if day.month() == 12 {
        (day.year() + 1, 1)
    } else {
        (day.year(), day.month() + 1)
    };
    NaiveDate::from_ymd_opt(year, month, 1)
}

fn day_start(now: DateTime<Utc>) -> DateTime<Utc> {
    Utc.from_utc_datetime(&now.date_naive().and_time(chrono::NaiveTime::MIN))
}

fn month_start(now: DateTime<Utc>) -> DateTime<Utc> {
    let first = now.date_naive().with_day(1).unwrap_or(now.date_naive());
    Utc.from_utc_datetime(&first.and_time(chrono::NaiveTime::MIN))
}

/// Who a limit is set for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Subject {
    User(Uuid),
    Group(Uuid),
    Key(Uuid),
    Everyone,
}

impl Subject {
    pub fn kind(self) -> &'static str {
        match self {
            Subject::User(_) => "user",
            Subject::Group(_) => "group",
            Subject::Key(_) => "key",
            Subject::Everyone => "everyone",
        }
    }

    pub fn id(self) -> Option<Uuid> {
        match self {
            Subject::User(id) | Subject::Group(id) | Subject::Key(id) => Some(id),
            Subject::Everyone => None,
        }
    }

    /// The subject of a stored row; `None` for a word bor does not write.
    pub fn of_row(row: &LimitRow) -> Option<Subject> {
        match (row.subject.as_str(), row.subject_id) {
            ("user", Some(id)) => Some(Subject::User(id)),
            ("group", Some(id)) => Some(Subject::Group(id)),
            ("key", Some(id)) => Some(Subject::Key(id)),
            ("everyone", None) => Some(Subject::Everyone),
            _ => None,
        }
    }
}

/// One limit, as the check reads it.
#[derive(Debug, Clone, PartialEq)]
struct Rule {
    subject: Subject,
    /// The user's, group's or key's name, for the refusal.
    name: String,
    turns_per_day: Option<u64>,
    tokens_per_day: Option<u64>,
    tokens_per_month: Option<u64>,
}

impl Rule {
    fn of(&self, measure: Measure) -> Option<u64> {
        match measure {
            Measure::TurnsPerDay => self.turns_per_day,
            Measure::TokensPerDay => self.tokens_per_day,
            Measure::TokensPerMonth => self.tokens_per_month,
        }
    }
}

/// The limits and memberships in force.
#[derive(Debug, Default)]
struct Snapshot {
    rules: Vec<Rule>,
    /// Each user's groups (only users in some group).
    groups_of: HashMap<Uuid, Vec<Uuid>>,
}

/// The use of one person or key in the current day and month.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct Tally {
    day: Option<NaiveDate>,
    turns_today: u64,
    tokens_today: u64,
    /// The first day of the month counted.
    month: Option<NaiveDate>,
    tokens_this_month: u64,
}

/// A tally as read at one instant: the use of that instant's day and month.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Use {
    pub turns_today: u64,
    pub tokens_today: u64,
    pub tokens_this_month: u64,
}

impl Use {
    fn of(self, measure: Measure) -> u64 {
        match measure {
            Measure::TurnsPerDay => self.turns_today,
            Measure::TokensPerDay => self.tokens_today,
            Measure::TokensPerMonth => self.tokens_this_month,
        }
    }
}

impl Tally {
    /// Adds use that happened at `at`: a later period starts afresh; use of a period
    /// already over is not counted.
    fn add(&mut self, at: DateTime<Utc>, turns: u64, tokens: u64) {
        let day = at.date_naive();
        let month = day.with_day(1);
        if self.day.is_none_or(|counted| day > counted) {
            self.day = Some(day);
            self.turns_today = 0;
            self.tokens_today = 0;
        }
        if self.day == Some(day) {
            self.turns_today = self.turns_today.saturating_add(turns);
            self.tokens_today = self.tokens_today.saturating_add(tokens);
        }
        if self.month.is_none_or(|counted| month > Some(counted)) {
            self.month = month;
            self.tokens_this_month = 0;
        }
        if self.month == month {
            self.tokens_this_month = self.tokens_this_month.saturating_add(tokens);
        }
    }

    fn at(&self, now: DateTime<Utc>) -> Use {
        let day = now.date_naive();
        let today = self.day == Some(day);
        Use {
            turns_today: if today { self.turns_today } else { 0 },
            tokens_today: if today { self.tokens_today } else { 0 },
            tokens_this_month: if self.month == day.with_day(1) {
                self.tokens_this_month
            } else {
                0
            },
        }
    }
}

/// A limit that applies to a turn, and whose use it counts.
struct Applying<'a> {
    counted: Counted,
    rule: &'a Rule,
    measure: Measure,
    limit: u64,
}

impl Applying<'_> {
    fn refusal(&self, used: u64, now: DateTime<Utc>) -> QuotaExceeded {
        let resets_at = self.measure.resets_at(now);
        let millis = (resets_at - now).num_milliseconds().max(1);
        QuotaExceeded {
            subject: self.rule.subject.kind(),
            name: self.rule.name.clone(),
            measure: self.measure,
            limit: self.limit,
            used,
            resets_at,
            retry_after_secs: u64::try_from(millis).unwrap_or(1).div_ceil(1000),
        }
    }
}

/// The limits that apply to a turn of `user` through `key`: the key's; and the
/// person's own and their groups', or, for a measure none of those sets, everyone's.
fn applying(snapshot: &Snapshot, user: Option<Uuid>, key: Option<Uuid>) -> Vec<Applying<'_>> {
    let mut applying = Vec::new();
    for measure in Measure::ALL {
        let mut apply = |counted: Counted, chosen: &dyn Fn(&Rule) -> bool| {
            for rule in snapshot.rules.iter().filter(|rule| chosen(rule)) {
                if let Some(limit) = rule.of(measure) {
                    applying.push(Applying {
                        counted,
                        rule,
                        measure,
                        limit,
                    });
                }
            }
        };
        if let Some(user) = user {
            let groups = snapshot.groups_of.get(&user);
            let own = |rule: &Rule| match rule.subject {
                Subject::User(id) => id == user,
                Subject::Group(id) => groups.is_some_and(|g| g.contains(&id)),
                _ => false,
            };
            let sets_own = snapshot
                .rules
                .iter()
                .any(|rule| own(rule) && rule.of(measure).is_some());
            if sets_own {
                apply(Counted::User(user), &own);
            } else {
                apply(Counted::User(user), &|rule| {
                    rule.subject == Subject::Everyone
                });
            }
        }
        if let Some(key) = key {
            apply(Counted::Key(key), &|rule| rule.subject == Subject::Key(key));
        }
    }
    applying
}

/// Of two refusals, the one to wait for: the limit that holds longest (the smaller
/// limit when both reset at once).
fn longest_held(first: QuotaExceeded, second: QuotaExceeded) -> QuotaExceeded {
    if second.resets_at > first.resets_at
        || (second.resets_at == first.resets_at && second.limit < first.limit)
    {
        second
    } else {
        first
    }
}

/// Which limit refused a turn, and when it resets.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, ToSchema)]
pub struct QuotaExceeded {
    /// `user`, `group`, `key` or `everyone`.
    pub subject: &'static str,
    /// The user's, group's or key's name (`everyone` for everyone).
    pub name: String,
    pub measure: Measure,
    pub limit: u64,
    /// What was used in the period.
    pub used: u64,
    /// When the period ends (UTC).
    pub resets_at: DateTime<Utc>,
    /// Whole seconds from the refusal to `resets_at`, at least 1 (`Retry-After`).
    #[serde(skip)]
    pub retry_after_secs: u64,
}

impl std::fmt::Display for QuotaExceeded {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let whose = match self.subject {
            "user" => format!("for you ({})", self.name),
            "group" => format!("for the group {}", self.name),
            "key" => format!("for the API key {}", self.name),
            _ => "for everyone".to_owned(),
        };
        write!(
            f,
            "the limit of {} set {whose} is reached; it resets at {} UTC",
            self.measure.phrase(self.limit),
            self.resets_at.format("%Y-%m-%d %H:%M")
        )
    }
}

/// Use to count, on this instance and as told to the others.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
struct Delta {
    /// The instance that counted it.
    from: Uuid,
    user: Option<Uuid>,
    key: Option<Uuid>,
    at: DateTime<Utc>,
    turns: u64,
    tokens: u64,
}

/// The limits in force and the use counted, in memory.
pub struct UsageLimits {
    /// This instance, so that it skips its own notifications.
    instance: Uuid,
    clock: Arc<dyn Clock>,
    pool: DbPool,
    snapshot: RwLock<Arc<Snapshot>>,
    tallies: Mutex<HashMap<Counted, Tally>>,
    /// To the task that tells the other instances.
    outbox: mpsc::UnboundedSender<Delta>,
    /// The turns of turns limits, shared with the other instances.
    turn_blocks: TurnBlocks,
}

impl UsageLimits {
    /// Reads the limits and the use so far, and starts telling other instances of this
    /// one's use. Must run inside a tokio runtime.
    pub async fn load(pool: DbPool, clock: Arc<dyn Clock>) -> Result<Arc<UsageLimits>, DbError> {
        let (outbox, deltas) = mpsc::unbounded_channel();
        let limits = Arc::new(UsageLimits {
            instance: Uuid::new_v4(),
            clock,
            pool: pool.clone(),
            snapshot: RwLock::default(),
            tallies: Mutex::default(),
            outbox,
            turn_blocks: TurnBlocks::new(pool.clone()),
        });
        limits.read_limits().await?;
        limits.read_use().await?;
        tokio::spawn(announce(pool, deltas));
        tokio::spawn(give_back_idle_turns(Arc::downgrade(&limits)));
        Ok(limits)
    }

    /// Counts a turn about to start for `user` (through `key`), unless a limit that
    /// applies is reached: then nothing is counted and the refusal names the limit.
    /// The limits that apply: the key's; and the person's own and their groups',
    /// or, for a measure none of those sets, everyone's. Each holds: the tightest wins.
    ///
    /// Checked from memory; a turns limit also takes the turn from the instances'
    /// shared count ([`TurnBlocks`]), which asks the database only when this
    /// instance's block of the subject's turns is used up.
    pub async fn admit(&self, user: Option<Uuid>, key: Option<Uuid>) -> Result<(), QuotaExceeded> {
        let now = self.clock.now();
        let snapshot = self.snapshot();
        if !snapshot.rules.is_empty() {
            let applying = applying(&snapshot, user, key);
            let reached = {
                let tallies = self.tallies.lock().unwrap_or_else(PoisonError::into_inner);
                applying
                    .iter()
                    .filter_map(|limit| {
                        let used = tallies
                            .get(&limit.counted)
                            .map_or_else(Use::default, |tally| tally.at(now))
                            .of(limit.measure);
                        (used >= limit.limit).then(|| limit.refusal(used, now))
                    })
                    .reduce(longest_held)
            };
            if let Some(reached) = reached {
                return Err(reached);
            }
            self.take_turns(&applying, now).await?;
        }
        let delta = Delta {
            from: self.instance,
            user,
            key,
            at: now,
            turns: 1,
            tokens: 0,
        };
        add(
            &mut self.tallies.lock().unwrap_or_else(PoisonError::into_inner),
            &delta,
        );
        self.tell_others(&snapshot, delta);
        Ok(())
    }

    /// Takes the turn from the shared count of each subject a turns limit applies to
    /// (the tightest one), or puts back what it took and names the limit reached. While
    /// the database cannot be asked, the check from memory stands.
    async fn take_turns(
        &self,
        applying: &[Applying<'_>],
        now: DateTime<Utc>,
    ) -> Result<(), QuotaExceeded> {
        let mut tightest: Vec<&Applying<'_>> = Vec::new();
        for limit in applying
            .iter()
            .filter(|l| l.measure == Measure::TurnsPerDay)
        {
            match tightest.iter_mut().find(|t| t.counted == limit.counted) {
                Some(held) if limit.limit < held.limit => *held = limit,
                Some(_) => {}
                None => tightest.push(limit),
            }
        }
        let mut taken: Vec<Counted> = Vec::new();
        for limit in tightest {
            match self.turn_blocks.take(limit.counted, now, limit.limit).await {
                Ok(Take::Taken) => taken.push(limit.counted),
                Ok(Take::Reached { taken: used }) => {
                    for counted in taken {
                        self.turn_blocks.put_back(counted, now).await;
                    }
                    return Err(limit.refusal(used, now));
                }
                // Said in the log when it began (`TurnBlocks::take`).
                Err(_unasked) => {}
            }
        }
        Ok(())
    }

    /// Tells the other instances of use counted here, while some limit is in force:
    /// without limits nothing reads it, and the first limit set makes every instance
    /// read the use so far from `query_log`.
    fn tell_others(&self, snapshot: &Snapshot, delta: Delta) {
        if !snapshot.rules.is_empty() {
            let _ = self.outbox.send(delta);
        }
    }

    /// Whether some limit is in force here.
    pub fn knows_limits(&self) -> bool {
        !self.snapshot().rules.is_empty()
    }

    /// What `user` has used in the current day and month, as counted here.
    pub fn use_of_user(&self, user: Uuid) -> Use {
        self.use_of(Counted::User(user))
    }

    fn use_of(&self, counted: Counted) -> Use {
        let now = self.clock.now();
        self.tallies
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get(&counted)
            .map_or_else(Use::default, |tally| tally.at(now))
    }

    /// Counts a finished turn's tokens, in the period it started in.
    fn count_tokens(&self, record: &TurnRecord) {
        let tokens = record.usage.total();
        if tokens == 0 || (record.user_id.is_none() && record.key_id.is_none()) {
            return;
        }
        let delta = Delta {
            from: self.instance,
            user: record.user_id,
            key: record.key_id,
            at: record.created_at,
            turns: 0,
            tokens,
        };
        add(
            &mut self.tallies.lock().unwrap_or_else(PoisonError::into_inner),
            &delta,
        );
        self.tell_others(&self.snapshot(), delta);
    }

    fn snapshot(&self) -> Arc<Snapshot> {
        Arc::clone(&self.snapshot.read().unwrap_or_else(PoisonError::into_inner))
    }

    /// Reads the limits, their subjects' names and the memberships again.
    pub async fn read_limits(&self) -> Result<(), DbError> {
        let mut conn = self.pool.get().await?;
        let rows = stored::all(&mut conn).await?;
        let names = stored::subject_names(&mut conn, &rows).await?;
        let mut groups_of: HashMap<Uuid, Vec<Uuid>> = HashMap::new();
        for (group, user) in stored::memberships(&mut conn).await? {
            groups_of.entry(user).or_default().push(group);
        }
        let positive = |n: Option<i64>| n.and_then(|n| u64::try_from(n).ok());
        let rules: Vec<Rule> = rows
            .iter()
            .filter_map(|row| {
                let subject = Subject::of_row(row)?;
                Some(Rule {
                    subject,
                    name: names.name_of(subject.id()),
                    turns_per_day: positive(row.turns_per_day),
                    tokens_per_day: positive(row.tokens_per_day),
                    tokens_per_month: positive(row.tokens_per_month),
                })
            })
            .collect();
        // Without limits no instance announces its use: the first limit set makes this
        // one read the use so far, before it checks turns against it.
        let first_limits = self.snapshot().rules.is_empty() && !rules.is_empty();
        drop(conn);
        if first_limits {
            self.read_use().await?;
        }
        *self
            .snapshot
            .write()
            .unwrap_or_else(PoisonError::into_inner) = Arc::new(Snapshot { rules, groups_of });
        Ok(())
    }

    /// Reads the use of the current day and month from the rows written.
    async fn read_use(&self) -> Result<(), DbError> {
        let now = self.clock.now();
        let (day, month) = (day_start(now), month_start(now));
        let rows = stored::usage_since(&mut *self.pool.get().await?, day, month).await?;
        let mut tallies: HashMap<Counted, Tally> = HashMap::new();
        for row in rows {
            let count = |n: i64| u64::try_from(n).unwrap_or(0);
            let counted = [row.user_id.map(Counted::User), row.key_id.map(Counted::Key)];
            for counted in counted.into_iter().flatten() {
                let tally = tallies.entry(counted).or_default();
                // The month's tokens before today, then today's.
                let before_today =
                    count(row.tokens_this_month).saturating_sub(count(row.tokens_today));
                tally.add(month, 0, before_today);
                tally.add(day, count(row.turns_today), count(row.tokens_today));
            }
        }
        *self.tallies.lock().unwrap_or_else(PoisonError::into_inner) = tallies;
        Ok(())
    }

    async fn until_done<F>(&self, what: &'static str, mut attempt: impl FnMut() -> F)
    where
        F: std::future::Future<Output = Result<(), DbError>>,
    {
        while let Err(error) = attempt().await {
            tracing::warn!(error = %bor_actors::error_chain(&error), "{what} could not be read; retrying");
            tokio::time::sleep(RETRY_DELAY).await;
        }
    }
}

fn add(tallies: &mut HashMap<Counted, Tally>, delta: &Delta) {
    let counted = [delta.user.map(Counted::User), delta.key.map(Counted::Key)];
    for counted in counted.into_iter().flatten() {
        tallies
            .entry(counted)
            .or_default()
            .add(delta.at, delta.turns, delta.tokens);
    }
}

/// Most notifications sent in one statement.
const NOTIFY_BATCH: usize = 500;

/// Tells the other instances of this one's use, in order: whatever waits, in one
/// statement of one notification each.
async fn announce(pool: DbPool, mut deltas: mpsc::UnboundedReceiver<Delta>) {
    let mut batch = Vec::with_capacity(NOTIFY_BATCH);
    while deltas.recv_many(&mut batch, NOTIFY_BATCH).await > 0 {
        let payloads: Vec<String> = batch
            .drain(..)
            .filter_map(|delta| serde_json::to_string(&delta).ok())
            .collect();
        loop {
            match crate::db::usage::notify(&pool, CHANNEL, &payloads).await {
                Ok(()) => break,
                Err(error) if error.is_unavailable() => {
                    tokio::time::sleep(RETRY_DELAY).await;
                }
                Err(error) => {
                    tracing::warn!(error = %bor_actors::error_chain(&error), "usage could not be told to the other instances");
                    break;
                }
            }
        }
    }
}

/// Gives back the turns held and not used for a while, and forgets the turns taken on
/// days gone by, for as long as `limits` lives.
async fn give_back_idle_turns(limits: Weak<UsageLimits>) {
    let mut ticks = tokio::time::interval(turn_blocks::IDLE_GIVE_BACK / 2);
    let mut forgotten_before = None;
    loop {
        ticks.tick().await;
        let Some(limits) = limits.upgrade() else {
            return;
        };
        let now = limits.clock.now();
        limits
            .turn_blocks
            .give_back_idle(turn_blocks::IDLE_GIVE_BACK, now)
            .await;
        let yesterday = now.date_naive().pred_opt();
        if let Some(yesterday) = yesterday
            && forgotten_before != Some(yesterday)
        {
            let forgotten = match limits.pool.get().await {
                Ok(mut conn) => stored::forget_turns_before(&mut conn, yesterday).await,
                Err(error) => Err(error),
            };
            if forgotten.is_ok() {
                forgotten_before = Some(yesterday);
            }
        }
    }
}

impl TurnObserver for UsageLimits {
    fn turn_ended(&self, record: &TurnRecord) {
        self.count_tokens(record);
    }
}

impl Follower for UsageLimits {
    fn channel(&self) -> &'static str {
        CHANNEL
    }

    fn apply<'a>(&'a self, payloads: &'a [String]) -> BoxFuture<'a, ()> {
        async move {
            let limits_changed = payloads.iter().any(|payload| payload == LIMITS_CHANGED);
            {
                let mut tallies = self.tallies.lock().unwrap_or_else(PoisonError::into_inner);
                for payload in payloads {
                    if let Ok(delta) = serde_json::from_str::<Delta>(payload)
                        && delta.from != self.instance
                    {
                        add(&mut tallies, &delta);
                    }
                }
            }
            if limits_changed {
                self.until_done("the limits", || self.read_limits()).await;
            }
        }
        .boxed()
    }

    fn reload(&self) -> BoxFuture<'_, ()> {
        async move {
            self.until_done("the limits", || self.read_limits()).await;
            self.until_done("the use counted", || self.read_use()).await;
        }
        .boxed()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::db::usage::NewLimit;
    use crate::testing::TestDatabase;
    use std::time::Duration;

    /// A clock the test moves.
    struct SetClock(Mutex<DateTime<Utc>>);

    impl Clock for SetClock {
        fn now(&self) -> DateTime<Utc> {
            *self.0.lock().unwrap()
        }
    }

    #[tokio::test]
    async fn a_days_limit_holds_to_its_last_millisecond_and_not_past_midnight() {
        let db = TestDatabase::migrated().await;
        let limit = NewLimit {
            subject: "everyone",
            subject_id: None,
            turns_per_day: Some(2),
            tokens_per_day: None,
            tokens_per_month: None,
        };
        stored::set(&mut db.pool().get().await.unwrap(), &limit)
            .await
            .unwrap();
        let clock = Arc::new(SetClock(Mutex::new(at("2026-12-05T23:59:59.000Z"))));
        let limits = UsageLimits::load(db.pool(), clock.clone()).await.unwrap();
        let ann = Uuid::new_v4();
        assert!(limits.admit(Some(ann), None).await.is_ok());
        *clock.0.lock().unwrap() = at("2026-12-05T23:59:59.999Z");
        assert!(
            limits.admit(Some(ann), None).await.is_ok(),
            "the second of two"
        );
        let reached = limits.admit(Some(ann), None).await.unwrap_err();
        assert_eq!(
            (reached.limit, reached.used),
            (2, 2),
            "a limit of 2 allows 2, not 3"
        );
        assert_eq!(reached.subject, "everyone");
        assert_eq!(reached.resets_at, at("2026-12-06T00:00:00Z"));
        assert_eq!(reached.retry_after_secs, 1, "a millisecond, rounded up");
        assert_eq!(
            limits.use_of_user(ann).turns_today,
            2,
            "a refusal is not counted"
        );
        *clock.0.lock().unwrap() = at("2026-12-06T00:00:00.000Z");
        assert!(limits.admit(Some(ann), None).await.is_ok(), "a new day");
        assert_eq!(limits.use_of_user(ann).turns_today, 1);
    }

    async fn with_limit(db: &TestDatabase, limit: NewLimit) {
        stored::set(&mut db.pool().get().await.unwrap(), &limit)
            .await
            .unwrap();
    }

    fn turns_a_day(subject: &'static str, subject_id: Option<Uuid>, turns: i64) -> NewLimit {
        NewLimit {
            subject,
            subject_id,
            turns_per_day: Some(turns),
            tokens_per_day: None,
            tokens_per_month: None,
        }
    }

    #[tokio::test]
    async fn instances_asked_at_the_same_instant_let_in_no_more_turns_than_the_limit() {
        let db = TestDatabase::migrated().await;
        with_limit(&db, turns_a_day("everyone", None, 4)).await;
        let first = UsageLimits::load(db.pool(), Arc::new(SystemClock))
            .await
            .unwrap();
        let second = UsageLimits::load(db.pool(), Arc::new(SystemClock))
            .await
            .unwrap();
        let ann = Some(Uuid::new_v4());
        let asked = (0..12).flat_map(|_| [first.admit(ann, None), second.admit(ann, None)]);
        let answers = futures_util::future::join_all(asked).await;
        let refusals: Vec<&QuotaExceeded> =
            answers.iter().filter_map(|a| a.as_ref().err()).collect();
        assert_eq!(answers.len() - refusals.len(), 4, "{answers:?}");
        for refusal in refusals {
            assert_eq!(
                (refusal.measure, refusal.limit, refusal.used),
                (Measure::TurnsPerDay, 4, 4)
            );
        }
    }

    #[tokio::test]
    async fn turns_an_instance_holds_and_does_not_use_go_back_to_the_others() {
        let db = TestDatabase::migrated().await;
        let ann = Uuid::new_v4();
        with_limit(&db, turns_a_day("user", Some(ann), 80)).await;
        let first = UsageLimits::load(db.pool(), Arc::new(SystemClock))
            .await
            .unwrap();
        let second = UsageLimits::load(db.pool(), Arc::new(SystemClock))
            .await
            .unwrap();
        assert!(first.admit(Some(ann), None).await.is_ok());
        let today = Utc::now().date_naive();
        let taken = async || {
            stored::turns_taken(
                &mut db.pool().get().await.unwrap(),
                Counted::User(ann),
                today,
            )
            .await
            .unwrap()
        };
        assert_eq!(taken().await, Some(10), "a block of an eighth of 80");
        for turn in 1..=70 {
            assert!(second.admit(Some(ann), None).await.is_ok(), "turn {turn}");
        }
        let reached = second.admit(Some(ann), None).await.unwrap_err();
        assert_eq!((reached.limit, reached.used), (80, 80), "the first holds 9");
        first
            .turn_blocks
            .give_back_idle(Duration::ZERO, Utc::now())
            .await;
        assert_eq!(taken().await, Some(71));
        assert!(
            second.admit(Some(ann), None).await.is_ok(),
            "a turn given back"
        );
    }

    #[tokio::test]
    async fn a_turn_refused_by_its_keys_limit_leaves_the_persons_turns_as_they_were() {
        let db = TestDatabase::migrated().await;
        let (ann, key) = (Uuid::new_v4(), Uuid::new_v4());
        with_limit(&db, turns_a_day("user", Some(ann), 10)).await;
        with_limit(&db, turns_a_day("key", Some(key), 1)).await;
        let limits = UsageLimits::load(db.pool(), Arc::new(SystemClock))
            .await
            .unwrap();
        // Another instance took the key's one turn, and this one has not heard of it.
        let now = Utc::now();
        let elsewhere = stored::take_turns(
            &mut db.pool().get().await.unwrap(),
            Counted::Key(key),
            now.date_naive(),
            day_start(now),
            1,
            |_| 1,
        )
        .await
        .unwrap();
        assert_eq!(elsewhere.given, 1);
        let reached = limits.admit(Some(ann), Some(key)).await.unwrap_err();
        assert_eq!(
            (reached.subject, reached.limit, reached.used),
            ("key", 1, 1)
        );
        for turn in 1..=10 {
            assert!(limits.admit(Some(ann), None).await.is_ok(), "turn {turn}");
        }
        let reached = limits.admit(Some(ann), None).await.unwrap_err();
        assert_eq!((reached.subject, reached.used), ("user", 10));
    }

    fn at(text: &str) -> DateTime<Utc> {
        DateTime::parse_from_rfc3339(text)
            .unwrap()
            .with_timezone(&Utc)
    }

    #[test]
    fn periods_end_at_utc_midnight_and_at_the_first_of_the_month() {
        let now = at("2026-12-31T23:59:59.999Z");
        assert_eq!(
            Measure::TurnsPerDay.resets_at(now),
            at("2027-01-01T00:00:00Z")
        );
        assert_eq!(
            Measure::TokensPerMonth.resets_at(now),
            at("2027-01-01T00:00:00Z")
        );
        let now = at("2026-02-10T08:00:00Z");
        assert_eq!(
            Measure::TokensPerDay.resets_at(now),
            at("2026-02-11T00:00:00Z")
        );
        assert_eq!(
            Measure::TokensPerMonth.resets_at(now),
            at("2026-03-01T00:00:00Z")
        );
        assert_eq!(day_start(now), at("2026-02-10T00:00:00Z"));
        assert_eq!(month_start(now), at("2026-02-01T00:00:00Z"));
    }

    #[test]
    fn a_tally_starts_afresh_at_the_boundary_and_keeps_no_old_use() {
        let mut tally = Tally::default();
        tally.add(at("2026-12-30T23:59:59.999Z"), 3, 500);
        let last_instant = tally.at(at("2026-12-30T23:59:59.999Z"));
        assert_eq!(
            (last_instant.turns_today, last_instant.tokens_today),
            (3, 500)
        );
        let midnight = tally.at(at("2026-12-31T00:00:00Z"));
        assert_eq!((midnight.turns_today, midnight.tokens_today), (0, 0));
        assert_eq!(midnight.tokens_this_month, 500, "the same month");
        tally.add(at("2026-12-31T00:00:00Z"), 1, 10);
        let next = tally.at(at("2026-12-31T00:00:01Z"));
        assert_eq!(
            (next.turns_today, next.tokens_today, next.tokens_this_month),
            (1, 10, 510)
        );
        let new_year = tally.at(at("2027-01-01T00:00:00Z"));
        assert_eq!(new_year, Use::default());
        tally.add(at("2027-01-01T00:00:00Z"), 1, 7);
        tally.add(at("2026-12-31T23:00:00Z"), 1, 1_000);
        let late = tally.at(at("2027-01-01T00:00:01Z"));
        assert_eq!(
            (late.turns_today, late.tokens_today, late.tokens_this_month),
            (1, 7, 7),
            "use from a period already over is not counted in the new one"
        );
    }
}
