//! Running a reader under a deadline.
//!
//! Each read runs on a thread of its own; the caller waits at most the deadline and
//! then gives the read up with [`ReadError::TimedOut`]. A thread cannot be stopped from
//! outside, so one that overran goes on until its reader returns (every reader's own
//! bounds make that finite); while [`MAX_OVERDUE`] such threads are still running, new
//! reads are refused with [`ReadError::Busy`] rather than piling up. A reader that
//! panics on a malformed file is reported as that file being malformed.

use std::any::Any;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use crate::ReadError;

/// Reads still running past their deadline, at most.
pub const MAX_OVERDUE: usize = 2;
/// Stack of a reader thread: parsers recurse, and a deep file must not overflow it.
const READER_STACK_BYTES: usize = 64 << 20;

static OVERDUE: AtomicUsize = AtomicUsize::new(0);

/// The shared fate of one read: given up by the caller, finished by the reader.
#[derive(Default)]
struct Job {
    abandoned: bool,
    finished: bool,
}

/// Runs `read` on its own thread and waits at most `deadline` for it.
pub(crate) fn run_with_deadline<F, T>(
    deadline: Duration,
    kind: &'static str,
    read: F,
) -> Result<T, ReadError>
where
    F: FnOnce() -> Result<T, ReadError> + Send + 'static,
    T: Send + 'static,
{
    if OVERDUE.load(Ordering::SeqCst) >= MAX_OVERDUE {
        return Err(ReadError::Busy);
    }
    let job = Arc::new(Mutex::new(Job::default()));
    let (sender, receiver) = mpsc::sync_channel(1);
    let thread_job = Arc::clone(&job);
    let spawned = std::thread::Builder::new()
        .name("bor-read".to_owned())
        .stack_size(READER_STACK_BYTES)
        .spawn(move || {
            let result = catch_unwind(AssertUnwindSafe(read))
                .unwrap_or_else(|panic| Err(panicked(kind, &*panic)));
            let mut job = thread_job
                .lock()
                .unwrap_or_else(|poisoned| poisoned.into_inner());
            job.finished = true;
            if job.abandoned {
                OVERDUE.fetch_sub(1, Ordering::SeqCst);
            }
            drop(job);
            // The caller may have given up and gone: nobody to tell then.
            let _ = sender.send(result);
        });
    if spawned.is_err() {
        return Err(ReadError::Busy);
    }
    match receiver.recv_timeout(deadline) {
        Ok(result) => result,
        Err(mpsc::RecvTimeoutError::Disconnected) => Err(ReadError::malformed(
            kind,
            "its reader stopped without an answer",
        )),
        Err(mpsc::RecvTimeoutError::Timeout) => {
            let mut job = job.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
            let finished = job.finished;
            if !finished {
                job.abandoned = true;
                OVERDUE.fetch_add(1, Ordering::SeqCst);
            }
            drop(job);
            // Finished between the timeout and the lock: its answer is on its way.
            match finished.then(|| receiver.recv()) {
                Some(Ok(result)) => result,
                _ => Err(ReadError::TimedOut(deadline.as_secs().max(1))),
            }
        }
    }
}

/// Reads still running past their deadline now.
pub fn overdue_reads() -> usize {
    OVERDUE.load(Ordering::SeqCst)
}

fn panicked(kind: &'static str, panic: &(dyn Any + Send)) -> ReadError {
    let detail = panic
        .downcast_ref::<&str>()
        .map(|text| (*text).to_owned())
        .or_else(|| panic.downcast_ref::<String>().cloned())
        .unwrap_or_default();
    let detail: String = detail.chars().take(120).collect();
    let reason = if detail.is_empty() {
        "its reader gave up on a damaged structure".to_owned()
    } else {
        format!("its reader gave up on a damaged structure ({detail})")
    };
    ReadError::malformed(kind, reason)
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::{MAX_OVERDUE, overdue_reads, run_with_deadline};
    use crate::{ExtractedDocument, ReadError};

    fn document() -> Result<ExtractedDocument, ReadError> {
        Ok(ExtractedDocument {
            title: None,
            content_type: "text/plain",
            text: "done".to_owned(),
            page_starts: Vec::new(),
            pages: Vec::new(),
        })
    }

    /// One test, so that nothing else counts overdue reads meanwhile.
    #[test]
    fn reads_that_overrun_are_given_up_and_too_many_of_them_refuse_new_ones() {
        assert_eq!(
            run_with_deadline(Duration::from_secs(5), "text file", document),
            document()
        );

        let slow = || {
            std::thread::sleep(Duration::from_millis(600));
            document()
        };
        for _ in 0..MAX_OVERDUE {
            assert_eq!(
                run_with_deadline(Duration::from_millis(20), "text file", slow),
                Err(ReadError::TimedOut(1))
            );
        }
        assert_eq!(overdue_reads(), MAX_OVERDUE);
        assert_eq!(
            run_with_deadline(Duration::from_secs(5), "text file", document),
            Err(ReadError::Busy)
        );
        for _ in 0..100 {
            if overdue_reads() == 0 {
                break;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        assert_eq!(
            overdue_reads(),
            0,
            "the overdue reads finished and were counted off"
        );

        let panicking = || -> Result<ExtractedDocument, ReadError> { panic!("index out of range") };
        assert_eq!(
            run_with_deadline(Duration::from_secs(5), "PDF", panicking).map_err(|error| error.to_string()),
            Err("not a readable PDF: its reader gave up on a damaged structure (index out of range)".to_owned())
        );
    }
}
