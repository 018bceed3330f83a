//! The mock against awc, the client bor uses.

use std::time::Duration;

use awc::Client;
use bor_mock_llm::MockLlm;
use bytes::Bytes;
use futures_util::StreamExt;
use serde_json::{Value, json};

use crate::support::chat_body;

/// Reads a streamed body to its end: the bytes, and the error that ended it early if any.
async fn read_stream<S>(response: &mut S) -> (Vec<u8>, Option<String>)
where
    S: futures_util::Stream<Item = Result<Bytes, awc::error::PayloadError>> + Unpin,
{
    let mut body = Vec::new();
    while let Some(item) = response.next().await {
        match item {
            Ok(bytes) => body.extend_from_slice(&bytes),
            Err(error) => return (body, Some(format!("{error:?}"))),
        }
    }
    (body, None)
}

fn content_of(body: &[u8]) -> String {
    String::from_utf8(body.to_vec())
        .unwrap()
        .split("\n\n")
        .filter_map(|event| event.strip_prefix("data: "))
        .filter(|data| *data != "[DONE]")
        .filter_map(|data| {
            let chunk: Value = serde_json::from_str(data).unwrap();
            chunk["choices"][0]["delta"]["content"]
                .as_str()
                .map(str::to_owned)
        })
        .collect()
}

fn chat_url(mock: &MockLlm) -> String {
    format!("{}/chat/completions", mock.base_url())
}

#[actix_rt::test]
async fn awc_streams_a_completion_and_sends_the_bearer_token() {
    let mock = MockLlm::start().unwrap();
    let client = Client::default();
    let mut response = client
        .post(chat_url(&mock))
        .bearer_auth("sk-test")
        .send_json(&chat_body("Does awc cope?"))
        .await
        .unwrap();
    assert_eq!(response.status().as_u16(), 200);
    assert_eq!(
        response.headers().get("content-type").unwrap(),
        "text/event-stream"
    );
    let (body, error) = read_stream(&mut response).await;
    assert_eq!(error, None);
    assert_eq!(content_of(&body), "Mock answer: Does awc cope?");
    let recorded = &mock.requests()[0];
    assert_eq!(recorded.header("authorization"), Some("Bearer sk-test"));
    assert_eq!(recorded.body, chat_body("Does awc cope?"));
}

#[actix_rt::test]
async fn awc_sees_the_failures_then_the_answer_for_the_same_body() {
    let mock = MockLlm::start().unwrap();
    let client = Client::default();
    let body = chat_body("Q\nMOCK {\"status\": 503, \"times\": 2, \"reply\": \"Recovered.\"}");
    let mut statuses = Vec::new();
    for _ in 0..3 {
        let mut response = client.post(chat_url(&mock)).send_json(&body).await.unwrap();
        statuses.push(response.status().as_u16());
        let (bytes, error) = read_stream(&mut response).await;
        assert_eq!(error, None);
        if response.status().is_success() {
            assert_eq!(content_of(&bytes), "Recovered.");
        }
    }
    assert_eq!(statuses, [503, 503, 200]);
    assert_eq!(
        mock.open_connections(),
        1,
        "awc kept one connection alive throughout"
    );
}

#[actix_rt::test]
async fn awc_reports_a_dropped_connection_and_recovers_on_the_next_attempt() {
    let mock = MockLlm::start().unwrap();
    let client = Client::default();
    let body = chat_body("Q\nMOCK {\"drop\": true, \"times\": 2}");
    // On a fresh connection, then on one kept alive from an earlier request.
    let fresh = client
        .post(chat_url(&mock))
        .send_json(&body)
        .await
        .unwrap_err();
    let warm_up = client
        .get(format!("{}/models", mock.base_url()))
        .send()
        .await;
    assert_eq!(warm_up.unwrap().body().await.unwrap()[..1], *b"{");
    let reused = client
        .post(chat_url(&mock))
        .send_json(&body)
        .await
        .unwrap_err();
    for error in [&fresh, &reused] {
        assert!(
            matches!(
                error,
                awc::error::SendRequestError::Connect(awc::error::ConnectError::Disconnected)
            ),
            "{error:?}"
        );
    }
    let mut response = client.post(chat_url(&mock)).send_json(&body).await.unwrap();
    assert_eq!(response.status().as_u16(), 200);
    assert_eq!(read_stream(&mut response).await.1, None);
}

/// awc ends the body stream without an error when the connection closes in the middle
/// of a chunked body: only the missing `[DONE]` and finish reason tell a broken stream
/// from a complete one.
#[actix_rt::test]
async fn awc_ends_a_body_broken_by_drop_after_as_if_it_were_complete() {
    let mock = MockLlm::start().unwrap();
    let body = chat_body("Q\nMOCK {\"drop_after\": 2, \"reply\": \"one two three\"}");
    let mut response = Client::default()
        .post(chat_url(&mock))
        .send_json(&body)
        .await
        .unwrap();
    assert_eq!(response.status().as_u16(), 200);
    let (bytes, error) = read_stream(&mut response).await;
    assert_eq!(error, None);
    assert_eq!(content_of(&bytes), "one two ");
    let text = String::from_utf8(bytes).unwrap();
    assert!(!text.contains("[DONE]") && !text.contains("finish_reason\":\"stop"));
}

#[actix_rt::test]
async fn an_awc_timeout_on_a_hang_counts_as_a_client_disconnect() {
    let mock = MockLlm::start().unwrap();
    let client = Client::builder()
        .timeout(Duration::from_millis(300))
        .finish();
    let body = chat_body("Q\nMOCK {\"hang\": true}");
    let error = client
        .post(chat_url(&mock))
        .send_json(&body)
        .await
        .unwrap_err();
    assert!(
        matches!(error, awc::error::SendRequestError::Timeout),
        "{error:?}"
    );
    assert!(
        mock.wait_for_client_disconnects_async(1, Duration::from_secs(5))
            .await
    );
}

#[actix_rt::test]
async fn dropping_an_awc_response_in_a_stall_counts_as_a_client_disconnect() {
    let mock = MockLlm::start().unwrap();
    let body = chat_body("Q\nMOCK {\"stall_after\": 1, \"reply\": \"one two\"}");
    let mut response = Client::default()
        .post(chat_url(&mock))
        .send_json(&body)
        .await
        .unwrap();
    let mut received = Vec::new();
    while !content_of(&received).contains("one") {
        received.extend_from_slice(&response.next().await.unwrap().unwrap());
    }
    let silence = tokio::time::timeout(Duration::from_millis(300), response.next()).await;
    assert!(silence.is_err(), "nothing arrives after the stall");
    assert_eq!(mock.client_disconnects(), 0);
    drop(response);
    assert!(
        mock.wait_for_client_disconnects_async(1, Duration::from_secs(5))
            .await
    );
}

#[actix_rt::test]
async fn awc_reassembles_split_writes_and_embeddings() {
    let mock = MockLlm::start().unwrap();
    let client = Client::default();
    let body = chat_body("Q\nMOCK {\"split_writes\": true, \"reply\": \"héllo wörld\"}");
    let mut response = client.post(chat_url(&mock)).send_json(&body).await.unwrap();
    let (bytes, error) = read_stream(&mut response).await;
    assert_eq!(error, None);
    assert_eq!(content_of(&bytes), "héllo wörld");

    let embeddings: Value = client
        .post(format!("{}/embeddings", mock.base_url()))
        .send_json(&json!({"model": "smollm2", "input": ["a", "b"]}))
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(embeddings["data"].as_array().unwrap().len(), 2);
}
