use std::time::Duration;

use bor_mock_llm::MockLlm;
use serde_json::json;

use crate::support::{RawClient, chat_body, eventually, exchange, exchange_with, post_json};

const CHAT: &str = "/v1/chat/completions";

#[tokio::test]
async fn requests_are_recorded_with_headers_and_bodies_in_order() {
    let mock = MockLlm::start().unwrap();
    let body = chat_body("Recorded?");
    exchange_with(
        mock.addr(),
        "POST",
        CHAT,
        &[
            ("Authorization", "Bearer sk-test"),
            ("content-type", "application/json"),
        ],
        body.to_string().as_bytes(),
    )
    .await;
    post_json(
        mock.addr(),
        "/v1/embeddings",
        &json!({"input": "Recorded?"}),
    )
    .await;
    exchange(mock.addr(), "POST", CHAT, b"not json").await;
    exchange(mock.addr(), "GET", "/v1/models?x=1", b"").await;

    let requests = mock.requests();
    let summary: Vec<(&str, &str)> = requests
        .iter()
        .map(|r| (r.method.as_str(), r.path.as_str()))
        .collect();
    assert_eq!(
        summary,
        [
            ("POST", CHAT),
            ("POST", "/v1/embeddings"),
            ("POST", CHAT),
            ("GET", "/v1/models?x=1"),
        ]
    );
    assert_eq!(requests[0].header("authorization"), Some("Bearer sk-test"));
    assert!(
        requests[0]
            .headers
            .contains(&("Authorization".to_owned(), "Bearer sk-test".to_owned()))
    );
    assert_eq!(requests[0].body, body);
    assert_eq!(requests[0].raw_body, body.to_string().into_bytes());
    assert!(requests[2].body.is_null());
    assert_eq!(requests[2].raw_body, b"not json");

    assert_eq!(mock.chat_requests(), [body, serde_json::Value::Null]);
    assert_eq!(mock.embedding_requests(), [json!({"input": "Recorded?"})]);
}

#[tokio::test]
async fn reset_forgets_requests_attempts_and_disconnects() {
    let mock = MockLlm::start().unwrap();
    let failing = chat_body("Q\nMOCK {\"status\": 503, \"times\": 1}");
    assert_eq!(
        post_json(mock.addr(), CHAT, &failing)
            .await
            .response()
            .status,
        503
    );
    assert_eq!(
        post_json(mock.addr(), CHAT, &failing)
            .await
            .response()
            .status,
        200
    );

    let mut client = RawClient::connect(mock.addr()).await;
    client
        .send(
            "POST",
            CHAT,
            &[],
            chat_body("Q\nMOCK {\"hang\": true}").to_string().as_bytes(),
        )
        .await;
    assert!(eventually(|| mock.requests().len() == 3).await);
    drop(client);
    assert!(mock.wait_for_client_disconnects(1, Duration::from_secs(5)));

    mock.reset();
    assert!(mock.requests().is_empty());
    assert_eq!(mock.client_disconnects(), 0);
    assert_eq!(
        post_json(mock.addr(), CHAT, &failing)
            .await
            .response()
            .status,
        503
    );
    assert_eq!(mock.chat_requests().len(), 1);
}

#[tokio::test]
async fn open_connections_follow_the_clients() {
    let mock = MockLlm::start().unwrap();
    assert_eq!(mock.open_connections(), 0);
    let first = RawClient::connect(mock.addr()).await;
    let second = RawClient::connect(mock.addr()).await;
    assert!(eventually(|| mock.open_connections() == 2).await);
    drop(first);
    drop(second);
    assert!(eventually(|| mock.open_connections() == 0).await);
}

#[tokio::test]
async fn responses_in_progress_count_until_written_or_abandoned() {
    let mock = MockLlm::start().unwrap();
    let mut stalled = RawClient::connect(mock.addr()).await;
    let question = "Hi\nMOCK {\"stall_after\": 1}";
    let body = chat_body(question).to_string();
    stalled.send("POST", CHAT, &[], body.as_bytes()).await;
    assert!(eventually(|| mock.responses_in_progress() == 1).await);
    post_json(mock.addr(), CHAT, &chat_body("Quick")).await;
    assert_eq!(
        mock.responses_in_progress(),
        1,
        "a finished response is not counted"
    );
    drop(stalled);
    assert!(eventually(|| mock.responses_in_progress() == 0).await);
    assert_eq!(mock.client_disconnects(), 1);
}

#[tokio::test]
async fn a_kept_alive_connection_serves_several_requests() {
    let mock = MockLlm::start().unwrap();
    let mut client = RawClient::connect(mock.addr()).await;
    for question in ["First", "Second"] {
        client
            .send(
                "POST",
                CHAT,
                &[],
                chat_body(question).to_string().as_bytes(),
            )
            .await;
        let received = client.read_response().await;
        assert!(!received.eof);
        let response = received.response();
        assert!(response.complete);
        assert_eq!(
            response.delta_text("content"),
            format!("Mock answer: {question}")
        );
    }
    assert_eq!(mock.open_connections(), 1);
}

#[tokio::test]
async fn dropping_the_mock_closes_its_port() {
    let mock = MockLlm::start().unwrap();
    let addr = mock.addr();
    assert_eq!(
        mock.base_url(),
        format!("http://127.0.0.1:{}/v1", addr.port())
    );
    let mut idle = RawClient::connect(addr).await;
    drop(mock);
    assert!(idle.read_until_quiet(Duration::from_secs(5)).await.eof);
    assert!(tokio::net::TcpStream::connect(addr).await.is_err());
}

/// The mock keeps time on its own runtime, so a test with paused time still gets paced
/// streams and a disconnect wait that does not expire at once.
#[tokio::test(start_paused = true)]
async fn the_mock_serves_a_test_whose_time_is_paused() {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    let mock = MockLlm::builder()
        .token_delay(Duration::from_millis(5))
        .start()
        .unwrap();
    let mut client = RawClient::connect(mock.addr()).await;
    client
        .send(
            "POST",
            CHAT,
            &[("connection", "close")],
            chat_body("Paused?").to_string().as_bytes(),
        )
        .await;
    let mut raw = Vec::new();
    client.stream.read_to_end(&mut raw).await.unwrap();
    let received = crate::support::Received {
        raw,
        reads: Vec::new(),
        eof: true,
    };
    assert_eq!(
        received.response().delta_text("content"),
        "Mock answer: Paused?"
    );

    let mut hanging = tokio::net::TcpStream::connect(mock.addr()).await.unwrap();
    let body = chat_body("Q\nMOCK {\"hang\": true}").to_string();
    let request = format!(
        "POST {CHAT} HTTP/1.1\r\ncontent-length: {}\r\n\r\n{body}",
        body.len()
    );
    hanging.write_all(request.as_bytes()).await.unwrap();
    for _ in 0..5000 {
        if mock.requests().len() == 2 {
            break;
        }
        // A real pause: virtual time would not let the mock's thread run.
        std::thread::sleep(Duration::from_millis(1));
    }
    assert_eq!(mock.requests().len(), 2);
    let waiting = mock.wait_for_client_disconnects_async(1, Duration::from_secs(5));
    drop(hanging);
    assert!(waiting.await);
}
