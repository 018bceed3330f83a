//! Captures the service's log lines (text format) so tests can read the per-turn line.

use std::io::Write;
use std::sync::{Mutex, Once};

static CAPTURED: Mutex<Vec<u8>> = Mutex::new(Vec::new());
static INSTALL: Once = Once::new();

struct Capture;

impl Write for Capture {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        if let Ok(mut captured) = CAPTURED.lock() {
            captured.extend_from_slice(bytes);
        }
        Ok(bytes.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// Installs the capturing subscriber once per test process.
pub fn capture() {
    INSTALL.call_once(|| {
        let _ = tracing_subscriber::fmt()
            .with_env_filter("info")
            .with_ansi(false)
            .with_writer(|| Capture)
            .try_init();
    });
}

/// Everything logged so far in this process.
pub fn all_logs() -> String {
    let captured = CAPTURED.lock().map(|c| c.clone()).unwrap_or_default();
    String::from_utf8_lossy(&captured).into_owned()
}

/// Every captured line that contains `text`.
pub fn log_lines_containing(text: &str) -> Vec<String> {
    all_logs()
        .lines()
        .filter(|line| line.contains(text))
        .map(str::to_owned)
        .collect()
}

/// The `chat turn` lines of one turn.
pub fn turn_log_lines(turn_id: &str) -> Vec<String> {
    log_lines_containing(turn_id)
        .into_iter()
        .filter(|line| line.contains("chat turn"))
        .collect()
}

/// The one `chat turn` line of a turn, once it is written.
pub async fn single_turn_log_line(turn_id: &str) -> String {
    let found = super::eventually(async || !turn_log_lines(turn_id).is_empty()).await;
    assert!(found, "the turn's log line was written");
    let lines = turn_log_lines(turn_id);
    assert_eq!(lines.len(), 1, "{lines:?}");
    lines[0].clone()
}
