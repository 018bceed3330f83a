//! `GET /metrics`: the values move as turns run. The registry is process-wide and may
//! be shared with other tests, so counters are compared before and after (at least the
//! expected change); gauges read at scrape time belong to the scraped app alone.

use serde_json::json;

use crate::support::*;

const LEAK: &str = "<tool_call>\n{\"name\": \"search_documents\", \"arguments\": {\"query\": \"x\"}}\n</tool_call>";

/// One scrape, parsed to `series → value`.
struct Scrape(String);

impl Scrape {
    async fn of(app: &TestApp) -> Scrape {
        let reply = app.get("/metrics", None).await;
        assert_eq!(reply.status, 200);
        let content_type = reply.headers.get("content-type").expect("a content type");
        assert!(
            content_type
                .to_str()
                .is_ok_and(|v| v.starts_with("text/plain; version=0.0.4")),
            "{content_type:?}"
        );
        Scrape(reply.text())
    }

    /// The value of `series` (name with its labels, as exposed); 0 when absent.
    fn value(&self, series: &str) -> f64 {
        self.0
            .lines()
            .find_map(|line| line.strip_prefix(series)?.strip_prefix(' '))
            .map_or(0.0, |value| value.parse().expect("a number"))
    }
}

/// Asserts that `series` grew by at least `by` between two scrapes.
fn grew(before: &Scrape, after: &Scrape, series: &str, by: f64) {
    let (old, new) = (before.value(series), after.value(series));
    assert!(new >= old + by, "{series}: {old} → {new}, expected +{by}");
}

