//! `bor-loadgen`: drives bor (or any OpenAI-compatible server) with many concurrent
//! streaming requests over HTTP/1.1 and prints one JSON summary: time to first token,
//! tokens per second, outcomes, and the server's CPU time and resident memory read from
//! `/proc` (with `--pid`).
//!
//! ```text
//! bor-loadgen closed --addr 127.0.0.1:8000 --path /api/chat --protocol bor \
//!     --body '{"message":"What is bor?"}' --clients 100 --requests 5000 --pid 1234
//! bor-loadgen open --addr … --rate 400 --duration-s 10 …
//! ```

mod http;
mod process;
mod run;
mod stream;

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::rc::Rc;
use std::time::{Duration, Instant};

use clap::{Args, Parser, Subcommand};
use serde_json::{Value, json};

use process::ProcessSet;
use run::{Outcome, Shared, Target};
use stream::Protocol;

/// How often the server's memory is sampled during a run.
const MEMORY_SAMPLE_INTERVAL: Duration = Duration::from_millis(100);

#[derive(Parser)]
#[command(version, about = "Load generator for streaming chat endpoints")]
struct Cli {
    #[command(subcommand)]
    mode: Mode,
}

#[derive(Subcommand)]
enum Mode {
    /// A fixed number of clients, each sending its next request when the last ended.
    Closed {
        #[command(flatten)]
        common: Common,
        #[arg(long)]
        clients: usize,
        /// Requests to send in all (the run also stops after --duration-s).
        #[arg(long, default_value_t = u64::MAX)]
        requests: u64,
        #[arg(long, default_value_t = 3600.0)]
        duration_s: f64,
        /// Clients that join per second at the start.
        #[arg(long, default_value_t = 2000.0)]
        ramp_per_s: f64,
    },
    /// Requests started at a fixed rate, whatever is still in flight.
    Open {
        #[command(flatten)]
        common: Common,
        /// Requests per second.
        #[arg(long)]
        rate: f64,
        #[arg(long)]
        duration_s: f64,
    },
}

#[derive(Args)]
struct Common {
    /// Server address, e.g. 127.0.0.1:8000.
    #[arg(long)]
    addr: SocketAddr,
    #[arg(long)]
    path: String,
    #[arg(long, value_enum)]
    protocol: Protocol,
    /// The JSON body of every request. `{client}` in it becomes the number of the
    /// closed loop's client that sends it, in 12 digits (the last group of a UUID: each
    /// client can continue a conversation of its own).
    #[arg(long)]
    body: String,
    /// Sent as `Authorization: Bearer`.
    #[arg(long)]
    bearer: Option<String>,
    /// A request that has not ended after this many seconds counts as timed out.
    #[arg(long, default_value_t = 120.0)]
    timeout_s: f64,
    /// Server process to measure (with its descendants); repeatable.
    #[arg(long)]
    pid: Vec<u32>,
}

/// Where a body names the client that sends it.
const CLIENT_MARK: &str = "{client}";

/// The body each of `clients` clients sends: one for all when `body` names no client.
fn client_bodies(body: &str, clients: usize) -> Vec<String> {
    if !body.contains(CLIENT_MARK) {
        return vec![body.to_owned()];
    }
    (0..clients)
        .map(|client| body.replace(CLIENT_MARK, &format!("{client:012}")))
        .collect()
}

fn main() -> std::io::Result<()> {
    let cli = Cli::parse();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let local = tokio::task::LocalSet::new();
    let summary = local.block_on(&runtime, run(cli.mode));
    println!("{summary}");
    Ok(())
}

