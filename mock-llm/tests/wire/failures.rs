use std::time::{Duration, Instant};

use bor_mock_llm::MockLlm;
use serde_json::{Value, json};

use crate::support::{RawClient, chat_body, exchange, post_json};

const CHAT: &str = "/v1/chat/completions";

fn directed(directive: Value) -> Value {
    chat_body(&format!("What is bor?\nMOCK {directive}"))
}

#[tokio::test]
async fn status_fails_the_first_attempts_of_the_same_body_then_succeeds() {
    let mock = MockLlm::start().unwrap();
    let body = directed(json!({"status": 503, "times": 2, "reply": "Back again."}));
    let mut statuses = Vec::new();
    for _ in 0..3 {
        let response = post_json(mock.addr(), CHAT, &body).await.response();
        if response.status == 503 {
            assert_eq!(response.json()["error"]["type"], "server_error");
            assert_eq!(response.header("content-type"), Some("application/json"));
        } else {
            assert_eq!(response.delta_text("content"), "Back again.");
        }
        statuses.push(response.status);
    }
    assert_eq!(statuses, [503, 503, 200]);

    // Another body has attempts of its own.
    let other = directed(json!({"status": 429, "times": 1}));
    assert_eq!(
        post_json(mock.addr(), CHAT, &other).await.response().status,
        429
    );
    assert_eq!(
        post_json(mock.addr(), CHAT, &other).await.response().status,
        200
    );
}

#[tokio::test]
async fn status_without_times_fails_every_attempt() {
    let mock = MockLlm::start().unwrap();
    let body = directed(json!({"status": 500}));
    for _ in 0..4 {
        assert_eq!(
            post_json(mock.addr(), CHAT, &body).await.response().status,
            500
        );
    }
}

#[tokio::test]
async fn html_error_sends_an_html_page() {
    let mock = MockLlm::start().unwrap();
    let response = post_json(mock.addr(), CHAT, &directed(json!({"html_error": true})))
        .await
        .response();
    assert_eq!(response.status, 502);
    assert_eq!(response.header("content-type"), Some("text/html"));
    let page = String::from_utf8(response.body).unwrap();
    assert!(page.contains("<h1>502 Bad Gateway</h1>"), "{page}");

    let response = post_json(
        mock.addr(),
        CHAT,
        &directed(json!({"html_error": true, "status": 504})),
    )
    .await
    .response();
    assert_eq!(response.status, 504);
}

#[tokio::test]
async fn drop_closes_the_connection_without_a_response() {
    let mock = MockLlm::start().unwrap();
    let body = directed(json!({"drop": true, "times": 1}));
    let received = post_json(mock.addr(), CHAT, &body).await;
    assert!(received.eof);
    assert!(received.raw.is_empty());
    assert_eq!(
        post_json(mock.addr(), CHAT, &body).await.response().status,
        200
    );
    assert_eq!(
        mock.client_disconnects(),
        0,
        "the mock closed, not the client"
    );
}

#[tokio::test]
async fn hang_answers_nothing_until_the_client_closes() {
    let mock = MockLlm::start().unwrap();
    let mut client = RawClient::connect(mock.addr()).await;
    let body = directed(json!({"hang": true})).to_string();
    client.send("POST", CHAT, &[], body.as_bytes()).await;
    let received = client.read_until_quiet(Duration::from_millis(300)).await;
    assert!(received.raw.is_empty() && !received.eof);
    assert_eq!(mock.chat_requests().len(), 1, "the request was read");
    assert_eq!(mock.client_disconnects(), 0);
    drop(client);
    assert!(
        mock.wait_for_client_disconnects_async(1, Duration::from_secs(5))
            .await
    );
}

#[tokio::test]
async fn drop_after_breaks_the_body_after_k_chunks() {
    let mock = MockLlm::start().unwrap();
    let body = directed(json!({"drop_after": 2, "reply": "one two three four"}));
    let received = post_json(mock.addr(), CHAT, &body).await;
    assert!(received.eof);
    let response = received.response();
    assert_eq!(response.status, 200);
    assert!(!response.complete, "no terminating chunk");
    assert_eq!(response.delta_text("content"), "one two ");
    assert!(response.finish_reasons().is_empty());
    assert!(!response.ends_with_done());
    assert_eq!(
        response.chunks().len(),
        3,
        "the role chunk and two content chunks"
    );
}

