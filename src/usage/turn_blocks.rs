//! A turns-per-day limit held across instances (docs/LIMITS.md, "Overshoot").
//!
//! The turns of a person's or key's day are taken from PostgreSQL (`turns_taken`) in
//! blocks: an instance raises the day's count by a block while it stays within the
//! limit, lets turns in from its block in memory, and gives back what it has not used
//! once the subject has been idle for a while. So all instances together never let in
//! more turns than the limit while the database answers. A block is an eighth of what
//! the limit leaves, between 1 and [`MAX_BLOCK`]: near the limit each turn takes its own.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use chrono::{DateTime, NaiveDate, Utc};
use tokio::time::Instant;

use crate::db::usage::{self as stored, Counted};
use crate::db::{DbError, DbPool};

/// The most turns taken at once. Far from the limit a large block keeps the database
/// off the turn's path (with blocks of 64, 100 clients on one key waited 30 ms at p50
/// for the refills); near it a block is an eighth of what is left anyway.
pub const MAX_BLOCK: u64 = 1024;

/// How long turns taken and not used stay with an instance.
pub const IDLE_GIVE_BACK: Duration = Duration::from_secs(2);

/// How long a turn waits for a block before the check falls back to memory.
const ASK_TIMEOUT: Duration = Duration::from_secs(1);

/// How long the database is not asked again after it did not answer.
const AWAY_FOR: Duration = Duration::from_secs(5);

/// How many turns to take when the limit leaves `left`.
fn block(left: u64) -> u64 {
    (left / 8).clamp(1, MAX_BLOCK)
}

/// The turns this instance holds of one subject's day.
#[derive(Debug, Default)]
struct Block {
    day: Option<NaiveDate>,
    left: u64,
    /// The size of the last block taken.
    given: u64,
    /// Whether the next block is being taken while turns go on from this one.
    refilling: bool,
    last_used: Option<Instant>,
}

/// What taking a turn came to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Take {
    /// A turn is taken.
    Taken,
    /// The limit is reached: `taken` turns of the day are taken in all.
    Reached { taken: u64 },
}

/// Why the shared count could not be asked: the check falls back to memory.
#[derive(Debug, thiserror::Error)]
pub enum Unasked {
    #[error(transparent)]
    Database(#[from] DbError),
    #[error("the database did not answer within {ASK_TIMEOUT:?}")]
    Timeout,
    /// The database failed a moment ago; it is left alone for a while.
    #[error("the database failed a moment ago")]
    Away,
}

/// Asks the database for blocks, and leaves it alone for a while after it failed.
#[derive(Clone)]
struct Asker {
    pool: DbPool,
    /// Until when the database is not asked, after it failed.
    away_until: Arc<Mutex<Option<Instant>>>,
}

impl Asker {
    /// A block of `counted`'s turns of the day of `now` under `limit`.
    async fn ask(
        &self,
        counted: Counted,
        now: DateTime<Utc>,
        limit: u64,
    ) -> Result<stored::TurnsGiven, Unasked> {
        let away = *self
            .away_until
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        if away.is_some_and(|until| Instant::now() < until) {
            return Err(Unasked::Away);
        }
        let ask = async {
            let mut conn = self.pool.get().await?;
            let day_start = super::day_start(now);
            stored::take_turns(
                &mut conn,
                counted,
                now.date_naive(),
                day_start,
                limit,
                block,
            )
            .await
        };
        match tokio::time::timeout(ASK_TIMEOUT, ask).await {
            Ok(Ok(got)) => Ok(got),
            Ok(Err(error)) => Err(self.gone_away(error.into())),
            Err(_) => Err(self.gone_away(Unasked::Timeout)),
        }
    }

    /// Leaves the database alone for a while after `failure`; says so.
    fn gone_away(&self, failure: Unasked) -> Unasked {
        *self
            .away_until
            .lock()
            .unwrap_or_else(PoisonError::into_inner) = Some(Instant::now() + AWAY_FOR);
        tracing::warn!(
            error = %bor_actors::error_chain(&failure),
            "the turns taken of the instances could not be asked; turns limits are checked from this instance's count for {AWAY_FOR:?}"
        );
        failure
    }
}

/// The blocks this instance holds.
pub struct TurnBlocks {
    asker: Asker,
    /// One lock per subject, held while its block is refilled, so that the turns that
    /// wait for it share one request.
    blocks: Mutex<HashMap<Counted, Arc<tokio::sync::Mutex<Block>>>>,
}

impl TurnBlocks {
    pub fn new(pool: DbPool) -> TurnBlocks {
        TurnBlocks {
            asker: Asker {
                pool,
                away_until: Arc::default(),
            },
            blocks: Mutex::default(),
        }
    }

    fn block_of(&self, counted: Counted) -> Arc<tokio::sync::Mutex<Block>> {
        Arc::clone(
            self.blocks
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .entry(counted)
                .or_default(),
        )
    }

