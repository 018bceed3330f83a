//! Every refusal of `POST /api/chat` happens before a stream opens, with the JSON
//! error shape; and the concurrency limit.

use std::time::Duration;

use serde_json::json;

use crate::support::*;

async fn refused(app: &TestApp, content_type: Option<&str>, body: Vec<u8>) -> (u16, String) {
    let response = app.post_chat(content_type, body).await;
    assert!(response.frames.is_empty(), "a refusal opens no stream");
    let json = response.json.as_ref().expect("a JSON error body");
    assert!(
        json["error"]["message"]
            .as_str()
            .is_some_and(|m| !m.is_empty())
    );
    (response.status, response.error_code().to_owned())
}

#[actix_web::test]
async fn bad_requests_are_refused_with_their_codes() {
    let app = TestApp::spawn_with(&[("BOR_MAX_MESSAGE_CHARS", "20")]).await;
    let json_body = |v: serde_json::Value| v.to_string().into_bytes();
    let json_type = Some("application/json");
    let cases: Vec<(Option<&str>, Vec<u8>, u16, &str)> = vec![
        (json_type, b"{not json".to_vec(), 400, "invalid_json"),
        (json_type, b"".to_vec(), 400, "invalid_json"),
        (
            json_type,
            json_body(json!({"history": []})),
            400,
            "invalid_json",
        ),
        (
            json_type,
            json_body(json!({"message": 42})),
            400,
            "invalid_json",
        ),
        (
            Some("text/plain"),
            json_body(json!({"message": "hi"})),
            415,
            "unsupported_media_type",
        ),
        (
            None,
            json_body(json!({"message": "hi"})),
            415,
            "unsupported_media_type",
        ),
        (
            json_type,
            json_body(json!({"message": "   \n\t "})),
            400,
            "empty_message",
        ),
        (
            json_type,
            json_body(json!({"message": "x".repeat(21)})),
            400,
            "message_too_long",
        ),
        (
            json_type,
            json_body(json!({"message": "hi", "history": "no"})),
            400,
            "invalid_history",
        ),
        (
            json_type,
            json_body(json!({"message": "hi", "history": [{"role": "system", "content": "x"}]})),
            400,
            "invalid_history",
        ),
        (
            json_type,
            json_body(
                json!({"message": "hi", "history": vec![json!({"role": "user", "content": "x"}); 21]}),
            ),
            400,
            "invalid_history",
        ),
        (
            json_type,
            json_body(json!({"message": "x".repeat(300 * 1024)})),
            413,
            "body_too_large",
        ),
    ];
    for (content_type, body, status, code) in cases {
        assert_eq!(
            refused(&app, content_type, body).await,
            (status, code.to_owned())
        );
    }
    assert!(
        app.mock.requests().is_empty(),
        "no refusal reached the LLM server"
    );
}

#[actix_web::test]
async fn a_message_at_the_length_limit_is_accepted() {
    let app = TestApp::spawn_with(&[("BOR_MAX_MESSAGE_CHARS", "5")]).await;
    let response = app.chat("  ééééé  ").await;
    assert_eq!(response.status, 200);
    assert_eq!(response.last().event, "done");
    assert_eq!(
        app.mock.embedding_requests()[0]["input"],
        json!(["ééééé"]),
        "embedded as sent, trimmed"
    );
}

#[actix_web::test]
async fn history_reaches_the_model_between_system_and_question() {
    let app = TestApp::spawn().await;
    let response = app
        .chat_json(json!({
            "message": "And now?",
            "history": [{"role": "user", "content": "First?"}, {"role": "assistant", "content": "First answer."}]
        }))
        .await;
    assert_eq!(response.last().event, "done");
    let messages = app.mock.chat_requests()[0]["messages"].clone();
    assert_eq!(messages[0]["role"], "system");
    assert_eq!(messages[1], json!({"role": "user", "content": "First?"}));
    assert_eq!(
        messages[2],
        json!({"role": "assistant", "content": "First answer."})
    );
    assert_eq!(messages[3], json!({"role": "user", "content": "And now?"}));
}

#[actix_web::test]
async fn a_full_service_answers_busy_and_frees_the_slot_when_the_stream_ends() {
    let app = TestApp::spawn_with(&[("BOR_MAX_CONCURRENT_TURNS", "1")]).await;
    let slow = directed(
        "Slow?",
        json!({"reply": "a b c d e", "token_delay_ms": 200}),
    );
    let first = app.chat(&slow);
    let second = async {
        // Let the first turn take the only slot.
        assert!(eventually(async || !app.mock.requests().is_empty()).await);
        app.chat("Me too?").await
    };
    let (first, second) = futures_util::join!(first, second);
    assert_eq!(first.last().event, "done");
    assert_eq!(second.status, 503);
    assert_eq!(second.error_code(), "busy");
    assert!(second.headers.get("retry-after").is_some());

    actix_web::rt::time::sleep(Duration::from_millis(50)).await;
    let third = app.chat("Now?").await;
    assert_eq!(third.last().event, "done", "the slot is free again");
}
