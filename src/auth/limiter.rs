//! The failure limiter of sign-in: after [`MAX_FAILURES`] failures for one username
//! or from one client address within [`WINDOW`], sign-in is refused (429
//! `too_many_attempts`) until the oldest of them is older than the window. Each
//! instance counts its own failures (docs/LIMITS.md).

use std::collections::{HashMap, VecDeque};
use std::net::IpAddr;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use crate::username;

pub const MAX_FAILURES: usize = 5;
pub const WINDOW: Duration = Duration::from_secs(15 * 60);
/// Entries kept before the old ones are swept out (bounds the memory an attacker can
/// make bor spend with made-up usernames).
const SWEEP_AT: usize = 10_000;

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
enum Subject {
    /// The username's key ([`username::key`]), as the account lookup and the unique
    /// index compare names.
    Username(String),
    Address(IpAddr),
}

#[derive(Debug, Default)]
pub struct FailureLimiter {
    failures: Mutex<HashMap<Subject, VecDeque<Instant>>>,
}

impl FailureLimiter {
    /// `Err(wait)` when `username` or `address` has used up its failures: how long
    /// until the next attempt may be made.
    pub fn check(
        &self,
        username: &str,
        address: Option<IpAddr>,
        now: Instant,
    ) -> Result<(), Duration> {
        let Ok(failures) = self.failures.lock() else {
            return Ok(());
        };
        let wait = subjects(username, address)
            .filter_map(|subject| failures.get(&subject))
            .filter_map(|times| {
                let recent: Vec<&Instant> = times
                    .iter()
                    .filter(|time| now.duration_since(**time) < WINDOW)
                    .collect();
                (recent.len() >= MAX_FAILURES).then(|| {
                    WINDOW.saturating_sub(now.duration_since(*recent[recent.len() - MAX_FAILURES]))
                })
            })
            .max();
        match wait {
            Some(wait) => Err(wait.max(Duration::from_secs(1))),
            None => Ok(()),
        }
    }

    /// Counts a failed sign-in for `username` and `address`.
    pub fn record_failure(&self, username: &str, address: Option<IpAddr>, now: Instant) {
        let Ok(mut failures) = self.failures.lock() else {
            return;
        };
        if failures.len() >= SWEEP_AT {
            failures.retain(|_, times| {
                times.retain(|time| now.duration_since(*time) < WINDOW);
                !times.is_empty()
            });
        }
        for subject in subjects(username, address) {
            let times = failures.entry(subject).or_default();
            times.push_back(now);
            while times.len() > MAX_FAILURES {
                times.pop_front();
            }
        }
    }
}

fn subjects(name: &str, address: Option<IpAddr>) -> impl Iterator<Item = Subject> {
    std::iter::once(Subject::Username(username::key(name))).chain(address.map(Subject::Address))
}

#[cfg(test)]
mod tests {
    use super::*;

    const HOME: Option<IpAddr> = Some(IpAddr::V4(std::net::Ipv4Addr::LOCALHOST));
    const ELSEWHERE: Option<IpAddr> = Some(IpAddr::V4(std::net::Ipv4Addr::new(10, 0, 0, 9)));

    #[test]
    fn five_failures_for_a_username_block_it_from_anywhere_until_the_window_passes() {
        let limiter = FailureLimiter::default();
        let start = Instant::now();
        for n in 0..MAX_FAILURES {
            assert!(limiter.check("Ann", HOME, start).is_ok(), "attempt {n}");
            limiter.record_failure("Ann", HOME, start);
        }
        let wait = limiter.check("ann", ELSEWHERE, start).unwrap_err();
        assert_eq!(wait, WINDOW);
        assert!(limiter.check("bob", ELSEWHERE, start).is_ok());
        assert!(limiter.check("ann", ELSEWHERE, start + WINDOW).is_ok());
    }

    #[test]
    fn five_failures_from_an_address_block_every_username_from_it() {
        let limiter = FailureLimiter::default();
        let start = Instant::now();
        for n in 0..MAX_FAILURES {
            limiter.record_failure(&format!("user{n}"), ELSEWHERE, start);
        }
        assert!(limiter.check("someone", ELSEWHERE, start).is_err());
        assert!(limiter.check("someone", HOME, start).is_ok());
    }
}