async fn run(mode: Mode) -> Value {
    let common = match &mode {
        Mode::Closed { common, .. } | Mode::Open { common, .. } => common,
    };
    let clients = match &mode {
        Mode::Closed { clients, .. } => *clients,
        Mode::Open { .. } => 1,
    };
    let target = Target {
        addr: common.addr,
        requests: client_bodies(&common.body, clients)
            .iter()
            .map(|body| {
                http::post_json(
                    &common.addr.to_string(),
                    &common.path,
                    body,
                    common.bearer.as_deref(),
                )
            })
            .collect(),
        protocol: common.protocol,
        timeout: Duration::from_secs_f64(common.timeout_s),
    };
    let server = ProcessSet::new(common.pid.clone());
    let shared = Shared::new(target);
    let pids_before = server.pids();
    let cpu_before = server.cpu_seconds(&pids_before);
    let rss_before = ProcessSet::rss_kib(&pids_before);
    let peak_rss = Rc::new(std::cell::Cell::new(rss_before));
    let watcher = {
        let peak_rss = Rc::clone(&peak_rss);
        let pids = pids_before.clone();
        tokio::task::spawn_local(async move {
            loop {
                peak_rss.set(peak_rss.get().max(ProcessSet::rss_kib(&pids)));
                tokio::time::sleep(MEMORY_SAMPLE_INTERVAL).await;
            }
        })
    };
    let started = Instant::now();
    let (mode_name, settings) = match mode {
        Mode::Closed {
            clients,
            requests,
            duration_s,
            ramp_per_s,
            ..
        } => {
            run::closed_loop(
                Rc::clone(&shared),
                clients,
                requests,
                Duration::from_secs_f64(duration_s),
                ramp_per_s,
            )
            .await;
            ("closed", json!({"clients": clients}))
        }
        Mode::Open {
            rate, duration_s, ..
        } => {
            run::open_loop(
                Rc::clone(&shared),
                rate,
                Duration::from_secs_f64(duration_s),
            )
            .await;
            ("open", json!({"rate": rate, "duration_s": duration_s}))
        }
    };
    let wall = started.elapsed().as_secs_f64();
    watcher.abort();
    let pids_after = server.pids();
    let cpu = server.cpu_seconds(&pids_after) - cpu_before;
    peak_rss.set(peak_rss.get().max(ProcessSet::rss_kib(&pids_after)));
    summarize(
        &shared,
        mode_name,
        settings,
        wall,
        (!server.is_empty()).then(|| {
            json!({
                "pids": pids_after,
                "cpu_s": cpu,
                "rss_before_kib": rss_before,
                "rss_peak_kib": peak_rss.get(),
            })
        }),
    )
}

fn summarize(
    shared: &Shared,
    mode: &str,
    settings: Value,
    wall: f64,
    server: Option<Value>,
) -> Value {
    let samples = shared.samples.borrow();
    let mut outcomes: BTreeMap<String, u64> = BTreeMap::new();
    for sample in samples.iter() {
        *outcomes.entry(sample.outcome.label()).or_default() += 1;
    }
    let complete = samples
        .iter()
        .filter(|s| s.outcome == Outcome::Complete)
        .count() as u64;
    let tokens: u64 = samples.iter().map(|s| s.tokens).sum();
    let ttft: Vec<Duration> = samples.iter().filter_map(|s| s.ttft).collect();
    let total: Vec<Duration> = samples.iter().map(|s| s.total).collect();
    let requests = samples.len() as u64;
    let mut summary = json!({
        "mode": mode,
        "settings": settings,
        "requests": requests,
        "complete": complete,
        "errors": requests - complete,
        "outcomes": outcomes,
        "wall_s": wall,
        "requests_per_s": requests as f64 / wall,
        "tokens": tokens,
        "tokens_per_s": tokens as f64 / wall,
        "ttft_ms": percentiles(ttft),
        "total_ms": percentiles(total),
        "peak_streaming": shared.peak_streaming.get(),
    });
    if let Some(mut server) = server {
        let cpu = server["cpu_s"].as_f64().unwrap_or(0.0);
        server["cpu_per_request_ms"] = json!(per(cpu * 1e3, requests));
        server["cpu_per_token_us"] = json!(per(cpu * 1e6, tokens));
        summary["server"] = server;
    }
    summary
}

fn per(amount: f64, count: u64) -> Option<f64> {
    (count > 0).then(|| amount / count as f64)
}

/// p50, p90, p99, max and mean in milliseconds (nearest rank).
fn percentiles(mut values: Vec<Duration>) -> Value {
    if values.is_empty() {
        return Value::Null;
    }
    values.sort();
    let at = |q: f64| {
        let rank = ((q * values.len() as f64).ceil() as usize).clamp(1, values.len());
        values[rank - 1].as_secs_f64() * 1e3
    };
    let mean = values.iter().map(Duration::as_secs_f64).sum::<f64>() / values.len() as f64 * 1e3;
    json!({
        "count": values.len(),
        "p50": at(0.50),
        "p90": at(0.90),
        "p99": at(0.99),
        "max": at(1.0),
        "mean": mean,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_body_that_names_the_client_is_made_for_each() {
        assert_eq!(client_bodies(r#"{"a":1}"#, 3), [r#"{"a":1}"#]);
        assert_eq!(
            client_bodies(r#"{"id":"x-{client}"}"#, 2),
            [r#"{"id":"x-000000000000"}"#, r#"{"id":"x-000000000001"}"#]
        );
    }
}
