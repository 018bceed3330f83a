//! Where the server's wire differs from the OpenAI reference (docs/COMPATIBILITY.md):
//! each difference checked on the raw response, and bor's turn over it.

use serde_json::{Value, json};

use crate::support::*;

struct RawResponse {
    status: u16,
    content_type: String,
    body: String,
}

async fn post(path: &str, body: String) -> RawResponse {
    let mut response = awc::Client::builder()
        .timeout(STREAM_TIMEOUT)
        .finish()
        .post(format!("{}/{path}", shared_server_url()))
        .insert_header(("Content-Type", "application/json"))
        .send_body(body)
        .await
        .expect("the server answers");
    let content_type = response
        .headers()
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
        .to_owned();
    let bytes = response
        .body()
        .limit(64 * 1024 * 1024)
        .await
        .expect("a body");
    RawResponse {
        status: response.status().as_u16(),
        content_type,
        body: String::from_utf8_lossy(&bytes).into_owned(),
    }
}

/// The `data:` payloads of an event stream, in order.
fn data_lines(body: &str) -> Vec<&str> {
    body.lines()
        .filter_map(|line| line.strip_prefix("data: "))
        .collect()
}

#[actix_web::test]
async fn a_stream_opens_with_a_role_chunk_and_sends_no_usage_chunk() {
    let body = json!({
        "model": MODEL, "stream": true, "max_tokens": 4,
        "stream_options": {"include_usage": true},
        "messages": [{"role": "user", "content": "Hi"}],
    });
    let response = post("chat/completions", body.to_string()).await;
    assert_eq!(response.status, 200);
    assert!(response.content_type.starts_with("text/event-stream"));
    let data = data_lines(&response.body);
    assert_eq!(data.last(), Some(&"[DONE]"));
    let chunks: Vec<Value> = data[..data.len() - 1]
        .iter()
        .map(|d| serde_json::from_str(d).unwrap())
        .collect();
    assert_eq!(
        chunks[0]["choices"][0]["delta"],
        json!({"role": "assistant"})
    );
    assert!(
        chunks.iter().all(|c| c.get("usage").is_none()),
        "include_usage is ignored"
    );
    let finish = chunks.last().unwrap();
    assert_eq!(finish["choices"][0]["finish_reason"], "length");
    assert_eq!(finish["choices"][0]["delta"], json!({}));
}

#[actix_web::test]
async fn an_unknown_model_name_is_served_by_the_loaded_model() {
    let body = json!({
        "model": "no-such-model", "max_tokens": 4,
        "messages": [{"role": "user", "content": "Hi"}],
    });
    let response = post("chat/completions", body.to_string()).await;
    assert_eq!(response.status, 200, "{}", response.body);
    let completion: Value = serde_json::from_str(&response.body).unwrap();
    assert_eq!(completion["model"], "no-such-model");

    // So a misspelt BOR_LLM_CHAT_MODEL goes unnoticed by the turns themselves.
    let proxy = RewritingProxy::start(&shared_server_url(), cap_answer_length);
    let app = RealModelApp::spawn(
        &proxy.base_url(),
        &[("BOR_LLM_CHAT_MODEL", "no-such-model")],
    )
    .await;
    let turn = app.chat("Say hello.").await;
    assert_eq!(turn.last().event, "done", "{:?}", turn.frames);
    assert_eq!(proxy.chat_requests()[0]["model"], "no-such-model");
}

#[actix_web::test]
async fn a_malformed_body_gets_a_plain_text_500() {
    let response = post("chat/completions", "{\"model\":".to_owned()).await;
    assert_eq!(response.status, 500);
    assert!(
        response.content_type.starts_with("text/plain"),
        "{}",
        response.content_type
    );
    assert_eq!(response.body, "Internal Server Error");
    let wrong_type = post(
        "chat/completions",
        json!({"model": MODEL, "messages": "not a list"}).to_string(),
    )
    .await;
    assert_eq!(
        wrong_type.status, 500,
        "a validation error is a 500 here, not a 4xx"
    );
    let error: Value = serde_json::from_str(&wrong_type.body).unwrap();
    assert!(error["error"]["message"].as_str().is_some());
}

#[actix_web::test]
async fn a_prompt_over_the_context_window_gets_an_empty_event_stream() {
    let long = "word ".repeat(9000);
    let body = json!({
        "model": MODEL, "stream": true,
        "messages": [{"role": "user", "content": long}],
    });
    let response = post("chat/completions", body.to_string()).await;
    assert_eq!(response.status, 200);
    assert!(response.content_type.starts_with("text/event-stream"));
    assert_eq!(response.body, "", "no event at all, not even an error");
    let whole = json!({"model": MODEL, "messages": [{"role": "user", "content": long}]});
    let refused = post("chat/completions", whole.to_string()).await;
    assert_eq!(refused.status, 400, "without streaming the error is a 400");
    let error: Value = serde_json::from_str(&refused.body).unwrap();
    assert_eq!(error["error"]["code"], "context_length_exceeded");

    // bor sees a stream that ended without a finish: broken, retried, then unavailable.
    let app = RealModelApp::spawn(&shared_server_url(), &[("BOR_LLM_RETRIES", "1")]).await;
    let turn = ChatResponse::of_frames(
        rest_of(
            app.open_chat_json(json!({
                "message": "Summarise what I said.",
                "history": [{"role": "user", "content": long}, {"role": "assistant", "content": "Noted."}],
            }))
            .await,
        )
        .await,
    );
    assert_eq!(turn.events(), vec!["retry", "error"]);
    assert_eq!(turn.last().data["code"], "llm_unavailable");
}
