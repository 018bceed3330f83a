//! Which instance runs each `/api/chat` turn, recorded in `turn_owners` in the
//! background (never before the turn's first token), so that an instance whose frame
//! hub does not know a turn can ask the one that runs it (docs/ARCHITECTURE.md,
//! "Readers on another instance"). Rows are written in batches and removed once their
//! turns can no longer be replayed.

use std::sync::{Arc, OnceLock};
use std::time::Duration;

use bor_actors::error_chain;
use chrono::Utc;
use tokio::sync::mpsc;
use uuid::Uuid;

use crate::db::DbPool;
use crate::db::turn_owners::{self, TurnOwner};

/// Rows waiting to be written; past it a turn goes unrecorded (a reader elsewhere then
/// waits for its row), never delaying the turn.
const QUEUE_ROWS: usize = 4096;
/// The most rows one statement writes.
const BATCH_ROWS: usize = 256;
/// How long a batch short of [`BATCH_ROWS`] waits for more rows: under load, rows are
/// written by the hundred instead of one or two a transaction.
const LINGER: Duration = Duration::from_millis(5);
/// How often rows of old turns are removed.
const CLEANUP_EVERY: Duration = Duration::from_secs(60);
/// How long a turn may run beyond the replay window and still be found.
const LONGEST_TURN: Duration = Duration::from_secs(3600);

/// The recorder of the turns this instance runs.
#[derive(Clone)]
pub struct TurnOwners {
    queue: mpsc::Sender<TurnOwner>,
    /// This instance's address for the others, set once it listens.
    instance_url: Arc<OnceLock<String>>,
}

impl TurnOwners {
    /// Starts the writer on `pool`; rows are kept `replay_for` (plus [`LONGEST_TURN`])
    /// after their turn started.
    pub fn start(pool: DbPool, replay_for: Duration) -> TurnOwners {
        let (queue, rows) = mpsc::channel(QUEUE_ROWS);
        actix_web::rt::spawn(write(pool, rows, replay_for + LONGEST_TURN));
        TurnOwners {
            queue,
            instance_url: Arc::new(OnceLock::new()),
        }
    }

    /// This instance's address for the others, once it listens.
    pub fn set_instance_url(&self, url: String) {
        // Set once; a second listen of the same state keeps the first.
        let _ = self.instance_url.set(url);
    }

    pub fn instance_url(&self) -> Option<&str> {
        self.instance_url.get().map(String::as_str)
    }

    /// Records that this instance runs turn `turn_id` of `owner`.
    pub fn record(&self, turn_id: Uuid, owner: Uuid) {
        let Some(instance_url) = self.instance_url() else {
            return;
        };
        let row = TurnOwner {
            turn_id,
            owner,
            instance_url: instance_url.to_owned(),
            started_at: Utc::now(),
        };
        if self.queue.try_send(row).is_err() {
            tracing::warn!(%turn_id, "the turn's instance is not recorded: the queue is full");
        }
    }
}

/// Writes queued rows in batches, and removes rows older than `keep_for`.
async fn write(pool: DbPool, mut rows: mpsc::Receiver<TurnOwner>, keep_for: Duration) {
    let mut batch = Vec::with_capacity(BATCH_ROWS);
    let mut cleanup = tokio::time::interval(CLEANUP_EVERY);
    loop {
        tokio::select! {
            received = rows.recv_many(&mut batch, BATCH_ROWS) => {
                if received == 0 {
                    return;
                }
                if batch.len() < BATCH_ROWS {
                    tokio::time::sleep(LINGER).await;
                    while batch.len() < BATCH_ROWS && let Ok(row) = rows.try_recv() {
                        batch.push(row);
                    }
                }
                let written = match pool.get().await {
                    Ok(mut conn) => turn_owners::insert(&mut conn, &batch).await,
                    Err(error) => Err(error),
                };
                if let Err(error) = written {
                    tracing::warn!(rows = batch.len(), error = %error_chain(&error), "turns' instances not recorded");
                }
                batch.clear();
            }
            _ = cleanup.tick() => {
                let before = Utc::now() - keep_for;
                if let Ok(mut conn) = pool.get().await
                    && let Err(error) = turn_owners::remove_started_before(&mut conn, before).await
                {
                    tracing::warn!(error = %error_chain(&error), "old turns' instances not removed");
                }
            }
        }
    }
}
