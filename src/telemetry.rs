//! The one place that sets up logging: a tracing subscriber reading `BOR_LOG`.

use std::io::IsTerminal;

use tracing_subscriber::EnvFilter;

/// Installs the process-wide subscriber (text lines on stderr). Call once, at start.
pub fn init(filter: &str) {
    let filter = EnvFilter::try_new(filter).unwrap_or_else(|_| EnvFilter::new("info"));
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_target(false)
        .with_ansi(std::io::stderr().is_terminal())
        .try_init();
}
