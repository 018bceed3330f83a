//! bor's `/v1` API through a client nobody here wrote: the official `openai` Python SDK
//! (from PyPI, in the virtual environment `make test-openai-sdk` prepares), streaming
//! and not, with bor on port 0, the mock LLM and a fresh PostgreSQL database. The SDK
//! side prints what it made of each answer; these tests check that and what bor did.

#![expect(
    clippy::unwrap_used,
    reason = "a test stops at the first unexpected value"
)]

mod support;

use std::time::Duration;

use bor_actors::record::TurnStatus;
use bor_test_support::{TestApp, directed, eventually};
use serde_json::{Value, json};
use support::sdk;

const SLOW_STORY: &str = "once upon a time there was a very long story indeed";

fn slow_story() -> String {
    directed(
        "Tell me a long story",
        json!({"reply": SLOW_STORY, "token_delay_ms": 300}),
    )
}

#[actix_web::test]
async fn the_sdk_lists_and_retrieves_the_model() {
    let app = TestApp::spawn().await;
    let models = sdk(&app, "models", "").await;
    // `bor`, and a model scoped to each readable collection.
    assert_eq!(models["ids"], json!(["bor", "bor/default"]));
    assert_eq!(models["scoped"], "bor/default");
    assert_eq!(models["retrieved"]["id"], "bor");
    assert_eq!(models["retrieved"]["object"], "model");
    assert_eq!(models["retrieved"]["owned_by"], "bor");
    assert!(models["retrieved"]["created"].as_i64().unwrap() > 1_600_000_000);
    let missing = &models["missing"];
    assert_eq!(missing["class"], "NotFoundError");
    assert_eq!(
        (&missing["status"], &missing["code"]),
        (&json!(404), &json!("not_found"))
    );
}

/// What both SDK clients (blocking and async) made of one grounded, retried, reasoned
/// turn with a tool call.
async fn check_streamed_turn(scenario: &str) {
    let app = TestApp::spawn().await;
    let (document_id, _) = app
        .insert_document(
            "Refund policy",
            "Refunds are paid within fourteen days of a return.",
        )
        .await;
    let question = directed(
        "How are refunds paid?",
        json!({"status": 503, "times": 1, "reasoning": "Checking.",
               "tool_calls": [{"name": "search_documents", "arguments": {"query": "refunds"}}],
               "reply": "Within fourteen days."}),
    );
    let streamed = sdk(&app, scenario, &question).await;
    assert_eq!(streamed["error"], Value::Null, "{streamed}");
    assert_eq!(streamed["content"], "Within fourteen days.");
    assert_eq!(streamed["reasoning"], "Checking.Checking.");

    let chunks = streamed["chunks"].as_array().unwrap();
    let first = &chunks[0];
    assert_eq!(
        (&first["role"], &first["content"]),
        (&json!("assistant"), &json!(""))
    );
    let last = chunks.last().unwrap();
    assert_eq!(last["finish_reason"], "stop");
    let bor = &last["bor"];
    assert_eq!(bor["path"], "grounded");
    assert_eq!(bor["sources"][0]["document_id"], document_id);
    let turn_id = bor["turn_id"].as_str().unwrap();
    for chunk in chunks {
        assert_eq!(chunk["id"], format!("chatcmpl-{turn_id}"));
        assert_eq!(chunk["object"], "chat.completion.chunk");
        assert_eq!(chunk["model"], "bor");
    }

    let rows = app.wait_for_rows(1).await;
    assert_eq!(rows[0].turn_id.to_string(), turn_id);
    assert_eq!(rows[0].status, TurnStatus::Done);
    assert_eq!((rows[0].retries, rows[0].tool_calls), (2, 1));
    assert_eq!(rows[0].answer, "Within fourteen days.");
    let last_user = |request: &Value| {
        let messages = request["messages"].as_array().unwrap();
        assert!(
            !request.to_string().contains("Ignored by bor"),
            "the client's system message is left out"
        );
        messages[1]["content"].clone()
    };
    assert_eq!(last_user(&app.mock.chat_requests()[0]), json!(question));
}

#[actix_web::test]
async fn the_sdk_streams_a_turn_and_skips_the_comments() {
    check_streamed_turn("stream").await;
}

#[actix_web::test]
async fn the_async_sdk_streams_a_turn_and_skips_the_comments() {
    check_streamed_turn("stream-async").await;
}

#[actix_web::test]
async fn the_sdk_reads_a_whole_completion() {
    let app = TestApp::spawn().await;
    let question = directed(
        "Think first?",
        json!({"reasoning": "Hmm.", "reply": "Thought it through."}),
    );
    let completion = sdk(&app, "complete", &question).await;
    assert_eq!(completion["error"], Value::Null, "{completion}");
    assert_eq!(completion["object"], "chat.completion");
    assert_eq!(completion["model"], "bor");
    assert_eq!(completion["content"], "Thought it through.");
    assert_eq!(completion["reasoning_content"], "Hmm.");
    assert_eq!(completion["finish_reason"], "stop");
    assert_eq!(completion["usage"], Value::Null);
    let turn_id = completion["bor"]["turn_id"].as_str().unwrap();
    assert_eq!(completion["id"], format!("chatcmpl-{turn_id}"));
    assert_eq!(app.wait_for_rows(1).await[0].turn_id.to_string(), turn_id);
}