#[tokio::test]
async fn stall_after_goes_silent_with_the_connection_open() {
    let mock = MockLlm::start().unwrap();
    let mut client = RawClient::connect(mock.addr()).await;
    let body = directed(json!({"stall_after": 1, "reply": "one two three"})).to_string();
    client.send("POST", CHAT, &[], body.as_bytes()).await;
    let mut received = client
        .read_until(|raw| String::from_utf8_lossy(raw).contains(r#""content":"one ""#))
        .await;
    let more = client.read_until_quiet(Duration::from_millis(300)).await;
    assert!(!more.eof && more.raw.is_empty(), "nothing after the stall");
    received.raw.extend(more.raw);
    let response = received.response();
    assert!(!response.complete);
    assert_eq!(response.delta_text("content"), "one ");
    assert_eq!(mock.open_connections(), 1);
    drop(client);
    assert!(
        mock.wait_for_client_disconnects_async(1, Duration::from_secs(5))
            .await
    );
}

#[tokio::test]
async fn error_after_sends_an_error_line_after_k_chunks() {
    let mock = MockLlm::start().unwrap();
    let body = directed(json!({"error_after": 1, "reply": "one two three"}));
    let response = post_json(mock.addr(), CHAT, &body).await.response();
    assert!(response.complete);
    let chunks = response.chunks();
    assert_eq!(chunks.len(), 3);
    assert_eq!(response.delta_text("content"), "one ");
    assert_eq!(chunks[2]["error"]["type"], "server_error");
    assert!(chunks[2]["error"]["message"].is_string());
    assert!(response.finish_reasons().is_empty());
    assert!(response.ends_with_done());
}

#[tokio::test]
async fn no_done_finishes_without_the_done_line() {
    let mock = MockLlm::start().unwrap();
    let body = directed(json!({"no_done": true, "reply": "All here."}));
    let response = post_json(mock.addr(), CHAT, &body).await.response();
    assert!(response.complete, "the body itself ends properly");
    assert_eq!(response.delta_text("content"), "All here.");
    assert_eq!(response.finish_reasons(), ["stop"]);
    assert!(!response.ends_with_done());
}

#[tokio::test]
async fn garbage_sends_a_200_that_is_no_completion() {
    let mock = MockLlm::start().unwrap();

    let invalid = post_json(
        mock.addr(),
        CHAT,
        &directed(json!({"garbage": "invalid_json"})),
    )
    .await
    .response();
    assert_eq!(invalid.status, 200);
    let events = invalid.events();
    assert!(events.len() > 1);
    for event in &events[..events.len() - 1] {
        assert!(serde_json::from_str::<Value>(event).is_err(), "{event}");
    }

    let huge = post_json(
        mock.addr(),
        CHAT,
        &directed(json!({"garbage": "huge_line"})),
    )
    .await
    .response();
    assert!(huge.complete);
    let longest = huge.events().iter().map(String::len).max().unwrap();
    assert!(longest > 2 * 1024 * 1024, "{longest}");

    let html = post_json(mock.addr(), CHAT, &directed(json!({"garbage": "html"})))
        .await
        .response();
    assert_eq!(html.status, 200);
    assert_eq!(html.header("content-type"), Some("text/html"));
    assert!(String::from_utf8(html.body).unwrap().contains("<html>"));
}

#[tokio::test]
async fn content_type_overrides_the_response_type() {
    let mock = MockLlm::start().unwrap();
    let body = directed(json!({"content_type": "text/plain; charset=utf-8"}));
    let response = post_json(mock.addr(), CHAT, &body).await.response();
    assert_eq!(
        response.header("content-type"),
        Some("text/plain; charset=utf-8")
    );
    assert!(response.ends_with_done());
}

#[tokio::test]
async fn split_writes_sends_every_byte_on_its_own() {
    let mock = MockLlm::start().unwrap();
    let body = directed(json!({"split_writes": true, "reply": "é ü"}));
    let started = Instant::now();
    let received = post_json(mock.addr(), CHAT, &body).await;
    let elapsed = started.elapsed();
    let response = received.response();
    assert_eq!(response.delta_text("content"), "é ü");
    assert!(response.complete);
    // One millisecond passes between any two bytes...
    assert!(
        elapsed >= Duration::from_millis(received.raw.len() as u64 - 1),
        "{elapsed:?}"
    );
    // ...so each event, over a hundred bytes long, reaches the client in many reads.
    assert!(
        received.reads.len() > response.events().len(),
        "{:?}",
        received.reads
    );
}

#[tokio::test]
async fn token_delay_paces_the_chunks() {
    let mock = MockLlm::start().unwrap();
    let body = directed(json!({"token_delay_ms": 40, "reply": "a b c"}));
    let started = Instant::now();
    let response = post_json(mock.addr(), CHAT, &body).await.response();
    // role, three tokens, finish and [DONE]: five pauses.
    assert_eq!(response.events().len(), 6);
    assert!(started.elapsed() >= Duration::from_millis(5 * 40));

    let slow = MockLlm::builder()
        .token_delay(Duration::from_millis(30))
        .start()
        .unwrap();
    let started = Instant::now();
    let response = post_json(slow.addr(), CHAT, &chat_body("one two"))
        .await
        .response();
    let pauses = response.events().len() as u32 - 1;
    assert!(started.elapsed() >= Duration::from_millis(30) * pauses);
}

#[tokio::test]
async fn a_client_leaving_mid_stream_is_counted() {
    let mock = MockLlm::start().unwrap();
    let mut client = RawClient::connect(mock.addr()).await;
    let body =
        directed(json!({"token_delay_ms": 50, "reply": "many words ".repeat(40)})).to_string();
    client.send("POST", CHAT, &[], body.as_bytes()).await;
    client
        .read_until(|raw| String::from_utf8_lossy(raw).contains(r#""content":"many "#))
        .await;
    drop(client);
    assert!(
        mock.wait_for_client_disconnects_async(1, Duration::from_secs(5))
            .await
    );
    assert!(mock.wait_for_client_disconnects(1, Duration::from_secs(1)));
    assert!(!mock.wait_for_client_disconnects(2, Duration::from_millis(50)));
}

#[tokio::test]
async fn on_embeddings_targets_the_embedding_call_only() {
    let mock = MockLlm::start().unwrap();
    let question = "What is bor?\nMOCK {\"status\": 503, \"times\": 1, \"on\": \"embeddings\"}";
    let embed = json!({"model": "smollm2", "input": question});
    let statuses = [
        post_json(mock.addr(), "/v1/embeddings", &embed)
            .await
            .response()
            .status,
        post_json(mock.addr(), "/v1/embeddings", &embed)
            .await
            .response()
            .status,
    ];
    assert_eq!(statuses, [503, 200]);
    let chat = post_json(mock.addr(), CHAT, &chat_body(question))
        .await
        .response();
    assert_eq!(chat.status, 200);
    assert_eq!(chat.delta_text("content"), "Mock answer: What is bor?");

    let both = "Q\nMOCK {\"drop\": true, \"on\": \"both\"}";
    let embed = json!({"input": [both]});
    assert!(
        post_json(mock.addr(), "/v1/embeddings", &embed)
            .await
            .raw
            .is_empty()
    );
    assert!(
        post_json(mock.addr(), CHAT, &chat_body(both))
            .await
            .raw
            .is_empty()
    );

    let hang = json!({"input": "Q\nMOCK {\"hang\": true, \"on\": \"embeddings\"}"});
    let mut client = RawClient::connect(mock.addr()).await;
    client
        .send("POST", "/v1/embeddings", &[], hang.to_string().as_bytes())
        .await;
    assert!(
        client
            .read_until_quiet(Duration::from_millis(200))
            .await
            .raw
            .is_empty()
    );
    drop(client);
    assert!(
        mock.wait_for_client_disconnects_async(1, Duration::from_secs(5))
            .await
    );
}

#[tokio::test]
async fn chunked_request_bodies_are_refused() {
    let mock = MockLlm::start().unwrap();
    let received = exchange(mock.addr(), "POST", CHAT, b"").await;
    assert_eq!(received.response().status, 400, "an empty body is not JSON");
    let mut client = RawClient::connect(mock.addr()).await;
    client
        .send(
            "POST",
            CHAT,
            &[("transfer-encoding", "chunked")],
            b"0\r\n\r\n",
        )
        .await;
    assert_eq!(client.read_to_close().await.response().status, 411);
}
