//! The service's lifecycle: when it started, and how it stops. On SIGTERM/SIGINT it
//! refuses new turns, lets the turns in flight finish within `BOR_SHUTDOWN_GRACE`, then
//! tells the rest to stop (each ends like a turn whose client left: a `stopped` row
//! with its partial answer) and waits until they have handed their records to the
//! LogActor. Only then may the HTTP server stop: its workers take the turn actors
//! running on them down with them.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use chrono::{DateTime, Utc};
use tokio::sync::{Semaphore, watch};

/// How long turns told to stop may take to record their end.
const STOPPED_TURNS_TIMEOUT: Duration = Duration::from_secs(10);

pub struct Lifecycle {
    started: Instant,
    /// The wall-clock time of `started`.
    started_at: DateTime<Utc>,
    /// Cleared when the service begins to stop: new turns are refused.
    accepting: AtomicBool,
    /// Set to `true` when the turns still running must stop; every turn holds a receiver.
    stop_turns: watch::Sender<bool>,
}

impl Default for Lifecycle {
    fn default() -> Self {
        Self::new()
    }
}

impl Lifecycle {
    pub fn new() -> Self {
        Self {
            started: Instant::now(),
            started_at: Utc::now(),
            accepting: AtomicBool::new(true),
            stop_turns: watch::Sender::new(false),
        }
    }

    pub fn uptime(&self) -> Duration {
        self.started.elapsed()
    }

    /// When the service started.
    pub fn started_at(&self) -> DateTime<Utc> {
        self.started_at
    }

    /// Whether new turns are accepted (false once the service is stopping).
    pub fn is_accepting(&self) -> bool {
        self.accepting.load(Ordering::SeqCst)
    }

    /// What a turn listens to, to stop when the grace is over.
    pub fn stop_signal(&self) -> watch::Receiver<bool> {
        self.stop_turns.subscribe()
    }

    /// The stop sequence for turns: refuse new ones, give those in flight `grace` to
    /// finish, then stop the rest and wait (bounded) until they have ended. `slots` is
    /// the turn semaphore with its `max` permits: every permit back means no turn runs.
    pub async fn stop(&self, slots: &Arc<Semaphore>, max: usize, grace: Duration) {
        self.accepting.store(false, Ordering::SeqCst);
        let running = in_flight(slots, max);
        if running == 0 {
            return;
        }
        tracing::info!(
            running,
            grace_s = grace.as_secs_f64(),
            "waiting for the turns in flight"
        );
        if all_slots_free(slots, max, grace).await {
            tracing::info!("every turn finished within the grace");
            return;
        }
        let running = in_flight(slots, max);
        tracing::warn!(running, "grace over; stopping the turns still running");
        self.stop_turns.send_replace(true);
        if !all_slots_free(slots, max, STOPPED_TURNS_TIMEOUT).await {
            tracing::error!(
                running = in_flight(slots, max),
                "turns did not end in time; their records may be lost"
            );
        }
    }
}

/// Turns holding a slot now.
pub fn in_flight(slots: &Semaphore, max: usize) -> usize {
    max.saturating_sub(slots.available_permits())
}

/// Waits up to `timeout` until every permit is free (released again at once).
async fn all_slots_free(slots: &Semaphore, max: usize, timeout: Duration) -> bool {
    let permits = u32::try_from(max).unwrap_or(u32::MAX);
    matches!(
        tokio::time::timeout(timeout, slots.acquire_many(permits)).await,
        Ok(Ok(_))
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(start_paused = true)]
    async fn without_turns_it_stops_at_once_and_refuses_new_ones() {
        let lifecycle = Lifecycle::new();
        let slots = Arc::new(Semaphore::new(4));
        assert!(lifecycle.is_accepting());
        let started = tokio::time::Instant::now();
        lifecycle.stop(&slots, 4, Duration::from_secs(30)).await;
        assert!(!lifecycle.is_accepting());
        assert_eq!(started.elapsed(), Duration::ZERO);
        assert!(
            !*lifecycle.stop_signal().borrow(),
            "no turn was told to stop"
        );
    }

    #[tokio::test(start_paused = true)]
    async fn turns_that_finish_within_the_grace_are_not_stopped() {
        let lifecycle = Arc::new(Lifecycle::new());
        let slots = Arc::new(Semaphore::new(4));
        let turn = Arc::clone(&slots).try_acquire_owned().unwrap();
        assert_eq!(in_flight(&slots, 4), 1);
        let signal = lifecycle.stop_signal();
        tokio::spawn(async move {
            tokio::time::sleep(Duration::from_secs(5)).await;
            drop(turn);
        });
        let started = tokio::time::Instant::now();
        lifecycle.stop(&slots, 4, Duration::from_secs(30)).await;
        assert_eq!(started.elapsed(), Duration::from_secs(5));
        assert!(!*signal.borrow());
        assert_eq!(in_flight(&slots, 4), 0);
    }

    #[tokio::test(start_paused = true)]
    async fn turns_still_running_after_the_grace_are_told_to_stop() {
        let lifecycle = Arc::new(Lifecycle::new());
        let slots = Arc::new(Semaphore::new(4));
        let turn = Arc::clone(&slots).try_acquire_owned().unwrap();
        let mut signal = lifecycle.stop_signal();
        // A turn that ends only when told to.
        tokio::spawn(async move {
            let _ = signal.wait_for(|stop| *stop).await;
            drop(turn);
        });
        let started = tokio::time::Instant::now();
        lifecycle.stop(&slots, 4, Duration::from_secs(3)).await;
        assert_eq!(started.elapsed(), Duration::from_secs(3));
        assert!(*lifecycle.stop_signal().borrow());
        assert_eq!(in_flight(&slots, 4), 0);
    }
}