    /// Takes one of `counted`'s turns of the day of `now`, under `limit`: from the
    /// block held, else from a new block. Once half a block is used the next one is
    /// taken in the background, so that turns seldom wait for the database. Nothing is
    /// taken when the database could not be asked in time; after a failure it is not
    /// asked for [`AWAY_FOR`].
    pub async fn take(
        &self,
        counted: Counted,
        now: DateTime<Utc>,
        limit: u64,
    ) -> Result<Take, Unasked> {
        let day = now.date_naive();
        let block_lock = self.block_of(counted);
        let mut held = block_lock.lock().await;
        if held.day != Some(day) {
            // Turns of a day gone by are of no use: that day's row keeps them.
            *held = Block {
                day: Some(day),
                ..Block::default()
            };
        }
        if held.left == 0 {
            let got = self.asker.ask(counted, now, limit).await?;
            if got.given == 0 {
                return Ok(Take::Reached { taken: got.taken });
            }
            held.left = got.given;
            held.given = got.given;
        }
        held.left -= 1;
        held.last_used = Some(Instant::now());
        if !held.refilling && held.given >= 2 && held.left <= held.given / 2 {
            held.refilling = true;
            let asker = self.asker.clone();
            let block_lock = Arc::clone(&block_lock);
            tokio::spawn(async move {
                let got = asker.ask(counted, now, limit).await;
                let mut held = block_lock.lock().await;
                held.refilling = false;
                if let Ok(got) = got
                    && held.day == Some(day)
                {
                    held.left += got.given;
                    held.given = got.given.max(1);
                }
            });
        }
        Ok(Take::Taken)
    }

    /// Puts back a turn taken for a turn that another limit then refused.
    pub async fn put_back(&self, counted: Counted, now: DateTime<Utc>) {
        let block_lock = self.block_of(counted);
        let mut held = block_lock.lock().await;
        if held.day == Some(now.date_naive()) {
            held.left += 1;
        }
    }

    /// Gives back to the other instances the turns of every block not used for `idle`,
    /// and forgets blocks of days gone by. A block being refilled is left alone.
    pub async fn give_back_idle(&self, idle: Duration, now: DateTime<Utc>) {
        let blocks: Vec<(Counted, Arc<tokio::sync::Mutex<Block>>)> = self
            .blocks
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .iter()
            .map(|(counted, block)| (*counted, Arc::clone(block)))
            .collect();
        for (counted, block_lock) in blocks {
            let Ok(mut held) = block_lock.try_lock() else {
                continue;
            };
            let unused_for = held.last_used.map_or(Duration::MAX, |at| at.elapsed());
            if held.day != Some(now.date_naive()) {
                drop(held);
                self.forget_if_unused(counted, &block_lock);
                continue;
            }
            if held.left == 0 || unused_for < idle {
                continue;
            }
            let Some(day) = held.day else { continue };
            let given_back = match self.asker.pool.get().await {
                Ok(mut conn) => stored::give_back_turns(&mut conn, counted, day, held.left).await,
                Err(error) => Err(error),
            };
            match given_back {
                Ok(()) => held.left = 0,
                Err(error) => tracing::warn!(
                    error = %bor_actors::error_chain(&error),
                    "unused turns could not be given back; trying again later"
                ),
            }
        }
    }

    /// Drops `counted`'s block from the map unless a turn holds it meanwhile.
    fn forget_if_unused(&self, counted: Counted, block_lock: &Arc<tokio::sync::Mutex<Block>>) {
        let mut blocks = self.blocks.lock().unwrap_or_else(PoisonError::into_inner);
        // The map's own reference and ours: nobody else waits for it.
        if Arc::strong_count(block_lock) == 2 {
            blocks.remove(&counted);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_database_that_cannot_be_asked_is_left_alone_for_a_while() {
        let nothing_listens = std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|listener| listener.local_addr())
            .unwrap()
            .port();
        let pool = DbPool::new(
            &format!("postgres://postgres@127.0.0.1:{nothing_listens}/bor"),
            1,
        )
        .unwrap();
        let blocks = TurnBlocks::new(pool);
        let ann = Counted::User(uuid::Uuid::new_v4());
        let first = blocks.take(ann, Utc::now(), 3).await.unwrap_err();
        assert!(matches!(first, Unasked::Database(_)), "{first:?}");
        let next = blocks.take(ann, Utc::now(), 3).await.unwrap_err();
        assert!(matches!(next, Unasked::Away), "{next:?}");
    }

    #[tokio::test]
    async fn the_next_block_is_taken_once_half_of_one_is_used() {
        let db = crate::testing::TestDatabase::migrated().await;
        let blocks = TurnBlocks::new(db.pool());
        let ann = Counted::User(uuid::Uuid::new_v4());
        let now = Utc::now();
        let taken = async || {
            stored::turns_taken(&mut db.pool().get().await.unwrap(), ann, now.date_naive())
                .await
                .unwrap()
        };
        for _ in 0..4 {
            assert_eq!(blocks.take(ann, now, 80).await.unwrap(), Take::Taken);
        }
        assert_eq!(
            taken().await,
            Some(10),
            "a block of an eighth of 80, 6 left"
        );
        assert_eq!(blocks.take(ann, now, 80).await.unwrap(), Take::Taken);
        let mut waited = 0;
        while taken().await != Some(18) {
            waited += 1;
            assert!(
                waited < 1_000,
                "the next block (8 of 70) is taken in the background"
            );
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        for turn in 6..=18 {
            assert_eq!(
                blocks.take(ann, now, 80).await.unwrap(),
                Take::Taken,
                "turn {turn}"
            );
        }
    }

    #[test]
    fn a_block_is_an_eighth_of_what_is_left_between_one_and_the_most() {
        assert_eq!(
            [0, 1, 15, 16, 80, 10_000].map(block),
            [1, 1, 1, 2, 10, MAX_BLOCK]
        );
    }
}
