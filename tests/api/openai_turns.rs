//! Turns through `/v1/chat/completions`: the same turn as `/api/chat` (what the mock
//! LLM received, the `query_log` row, the log line), encoded as OpenAI chunks or one
//! completion.

use std::time::Duration;

use bor_actors::record::{TurnPath, TurnStatus};
use futures_util::StreamExt;
use serde_json::{Value, json};

use crate::support::*;

const LEAK: &str = "<tool_call>\n{\"name\": \"search_documents\", \"arguments\": {\"query\": \"x\"}}\n</tool_call>";

fn now() -> i64 {
    chrono::Utc::now().timestamp()
}

#[actix_web::test]
async fn a_streamed_completion_is_the_turn_in_chunks() {
    let app = TestApp::spawn().await;
    let started = now();
    let response = app.complete("What is bor?", true).await;

    assert_eq!(response.status, 200);
    assert_eq!(
        response.headers.get("content-type").unwrap(),
        "text/event-stream"
    );
    assert_eq!(response.headers.get("cache-control").unwrap(), "no-cache");
    assert_eq!(response.headers.get("x-accel-buffering").unwrap(), "no");
    assert_eq!(response.events.last(), Some(&StreamEvent::Done));

    let chunks = response.data();
    let turn_id = response.turn_id();
    for chunk in &chunks {
        assert_eq!(chunk["id"], format!("chatcmpl-{turn_id}"));
        assert_eq!(chunk["object"], "chat.completion.chunk");
        assert_eq!(chunk["model"], "bor");
        let created = chunk["created"].as_i64().unwrap();
        assert!((started..=now()).contains(&created), "{created}");
        assert_eq!(chunk["choices"].as_array().unwrap().len(), 1);
    }
    assert_eq!(
        chunks[0]["choices"][0]["delta"],
        json!({"role": "assistant", "content": ""})
    );
    assert_eq!(response.content(), "Mock answer: What is bor?");
    let last = response.last_data();
    assert_eq!(last["choices"][0]["delta"], json!({}));
    assert_eq!(last["choices"][0]["finish_reason"], "stop");
    assert_eq!(
        last["bor"],
        json!({"turn_id": turn_id, "path": "deflected", "sources": []})
    );
    assert!(
        chunks[..chunks.len() - 1]
            .iter()
            .all(|c| c["choices"][0]["finish_reason"].is_null() && c.get("bor").is_none())
    );

    let chats = app.mock.chat_requests();
    assert_eq!(chats.len(), 1);
    assert_eq!(
        chats[0]["messages"][1],
        json!({"role": "user", "content": "What is bor?"})
    );
    let rows = app.wait_for_rows(1).await;
    assert_eq!(rows[0].turn_id.to_string(), turn_id);
    assert_eq!(
        (rows[0].status, rows[0].path),
        (TurnStatus::Done, TurnPath::Deflected)
    );
    assert_eq!(rows[0].question, "What is bor?");
    assert_eq!(rows[0].answer, "Mock answer: What is bor?");
    let line = single_turn_log_line(&turn_id).await;
    assert!(
        line.contains("path=deflected outcome=done rounds=1 ")
            && line.ends_with("retries=0 scaffold_stripped=0"),
        "{line}"
    );
}

