//! The one place that sets up logging: a tracing subscriber reading `BOR_LOG`, writing
//! text or JSON lines (`BOR_LOG_FORMAT`) to stderr.
//!
//! Spans carry the context of a line: `request{request_id,method,path}` for everything
//! logged while serving a request, `turn{turn_id}` for everything a chat turn logs
//! (its LLM actor's lines included). Text lines show them before the message; JSON
//! lines list them under `spans`, the innermost also under `span`. Secrets and prompts
//! are never logged at info.

use std::io::IsTerminal;

use tracing_subscriber::EnvFilter;

use crate::config::LogFormat;

/// Installs the process-wide subscriber. Call once, at start.
pub fn init(filter: &str, format: LogFormat) {
    let filter = EnvFilter::try_new(filter).unwrap_or_else(|_| EnvFilter::new("info"));
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        // A line that cannot be written is dropped: by default the subscriber would
        // report that with `eprintln!`, which panics when stderr is gone (a terminal
        // closed, `make run | tee log` after Ctrl-C) and takes the stop sequence with it.
        .log_internal_errors(false)
        .with_target(false);
    let _ = match format {
        LogFormat::Text => builder
            .with_ansi(std::io::stderr().is_terminal())
            .try_init(),
        LogFormat::Json => builder
            .json()
            .flatten_event(true)
            .with_current_span(true)
            .with_span_list(true)
            .try_init(),
    };
}