#[actix_web::test]
async fn the_sdk_raises_bor_refusals_and_failures_as_status_errors_with_their_codes() {
    let app = TestApp::spawn_with(&[("BOR_LLM_RETRIES", "1")]).await;
    let leak = "<tool_call>{\"name\": \"list_documents\"}</tool_call>";
    let cases = [
        (
            "bor",
            directed("Hi?", json!({"status": 503})),
            "InternalServerError",
            503,
            "llm_unavailable",
        ),
        (
            "bor",
            directed("Hi?", json!({"status": 400})),
            "InternalServerError",
            502,
            "llm_rejected",
        ),
        (
            "bor",
            directed("Hi?", json!({"leak": leak, "leak_always": true})),
            "InternalServerError",
            502,
            "malformed_reply",
        ),
        (
            "bor",
            "   ".to_owned(),
            "BadRequestError",
            400,
            "empty_message",
        ),
        (
            "gpt-4o",
            "Hi?".to_owned(),
            "NotFoundError",
            404,
            "not_found",
        ),
    ];
    let asked: Vec<(&str, &str)> = cases
        .iter()
        .map(|(model, q, ..)| (*model, q.as_str()))
        .collect();
    let answers = sdk(&app, "complete-each", &json!(asked).to_string()).await;
    for ((_, _, class, status, code), answer) in
        cases.iter().zip(answers["results"].as_array().unwrap())
    {
        let error = &answer["error"];
        assert_eq!(error["class"], *class, "{code}: {error}");
        assert_eq!(error["is_status_error"], true);
        assert_eq!(
            (&error["status"], &error["code"]),
            (&json!(status), &json!(code))
        );
        let kind = if *status >= 500 {
            "server_error"
        } else {
            "invalid_request_error"
        };
        assert_eq!(error["type"], kind, "{error}");
        assert!(
            error["request_id"].is_string(),
            "bor's X-Request-Id: {error}"
        );
    }
    // The SDK prefixes the status to bor's copy; the error object itself is bor's.
    let unavailable = &answers["results"][0]["error"];
    let detail = "The language model is not responding — please try again in a moment.";
    assert_eq!(
        unavailable["message"],
        format!("Error code: 503 - {detail}")
    );
    assert_eq!(
        unavailable["body"],
        json!({"message": detail, "type": "server_error", "param": null, "code": "llm_unavailable"})
    );
    assert!(
        app.wait_for_rows(0).await.is_empty(),
        "no row for a failed turn"
    );
}

#[actix_web::test]
async fn a_stream_that_fails_after_its_first_token_raises_the_error_event() {
    let app = TestApp::spawn().await;
    let question = directed(
        "Hi?",
        json!({"drop_after": 2, "reply": "one two three four"}),
    );
    let streamed = sdk(&app, "stream", &question).await;
    assert_eq!(streamed["content"], "one two ");
    let error = &streamed["error"];
    assert_eq!(error["class"], "APIError", "{error}");
    assert_eq!(
        error["is_status_error"], false,
        "the stream had begun with a 200"
    );
    assert_eq!(error["code"], "llm_interrupted");
    assert_eq!(error["type"], "server_error");
    assert_eq!(
        error["message"],
        "The language model dropped the connection — please try again."
    );
    assert_eq!(
        app.mock.chat_requests().len(),
        1,
        "never retried after output"
    );
}

#[actix_web::test]
async fn a_full_service_is_a_503_busy_with_retry_after() {
    let app = TestApp::spawn_with(&[("BOR_MAX_CONCURRENT_TURNS", "1")]).await;
    // A turn whose model never answers holds the only slot while its stream is open.
    let holding = awc::Client::new()
        .post(format!("{}/api/chat", app.address))
        .send_json(&json!({"message": directed("Wait?", json!({"hang": true}))}))
        .await
        .unwrap();
    assert_eq!(holding.status(), 200);
    assert!(eventually(async || app.turns_in_flight() == 1).await);

    let refused = sdk(&app, "complete", "Me too?").await;
    let error = &refused["error"];
    assert_eq!(error["class"], "InternalServerError", "{refused}");
    assert_eq!(
        (&error["status"], &error["code"]),
        (&json!(503), &json!("busy"))
    );
    assert_eq!(error["retry_after"], "1");
    // Leaving an `/api/chat` stream does not stop its turn: Stop does.
    let turn_id = holding
        .headers()
        .get("x-turn-id")
        .and_then(|value| value.to_str().ok())
        .unwrap()
        .to_owned();
    drop(holding);
    let stopped = app
        .send("post", &format!("/api/turns/{turn_id}/stop"), &[])
        .await;
    assert_eq!(stopped.status, 204);
    assert!(eventually(async || app.turns_in_flight() == 0).await);
}

/// The turn ended `stopped` and bor dropped its upstream request.
async fn assert_stopped_and_upstream_dropped(app: &TestApp) -> String {
    assert!(
        app.mock
            .wait_for_client_disconnects_async(1, Duration::from_secs(10))
            .await,
        "the LLM server saw its connection closed"
    );
    let rows = app.wait_for_rows(1).await;
    assert_eq!(rows.len(), 1);
    assert_eq!(rows[0].status, TurnStatus::Stopped);
    assert!(eventually(async || app.turns_in_flight() == 0).await);
    rows[0].answer.clone()
}

#[actix_web::test]
async fn an_sdk_stream_closed_early_stops_the_turn_and_its_upstream_request() {
    let app = TestApp::spawn().await;
    let left = sdk(&app, "leave", &slow_story()).await;
    assert_eq!(left["content"], "once ");
    let answer = assert_stopped_and_upstream_dropped(&app).await;
    assert!(
        answer.starts_with("once") && SLOW_STORY.starts_with(&answer),
        "{answer}"
    );
}

#[actix_web::test]
async fn an_sdk_client_that_gives_up_waiting_stops_the_turn_and_its_upstream_request() {
    let app = TestApp::spawn().await;
    let gave_up = sdk(&app, "give-up", &slow_story()).await;
    assert_eq!(gave_up["error"]["class"], "APITimeoutError", "{gave_up}");
    assert_stopped_and_upstream_dropped(&app).await;
}
