//! `/v1`: the model list, and every refusal in the OpenAI error shape with a 4xx,
//! before any stream opens and before the LLM server hears of it.

use serde_json::{Value, json};

use crate::support::*;

/// What a case is, its content type and body, and the status and code it gets.
type Case = (
    &'static str,
    Option<&'static str>,
    Vec<u8>,
    u16,
    &'static str,
);

/// The OpenAI shape of a refusal: `type`, `param: null`, a message and `code`.
fn assert_openai_error(error: &Value, code: &str) {
    let object = error.as_object().expect("an error object");
    let mut keys: Vec<&str> = object.keys().map(String::as_str).collect();
    keys.sort_unstable();
    assert_eq!(keys, ["code", "message", "param", "type"], "{error}");
    assert_eq!(error["code"], code, "{error}");
    assert_eq!(error["type"], "invalid_request_error", "{error}");
    assert_eq!(error["param"], Value::Null);
    assert!(error["message"].as_str().is_some_and(|m| !m.is_empty()));
}

#[actix_web::test]
async fn the_model_list_names_bor_and_a_model_per_collection() {
    let app = TestApp::spawn().await;
    let started = app.state.lifecycle.started_at().timestamp();
    let list = app.get("/v1/models", None).await;
    assert_eq!(list.status, 200);
    assert_eq!(
        list.json(),
        json!({"object": "list", "data": [
            {"id": "bor", "object": "model", "created": started, "owned_by": "bor"},
            {"id": "bor/default", "object": "model", "created": started, "owned_by": "bor"}]})
    );
    let model = app.get("/v1/models/bor", None).await;
    assert_eq!(model.json(), list.json()["data"][0]);

    for path in ["/v1/models/gpt-4o", "/v1/embeddings", "/v1/no/such/route"] {
        let reply = app.get(path, None).await;
        assert_eq!(reply.status, 404, "{path}");
        assert_openai_error(&reply.json()["error"], "not_found");
    }
}

#[actix_web::test]
async fn bad_requests_are_refused_in_the_openai_shape() {
    let app = TestApp::spawn_with(&[("BOR_MAX_MESSAGE_CHARS", "20")]).await;
    let json_type = Some("application/json");
    let body = |value: Value| value.to_string().into_bytes();
    let user = |content: Value| {
        body(json!({"model": "bor", "messages": [{"role": "user", "content": content}]}))
    };
    let cases: Vec<Case> = vec![
        (
            "invalid JSON",
            json_type,
            b"{not json".to_vec(),
            400,
            "invalid_json",
        ),
        ("empty body", json_type, Vec::new(), 400, "invalid_json"),
        (
            "no messages",
            json_type,
            body(json!({"model": "bor"})),
            400,
            "invalid_json",
        ),
        (
            "empty messages",
            json_type,
            body(json!({"model": "bor", "messages": []})),
            400,
            "invalid_json",
        ),
        (
            "last message not the user's",
            json_type,
            body(json!({"model": "bor", "messages": [
                {"role": "user", "content": "q"}, {"role": "assistant", "content": "a"}]})),
            400,
            "invalid_history",
        ),
        (
            "an image",
            json_type,
            user(json!([{"type": "text", "text": "What is this?"},
                        {"type": "image_url", "image_url": {"url": "data:image/png;base64,AAAA"}}])),
            400,
            "invalid_json",
        ),
        (
            "audio",
            json_type,
            user(
                json!([{"type": "input_audio", "input_audio": {"data": "AAAA", "format": "wav"}}]),
            ),
            400,
            "invalid_json",
        ),
        (
            "an image earlier in the conversation",
            json_type,
            body(json!({"model": "bor", "messages": [
                {"role": "user", "content": [{"type": "image_url", "image_url": {"url": "x"}}]},
                {"role": "user", "content": "And this?"}]})),
            400,
            "invalid_history",
        ),
        (
            "blank question",
            json_type,
            user(json!("  \n ")),
            400,
            "empty_message",
        ),
        (
            "question too long",
            json_type,
            user(json!("x".repeat(21))),
            400,
            "message_too_long",
        ),
        (
            "another model",
            json_type,
            body(json!({"model": "gpt-4o", "messages": [{"role": "user", "content": "q"}]})),
            404,
            "not_found",
        ),
        (
            "wrong content type",
            Some("text/plain"),
            user(json!("hi")),
            415,
            "unsupported_media_type",
        ),
        (
            "no content type",
            None,
            user(json!("hi")),
            415,
            "unsupported_media_type",
        ),
        (
            "body over the limit",
            json_type,
            user(json!("x".repeat(300 * 1024))),
            413,
            "body_too_large",
        ),
    ];
    for (what, content_type, bytes, status, code) in cases {
        let response = app.post_completion(content_type, bytes).await;
        assert_eq!(response.status, status, "{what}");
        assert!(
            response.events.is_empty(),
            "{what}: a refusal opens no stream"
        );
        assert_openai_error(response.error(), code);
    }
    assert!(
        app.mock.requests().is_empty(),
        "no refusal reached the LLM server"
    );
}
