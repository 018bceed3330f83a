//! `make bench-mcp`: what `/mcp` adds to a search. The same query, as a `search` tool
//! call over `POST /mcp` and as `POST /api/search`, alternately against one bor (mock
//! LLM, a knowledge base of one-chunk documents), each timed from the client: p50 and
//! p99 of both and the difference, written to the MCP section of `bench/RESULTS.md`.
//!
//! `cargo bench --bench mcp -- [--documents N] [--runs N] [--no-write]`. Needs
//! PostgreSQL at `BOR_TEST_DATABASE_URL`, as the tests do.

#![expect(
    clippy::expect_used,
    reason = "a benchmark stops at the first unexpected value"
)]

use std::path::Path;
use std::time::Instant;

use bor::eval::metrics::percentile;
use bor_test_support::{TestApp, write_results_section};
use serde_json::{Value, json};

const START: &str = "<!-- mcp-bench:start -->";
const END: &str = "<!-- mcp-bench:end -->";
/// Requests of each kind before the measured ones.
const WARM_UP: usize = 50;
const QUERY: &str = "how often is the kettle descaled";
const TOP_K: usize = 8;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let number = |flag: &str, default: usize| {
        args.iter()
            .position(|arg| arg == flag)
            .and_then(|i| args.get(i + 1))
            .and_then(|value| value.parse().ok())
            .unwrap_or(default)
    };
    let documents = number("--documents", 2_000);
    let runs = number("--runs", 1_000);
    let write = !args.iter().any(|arg| arg == "--no-write");
    let timings = actix_web::rt::System::new().block_on(run(documents, runs));
    let section = section(documents, runs, timings);
    println!("{section}");
    if write {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("bench/RESULTS.md");
        match write_results_section(&path, START, END, &section) {
            Ok(()) => eprintln!("written to {}", path.display()),
            Err(error) => eprintln!("cannot write {}: {error}", path.display()),
        }
    }
}

/// Milliseconds of each request, `/api/search` then `/mcp`.
struct Timings {
    api: Vec<f64>,
    mcp: Vec<f64>,
}

async fn run(documents: usize, runs: usize) -> Timings {
    let app = TestApp::spawn_with(&[("BOR_LOG", "warn")]).await;
    let started = Instant::now();
    for n in 0..documents {
        let text = format!(
            "Note {n}: descale the kettle on floor {} every {} weeks, and log it in book {}.",
            n % 7,
            n % 5 + 1,
            n % 13
        );
        let embedding = app.mock_embedding(&text).await;
        app.insert_document_with(&format!("Note {n}"), &text, embedding)
            .await;
    }
    let indexed =
        bor_test_support::eventually_within(std::time::Duration::from_secs(60), async || {
            app.state.library.index().stats().documents == documents
        })
        .await;
    assert!(indexed, "the index holds every document");
    eprintln!("{documents} documents in {:.1?}", started.elapsed());

    let client = TestApp::client();
    let api_url = format!("{}/api/search", app.address);
    let mcp_url = format!("{}/mcp", app.address);
    let api_body = json!({"query": QUERY, "top_k": TOP_K});
    let mcp_body = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": {"name": "search", "arguments": {"query": QUERY, "top_k": TOP_K}}});
    let timed = async |url: &str, body: &Value| -> f64 {
        let started = Instant::now();
        let mut response = client
            .post(url)
            .send_json(body)
            .await
            .expect("the request is answered");
        let body = response.body().await.expect("the body is read");
        let ms = started.elapsed().as_secs_f64() * 1e3;
        assert_eq!(response.status(), 200, "{}", String::from_utf8_lossy(&body));
        ms
    };
    let mut timings = Timings {
        api: Vec::with_capacity(runs),
        mcp: Vec::with_capacity(runs),
    };
    for round in 0..WARM_UP + runs {
        let api = timed(&api_url, &api_body).await;
        let mcp = timed(&mcp_url, &mcp_body).await;
        if round >= WARM_UP {
            timings.api.push(api);
            timings.mcp.push(mcp);
        }
    }
    timings
}

fn section(documents: usize, runs: usize, mut timings: Timings) -> String {
    let (api_p50, api_p99) = (
        percentile(&mut timings.api, 50.0),
        percentile(&mut timings.api, 99.0),
    );
    let (mcp_p50, mcp_p99) = (
        percentile(&mut timings.mcp, 50.0),
        percentile(&mut timings.mcp, 99.0),
    );
    format!(
        "{START}\n## MCP: what `/mcp` adds to a search (`make bench-mcp`)\n\n\
         One query (top {TOP_K}) over {documents} one-chunk documents, against the mock LLM's \
         embeddings, {runs} times each way after {WARM_UP} to warm up, the two kinds \
         alternating, one request at a time from a client on the same machine of {} cores. \
         Both run the same search (`KnowledgeService::measured_search`); `/mcp` adds the \
         JSON-RPC envelope, its own result shape and the text copy of it.\n\n\
         | request | p50 | p99 |\n|---|---|---|\n\
         | `POST /api/search` | {api_p50:.2} ms | {api_p99:.2} ms |\n\
         | `search` over `POST /mcp` | {mcp_p50:.2} ms | {mcp_p99:.2} ms |\n\
         | difference | {:+.2} ms | {:+.2} ms |\n{END}\n",
        std::thread::available_parallelism().map_or(1, usize::from),
        mcp_p50 - api_p50,
        mcp_p99 - api_p99,
    )
}