#[actix_web::test]
async fn turn_metrics_move_as_turns_run() {
    let app = TestApp::spawn().await;
    app.insert_document("Otter facts", "Otters hold hands while they sleep.")
        .await;
    let before = Scrape::of(&app).await;

    // Deflected, clean.
    assert_eq!(app.chat("What is bor?").await.last().event, "done");
    // Grounded, with two tool calls (one of a tool bor does not offer) and a retry of
    // each of its two chat requests (the failure hits the first attempt of each body).
    let grounded = app
        .chat(&directed(
            "Do otters hold hands while they sleep?",
            json!({"status": 503, "times": 1,
                   "tool_calls": [{"name": "list_documents"}, {"name": "launch_rockets"}],
                   "reply": "Yes, they do."}),
        ))
        .await;
    assert_eq!(grounded.last().data["path"], "grounded");
    assert_eq!(grounded.last().data["retries"], 2);
    // A reply of only markup, recovered.
    let recovered = app
        .chat(&directed(
            "Hello?",
            json!({"leak": LEAK, "reply": "Plain answer."}),
        ))
        .await;
    assert_eq!(recovered.last().data["recovered"], true);
    let stripped = recovered.last().data["scaffold_stripped"].as_f64().unwrap();
    // Rejected by the LLM server.
    let rejected = app.chat(&directed("Hello?", json!({"status": 400}))).await;
    assert_eq!(rejected.last().data["code"], "llm_rejected");
    app.wait_for_rows(3).await;

    let after = Scrape::of(&app).await;
    grew(
        &before,
        &after,
        r#"bor_turns_total{outcome="done",path="deflected"}"#,
        2.0,
    );
    grew(
        &before,
        &after,
        r#"bor_turns_total{outcome="done",path="grounded"}"#,
        1.0,
    );
    grew(
        &before,
        &after,
        r#"bor_turns_total{outcome="error",path="deflected"}"#,
        1.0,
    );
    grew(
        &before,
        &after,
        r#"bor_turn_errors_total{code="llm_rejected"}"#,
        1.0,
    );
    grew(&before, &after, "bor_turn_retries_total", 2.0);
    grew(
        &before,
        &after,
        r#"bor_turn_recoveries_total{result="recovered"}"#,
        1.0,
    );
    grew(
        &before,
        &after,
        "bor_scaffold_stripped_chars_total",
        stripped,
    );
    grew(
        &before,
        &after,
        r#"bor_tool_calls_total{tool="list_documents"}"#,
        1.0,
    );
    grew(
        &before,
        &after,
        r#"bor_tool_calls_total{tool="unknown"}"#,
        1.0,
    );
    assert!(
        !after.0.contains("launch_rockets"),
        "tool labels are bounded"
    );
    grew(&before, &after, "bor_turn_first_delta_seconds_count", 3.0);
    // Each of the four turns embedded and retrieved; the grounded one chatted twice
    // around its tools, the recovered one once with its recovery.
    for (phase, turns) in [
        ("embedding", 4.0),
        ("retrieving", 4.0),
        ("chatting", 5.0),
        ("running_tools", 1.0),
    ] {
        grew(
            &before,
            &after,
            &format!(r#"bor_turn_phase_seconds_count{{phase="{phase}"}}"#),
            turns,
        );
    }
    grew(
        &before,
        &after,
        r#"bor_turn_duration_seconds_count{outcome="done"}"#,
        3.0,
    );
    grew(
        &before,
        &after,
        r#"bor_llm_request_duration_seconds_count{endpoint="embeddings",status="200"}"#,
        4.0,
    );
    grew(
        &before,
        &after,
        r#"bor_llm_request_duration_seconds_count{endpoint="chat",status="503"}"#,
        2.0,
    );
    grew(
        &before,
        &after,
        r#"bor_llm_request_duration_seconds_count{endpoint="chat",status="400"}"#,
        1.0,
    );
    assert_eq!(after.value("bor_log_queue_depth"), 0.0);
    assert!(
        after.value("bor_turns_kept") >= 1.0,
        "the turn's frames are kept for the window"
    );
    assert!(after.value("bor_turn_frames_kept_bytes") > 0.0);
    assert_eq!(after.value(r#"bor_db_pool_connections{state="max"}"#), 8.0);
    assert!(after.value(r#"bor_db_pool_connections{state="open"}"#) >= 1.0);
}

#[actix_web::test]
async fn turns_in_flight_are_read_at_scrape_time() {
    let app = TestApp::spawn().await;
    let question = directed(
        "Tell me slowly",
        json!({"reply": "one two three four five six", "token_delay_ms": 300}),
    );
    let turn = app.chat(&question);
    let observed = async {
        let running =
            eventually(async || Scrape::of(&app).await.value("bor_turns_in_flight") == 1.0).await;
        assert!(running, "the running turn is counted");
    };
    let (response, ()) = futures_util::join!(turn, observed);
    assert_eq!(response.last().event, "done");
    assert!(eventually(async || Scrape::of(&app).await.value("bor_turns_in_flight") == 0.0).await);
}

/// A conversation's third turn is served from the history cache its second turn's
/// read filled; the cache's size is read at scrape time.
#[actix_web::test]
async fn histories_read_are_counted_by_where_they_came_from() {
    let app = TestApp::spawn().await;
    let before = Scrape::of(&app).await;
    let first = app.chat("Where do owls live?").await;
    let id = first.last().data["conversation_id"]
        .as_str()
        .expect("a conversation id")
        .to_owned();
    for (n, question) in ["And bats?", "And moles?"].into_iter().enumerate() {
        app.wait_for_rows(n + 1).await;
        let turn = app
            .chat_json(json!({ "message": question, "conversation_id": id }))
            .await;
        assert_eq!(turn.last().event, "done");
    }
    app.wait_for_rows(3).await;
    let after = Scrape::of(&app).await;
    grew(
        &before,
        &after,
        r#"bor_history_reads_total{from="database"}"#,
        1.0,
    );
    grew(
        &before,
        &after,
        r#"bor_history_reads_total{from="cache"}"#,
        1.0,
    );
    assert_eq!(
        after.value(r#"bor_history_cache{measure="histories"}"#),
        1.0
    );
    assert!(after.value(r#"bor_history_cache{measure="bytes"}"#) > 0.0);
}