#[actix_web::test]
async fn retries_tools_and_thinking_reach_a_stream_as_comments_and_reasoning() {
    let app = TestApp::spawn().await;
    let (document_id, chunk_id) = app
        .insert_document(
            "Refund policy",
            "Refunds are paid within fourteen days of a return.",
        )
        .await;
    let question = directed(
        "How are refunds paid?",
        json!({"status": 503, "times": 1, "reasoning": "Let me look.",
               "tool_calls": [{"name": "search_documents", "arguments": {"query": "refunds paid"}}],
               "reply": "Within fourteen days."}),
    );
    let response = app.complete(&question, true).await;

    // Each of the two chat requests fails once before it streams anything.
    let comments = response.comments();
    assert_eq!(comments.len(), 4, "{comments:?}");
    assert_eq!(comments[0], r#"retry {"attempt":1,"max":3}"#);
    assert_eq!(comments[3], r#"retry {"attempt":1,"max":3}"#);
    let tool = |comment: &str| -> Value {
        serde_json::from_str(comment.strip_prefix("tool ").unwrap()).unwrap()
    };
    assert_eq!(tool(comments[1])["name"], "search_documents");
    assert_eq!(tool(comments[1])["phase"], "start");
    assert_eq!(tool(comments[2])["phase"], "end");
    assert_eq!(tool(comments[2])["ok"], true);
    let position =
        |wanted: &dyn Fn(&StreamEvent) -> bool| response.events.iter().position(wanted).unwrap();
    let first_retry = position(&|e| matches!(e, StreamEvent::Comment(c) if c.starts_with("retry")));
    let first_reasoning = position(
        &|e| matches!(e, StreamEvent::Data(chunk) if chunk["choices"][0]["delta"]["reasoning_content"].is_string()),
    );
    assert!(first_retry < first_reasoning, "{:?}", response.events);

    assert_eq!(response.reasoning(), "Let me look.Let me look.");
    assert_eq!(response.content(), "Within fourteen days.");
    let bor = &response.last_data()["bor"];
    assert_eq!(bor["path"], "grounded");
    assert_eq!(bor["sources"][0]["document_id"], document_id);
    assert_eq!(bor["sources"][0]["chunk_id"], chunk_id);
    assert_eq!(bor["sources"][0]["title"], "Refund policy");

    let rows = app.wait_for_rows(1).await;
    assert_eq!((rows[0].retries, rows[0].tool_calls), (2, 1));
    assert_eq!(rows[0].sources, bor["sources"]);
}

#[actix_web::test]
async fn keep_alives_are_comments() {
    let app = TestApp::spawn().await;
    let question = directed(
        "Slowly?",
        json!({"reply": "one two", "token_delay_ms": 1500}),
    );
    let response = app.complete(&question, true).await;
    let keep_alives = response
        .events
        .iter()
        .filter(|e| **e == StreamEvent::Comment("keep-alive".to_owned()))
        .count();
    assert!(keep_alives >= 2, "{:?}", response.events);
    assert_eq!(response.content(), "one two");
    assert_eq!(response.events.last(), Some(&StreamEvent::Done));
}

#[actix_web::test]
async fn a_failure_after_the_first_token_ends_the_stream_with_an_error_object() {
    let app = TestApp::spawn().await;
    let question = directed(
        "Hello?",
        json!({"drop_after": 2, "reply": "one two three four"}),
    );
    let response = app.complete(&question, true).await;
    assert_eq!(response.content(), "one two ");
    assert_eq!(
        response.last_data(),
        &json!({"error": {
            "message": "The language model dropped the connection — please try again.",
            "type": "server_error", "param": null, "code": "llm_interrupted"}})
    );
    assert_eq!(response.events.last(), Some(&StreamEvent::Done));
    assert_eq!(
        app.mock.chat_requests().len(),
        1,
        "never retried after output"
    );
    assert!(app.query_log().await.is_empty());
}

#[actix_web::test]
async fn a_dead_endpoint_is_retried_then_ends_the_stream_with_llm_unavailable() {
    let app = TestApp::spawn().await;
    let response = app
        .complete(&directed("Hello?", json!({"status": 503})), true)
        .await;
    assert_eq!(
        response.comments(),
        vec![
            r#"retry {"attempt":1,"max":3}"#,
            r#"retry {"attempt":2,"max":3}"#,
            r#"retry {"attempt":3,"max":3}"#
        ]
    );
    assert_eq!(response.last_data()["error"]["code"], "llm_unavailable");
    assert_eq!(
        response.last_data()["error"]["message"],
        "The language model is not responding — please try again in a moment."
    );
    assert_eq!(app.mock.chat_requests().len(), 4);
}

#[actix_web::test]
async fn leaked_markup_is_stripped_and_recovered_in_both_encodings() {
    let app = TestApp::spawn().await;
    let question = directed("Hello?", json!({"leak": LEAK, "reply": "Plain answer."}));
    let streamed = app.complete(&question, true).await;
    assert_eq!(streamed.content(), "Plain answer.");
    let whole = app.complete(&question, false).await;
    assert_eq!(
        whole.json.as_ref().unwrap()["choices"][0]["message"]["content"],
        "Plain answer."
    );
    for wire in [
        format!("{:?}", streamed.events),
        whole.json.as_ref().unwrap().to_string(),
    ] {
        assert!(!wire.contains("tool_call"), "{wire}");
    }
    assert_eq!(app.mock.chat_requests().len(), 4, "one recovery per turn");
    let rows = app.wait_for_rows(2).await;
    assert!(rows.iter().all(|row| row.recovered));
    assert!(
        rows.iter()
            .all(|row| row.scaffold_stripped as usize == LEAK.chars().count())
    );
}

#[actix_web::test]
async fn scaffolding_twice_is_a_malformed_reply_in_both_encodings() {
    let app = TestApp::spawn().await;
    let question = directed("Hello?", json!({"leak": LEAK, "leak_always": true}));
    let streamed = app.complete(&question, true).await;
    assert_eq!(streamed.last_data()["error"]["code"], "malformed_reply");
    assert_eq!(streamed.content(), "");
    let whole = app.complete(&question, false).await;
    assert_eq!(whole.status, 502);
    assert_eq!(
        whole.error(),
        &json!({"message": "The model returned a malformed reply — please try again.",
                "type": "server_error", "param": null, "code": "malformed_reply"})
    );
    assert!(app.query_log().await.is_empty());
}

#[actix_web::test]
async fn a_completion_without_stream_is_one_object() {
    let app = TestApp::spawn().await;
    let question = directed(
        "Think first?",
        json!({"reasoning": "Hmm, yes.", "reply": "Done thinking."}),
    );
    let response = app.complete(&question, false).await;
    assert_eq!(response.status, 200);
    assert!(
        response
            .headers
            .get("content-type")
            .unwrap()
            .to_str()
            .unwrap()
            .starts_with("application/json")
    );
    let completion = response.json.as_ref().unwrap();
    let turn_id = response.turn_id();
    assert_eq!(completion["id"], format!("chatcmpl-{turn_id}"));
    assert_eq!(completion["object"], "chat.completion");
    assert_eq!(completion["model"], "bor");
    assert!(completion["created"].as_i64().unwrap() <= now());
    assert_eq!(
        completion["choices"],
        json!([{"index": 0, "finish_reason": "stop", "message": {
            "role": "assistant", "content": "Done thinking.", "reasoning_content": "Hmm, yes."}}])
    );
    assert_eq!(
        completion["bor"],
        json!({"turn_id": turn_id, "path": "deflected", "sources": []})
    );
    assert!(
        completion.get("usage").is_none(),
        "no token counts bor cannot vouch for"
    );
    let rows = app.wait_for_rows(1).await;
    assert_eq!(rows[0].turn_id.to_string(), turn_id);
    assert_eq!(rows[0].answer, "Done thinking.");
    single_turn_log_line(&turn_id).await;

    let plain = app.complete("Plain?", false).await;
    assert_eq!(
        plain.json.as_ref().unwrap()["choices"][0]["message"]["reasoning_content"],
        Value::Null
    );
}

#[actix_web::test]
async fn a_failed_turn_without_stream_is_an_http_error_with_the_frame_copy() {
    let app = TestApp::spawn_with(&[("BOR_LLM_RETRIES", "1")]).await;
    let cases = [
        (
            json!({"status": 503}),
            503,
            "llm_unavailable",
            "The language model is not responding — please try again in a moment.",
        ),
        (
            json!({"status": 400}),
            502,
            "llm_rejected",
            "The language model rejected the request — check the service configuration.",
        ),
        (
            json!({"drop_after": 1, "reply": "one two three"}),
            502,
            "llm_interrupted",
            "The language model dropped the connection — please try again.",
        ),
    ];
    for (directive, status, code, message) in cases {
        let response = app.complete(&directed("Hello?", directive), false).await;
        assert_eq!(response.status, status, "{code}");
        assert_eq!(
            response.error(),
            &json!({"message": message, "type": "server_error", "param": null, "code": code})
        );
    }
    assert!(app.query_log().await.is_empty(), "no row for an error");
}

#[actix_web::test]
async fn the_history_is_the_user_and_assistant_messages_before_the_question() {
    let app = TestApp::spawn().await;
    let response = app
        .complete_json(json!({
            "model": "bor",
            "messages": [
                {"role": "system", "content": "You are a pirate."},
                {"role": "user", "content": "First?"},
                {"role": "assistant", "content": [{"type": "text", "text": "First answer."}]},
                {"role": "developer", "content": "Answer in French."},
                {"role": "user", "content": "And now?"}
            ],
            "tools": [{"type": "function", "function": {"name": "client_tool", "parameters": {}}}],
            "temperature": 1.5
        }))
        .await;
    assert_eq!(response.status, 200);
    let request = &app.mock.chat_requests()[0];
    let messages = request["messages"].as_array().unwrap();
    assert_eq!(messages.len(), 4);
    assert_eq!(messages[0]["role"], "system");
    assert!(!messages[0]["content"].as_str().unwrap().contains("pirate"));
    assert_eq!(messages[1], json!({"role": "user", "content": "First?"}));
    assert_eq!(
        messages[2],
        json!({"role": "assistant", "content": "First answer."})
    );
    assert_eq!(messages[3], json!({"role": "user", "content": "And now?"}));
    assert!(!request.to_string().contains("client_tool"));
    assert!(!request.to_string().contains("French"));
    assert_eq!(app.wait_for_rows(1).await[0].question, "And now?");
}

#[actix_web::test]
async fn a_full_service_answers_busy_on_both_edges() {
    let app = TestApp::spawn_with(&[("BOR_MAX_CONCURRENT_TURNS", "1")]).await;
    let slow = directed(
        "Slow?",
        json!({"reply": "a b c d e", "token_delay_ms": 200}),
    );
    let (first, refused) = futures_util::join!(app.chat(&slow), async {
        assert!(eventually(async || !app.mock.requests().is_empty()).await);
        app.complete("Me too?", true).await
    });
    assert_eq!(first.last().event, "done");
    assert_eq!(refused.status, 503);
    assert!(refused.events.is_empty(), "a refusal opens no stream");
    assert_eq!(
        refused.error(),
        &json!({"message": "the service is at capacity; try again shortly",
                "type": "server_error", "param": null, "code": "busy"})
    );
    assert_eq!(refused.headers.get("retry-after").unwrap(), "1");

    app.mock.reset();
    let (first, refused) = futures_util::join!(app.complete(&slow, false), async {
        assert!(eventually(async || !app.mock.requests().is_empty()).await);
        app.chat("Me too?").await
    });
    assert_eq!(first.status, 200);
    assert_eq!((refused.status, refused.error_code()), (503, "busy"));
    assert!(
        eventually(async || app.turns_in_flight() == 0).await,
        "the slot is free again"
    );
}

#[actix_web::test]
async fn rows_waiting_at_their_mark_refuse_new_turns_on_both_edges_until_written() {
    use diesel_async::SimpleAsyncConnection;
    let app = TestApp::spawn_with(&[("BOR_LOG_QUEUE_ROWS", "100")]).await;
    // query_log locked against writes, as a paused database: rows wait.
    let mut lock = app.database().connect().await;
    lock.batch_execute("BEGIN; LOCK TABLE query_log IN EXCLUSIVE MODE")
        .await
        .unwrap();
    for _ in 0..10 {
        let answered = futures_util::future::join_all((0..10).map(|_| app.chat("Hello?"))).await;
        assert!(answered.iter().all(|turn| turn.last().event == "done"));
    }
    assert!(eventually(async || app.log_stats().await.queued == 100).await);

    let refused = app.chat("One more?").await;
    assert_eq!((refused.status, refused.error_code()), (503, "busy"));
    assert!(refused.frames.is_empty(), "a refusal opens no stream");
    assert_eq!(refused.headers.get("retry-after").unwrap(), "1");
    let refused = app.complete("One more?", true).await;
    assert_eq!(refused.status, 503);
    assert!(refused.events.is_empty(), "a refusal opens no stream");
    assert_eq!(refused.error()["code"], "busy");
    assert_eq!(refused.headers.get("retry-after").unwrap(), "1");
    let metrics = app.get("/metrics", None).await.text();
    assert!(
        metrics.contains("bor_turns_refused_total{reason=\"log_backlog\"}"),
        "{metrics}"
    );

    lock.batch_execute("COMMIT").await.unwrap();
    assert_eq!(app.wait_for_rows(100).await.len(), 100);
    assert!(eventually(async || app.log_stats().await.queued == 0).await);
    assert_eq!(app.chat("Now?").await.last().event, "done");
    assert_eq!(app.log_stats().await.dropped, 0);
}

#[actix_web::test]
async fn a_stopping_service_refuses_completions() {
    let app = TestApp::spawn().await;
    let state = &app.state;
    state
        .lifecycle
        .stop(
            &state.turn_slots,
            state.config.max_concurrent_turns,
            Duration::ZERO,
        )
        .await;
    for stream in [true, false] {
        let response = app.complete("Anyone there?", stream).await;
        assert_eq!(response.status, 503);
        assert_eq!(response.error()["code"], "unavailable");
        assert!(
            response.error()["message"]
                .as_str()
                .unwrap()
                .contains("shutting down")
        );
    }
    assert!(app.mock.requests().is_empty());
}

/// A slow answer, so that a client can leave in the middle of it.
fn long_story() -> String {
    directed(
        "Tell me a long story",
        json!({"reply": "once upon a time there was a very long story indeed", "token_delay_ms": 300}),
    )
}

async fn assert_stopped_and_upstream_dropped(app: &TestApp) {
    assert!(
        app.mock
            .wait_for_client_disconnects_async(1, Duration::from_secs(10))
            .await,
        "the LLM server saw its connection closed"
    );
    let rows = app.wait_for_rows(1).await;
    assert_eq!(rows.len(), 1);
    assert_eq!(rows[0].status, TurnStatus::Stopped);
    let line = single_turn_log_line(&rows[0].turn_id.to_string()).await;
    assert!(line.contains("outcome=stopped"), "{line}");
    assert!(
        eventually(async || app.turns_in_flight() == 0).await,
        "the slot is free again"
    );
}

#[actix_web::test]
async fn a_streaming_client_that_leaves_stops_the_turn_and_the_upstream_request() {
    let app = TestApp::spawn().await;
    let response = TestApp::client()
        .post(format!("{}/v1/chat/completions", app.address))
        .insert_header(("Content-Type", "application/json"))
        .send_body(
            json!({"model": "bor", "stream": true,
                   "messages": [{"role": "user", "content": long_story()}]})
            .to_string(),
        )
        .await
        .unwrap();
    let mut events = eventsource_stream::Eventsource::eventsource(response);
    // The role chunk, then the first content.
    let role = events.next().await.unwrap().unwrap();
    assert!(role.data.contains(r#""role":"assistant""#));
    let first = events.next().await.unwrap().unwrap();
    assert!(first.data.contains(r#""content":"once "#), "{}", first.data);
    drop(events);

    assert_stopped_and_upstream_dropped(&app).await;
    assert!(app.query_log().await[0].answer.starts_with("once"));
}

#[actix_web::test]
async fn a_waiting_client_that_leaves_stops_the_turn_and_the_upstream_request() {
    let app = TestApp::spawn().await;
    let client = awc::Client::builder()
        .timeout(Duration::from_millis(800))
        .finish();
    let sent = client
        .post(format!("{}/v1/chat/completions", app.address))
        .insert_header(("Content-Type", "application/json"))
        .send_body(
            json!({"model": "bor", "messages": [{"role": "user", "content": long_story()}]})
                .to_string(),
        )
        .await;
    assert!(sent.is_err(), "the client gave up before the answer");
    drop(client);

    assert_stopped_and_upstream_dropped(&app).await;
}
