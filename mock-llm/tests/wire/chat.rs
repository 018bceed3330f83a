use bor_mock_llm::MockLlm;
use serde_json::{Value, json};

use crate::support::{chat_body, exchange, post_json, tools};

const CHAT: &str = "/v1/chat/completions";

fn with_directive(question: &str, directive: Value) -> String {
    format!("{question}\nMOCK {directive}")
}

#[tokio::test]
async fn a_question_without_directive_gets_the_default_answer_token_by_token() {
    let mock = MockLlm::start().unwrap();
    let response = post_json(mock.addr(), CHAT, &chat_body("What is bor, really?"))
        .await
        .response();
    assert_eq!(response.status, 200);
    assert_eq!(response.header("content-type"), Some("text/event-stream"));
    assert!(response.complete);
    let chunks = response.chunks();
    assert_eq!(
        chunks[0]["choices"][0]["delta"],
        json!({"role": "assistant"})
    );
    assert_eq!(chunks[0]["object"], "chat.completion.chunk");
    let pieces: Vec<&str> = chunks
        .iter()
        .filter_map(|chunk| chunk["choices"][0]["delta"]["content"].as_str())
        .collect();
    assert_eq!(
        pieces,
        ["Mock ", "answer: ", "What ", "is ", "bor, ", "really?"]
    );
    assert_eq!(response.finish_reasons(), ["stop"]);
    assert!(response.ends_with_done());
}

#[tokio::test]
async fn the_same_request_gets_the_same_bytes() {
    let mock = MockLlm::start().unwrap();
    let body = chat_body("Same question twice");
    let first = post_json(mock.addr(), CHAT, &body).await.response();
    let second = post_json(mock.addr(), CHAT, &body).await.response();
    assert_eq!(first.body, second.body);
}

#[tokio::test]
async fn repeat_streams_the_answer_several_times_token_by_token() {
    let mock = MockLlm::start().unwrap();
    let question = with_directive("Q", json!({"reply": "one two ", "repeat": 3}));
    let response = post_json(mock.addr(), CHAT, &chat_body(&question))
        .await
        .response();
    assert_eq!(response.delta_text("content"), "one two one two one two ");
    let pieces = response
        .chunks()
        .iter()
        .filter(|chunk| chunk["choices"][0]["delta"]["content"].is_string())
        .count();
    assert_eq!(pieces, 6);
    assert!(response.ends_with_done());
}

#[tokio::test]
async fn reply_chunks_reasoning_and_usage_shape_the_stream() {
    let mock = MockLlm::start().unwrap();
    let question = with_directive(
        "Q",
        json!({"reply": "Plain answer here.", "reasoning": "Let me think.", "usage": true}),
    );
    let response = post_json(mock.addr(), CHAT, &chat_body(&question))
        .await
        .response();
    assert_eq!(response.delta_text("reasoning_content"), "Let me think.");
    assert_eq!(response.delta_text("content"), "Plain answer here.");
    let chunks = response.chunks();
    let first_content = chunks
        .iter()
        .position(|c| c["choices"][0]["delta"]["content"].is_string());
    let last_reasoning = chunks
        .iter()
        .rposition(|c| c["choices"][0]["delta"]["reasoning_content"].is_string());
    assert!(last_reasoning < first_content, "reasoning comes first");
    let usage = chunks.last().unwrap();
    assert_eq!(usage["choices"], json!([]));
    assert_eq!(usage["usage"]["completion_tokens"], 6);
    assert!(response.ends_with_done());

    let question = with_directive(
        "Q",
        json!({"chunks": ["<tool", "_call>", "é"], "reasoning": "Hm", "reasoning_field": "reasoning"}),
    );
    let response = post_json(mock.addr(), CHAT, &chat_body(&question))
        .await
        .response();
    assert_eq!(response.delta_text("reasoning"), "Hm");
    assert_eq!(response.delta_text("reasoning_content"), "");
    let pieces: Vec<String> = response
        .chunks()
        .iter()
        .filter_map(|c| {
            c["choices"][0]["delta"]["content"]
                .as_str()
                .map(str::to_owned)
        })
        .collect();
    assert_eq!(pieces, ["<tool", "_call>", "é"]);
}

#[tokio::test]
async fn stream_options_include_usage_adds_the_usage_chunk() {
    let mock = MockLlm::start().unwrap();
    let mut body = chat_body("How many tokens?");
    body["stream_options"] = json!({"include_usage": true});
    let response = post_json(mock.addr(), CHAT, &body).await.response();
    let usage = response.chunks().last().unwrap()["usage"].clone();
    assert_eq!(usage["completion_tokens"], 5);
    let prompt_tokens = usage["prompt_tokens"].as_u64().unwrap();
    assert_eq!(usage["total_tokens"], prompt_tokens + 5);
    assert!(response.ends_with_done());
}

#[tokio::test]
async fn an_empty_reply_is_a_complete_stream_without_content() {
    let mock = MockLlm::start().unwrap();
    let question = with_directive("Q", json!({"reply": ""}));
    let response = post_json(mock.addr(), CHAT, &chat_body(&question))
        .await
        .response();
    assert!(response.complete);
    assert_eq!(response.delta_text("content"), "");
    assert_eq!(response.finish_reasons(), ["stop"]);
    assert!(response.ends_with_done());
}

/// Reassembles streamed tool calls by `index`: (id, name, arguments).
fn tool_calls(chunks: &[Value]) -> Vec<(String, String, String)> {
    let mut calls: Vec<(String, String, String)> = Vec::new();
    for chunk in chunks {
        let Some(fragments) = chunk["choices"][0]["delta"]["tool_calls"].as_array() else {
            continue;
        };
        for fragment in fragments {
            let index = fragment["index"].as_u64().unwrap() as usize;
            if index == calls.len() {
                calls.push(Default::default());
            }
            let call = &mut calls[index];
            if let Some(id) = fragment["id"].as_str() {
                call.0 = id.to_owned();
            }
            if let Some(name) = fragment["function"]["name"].as_str() {
                call.1 = name.to_owned();
            }
            call.2.push_str(
                fragment["function"]["arguments"]
                    .as_str()
                    .unwrap_or_default(),
            );
        }
    }
    calls
}

#[tokio::test]
async fn tool_calls_stream_as_fragments_that_reassemble_to_the_arguments() {
    let mock = MockLlm::start().unwrap();
    let arguments = json!({"query": "bor retry policy", "limit": 3});
    let question = with_directive(
        "Q",
        json!({"tool_calls": [
            {"name": "search_documents", "arguments": arguments},
            {"name": "list_documents"},
        ], "reply": "Final."}),
    );
    let mut body = chat_body(&question);
    body["tools"] = tools();
    let response = post_json(mock.addr(), CHAT, &body).await.response();
    let chunks = response.chunks();
    let calls = tool_calls(&chunks);
    assert_eq!(calls.len(), 2);
    assert_eq!(calls[0].0, "call_0_0");
    assert_eq!(calls[0].1, "search_documents");
    assert_eq!(
        serde_json::from_str::<Value>(&calls[0].2).unwrap(),
        arguments
    );
    assert_eq!(calls[1].1, "list_documents");
    assert_eq!(calls[1].2, "{}");
    let fragments_of_first = chunks
        .iter()
        .filter(|c| c["choices"][0]["delta"]["tool_calls"][0]["index"] == 0)
        .count();
    assert!(
        fragments_of_first > 3,
        "arguments are split over several fragments"
    );
    let with_id = chunks
        .iter()
        .filter(|c| c["choices"][0]["delta"]["tool_calls"][0]["id"].is_string())
        .count();
    assert_eq!(with_id, 2, "the id comes once per call");
    assert_eq!(response.finish_reasons(), ["tool_calls"]);
    assert_eq!(response.delta_text("content"), "");

    // The same directive without `tools` gets the text reply.
    let response = post_json(mock.addr(), CHAT, &chat_body(&question))
        .await
        .response();
    assert_eq!(response.delta_text("content"), "Final.");
    assert_eq!(response.finish_reasons(), ["stop"]);
}

#[tokio::test]
async fn repeat_ids_puts_the_id_and_name_in_every_fragment() {
    let mock = MockLlm::start().unwrap();
    let question = with_directive(
        "Q",
        json!({"tool_calls": [{"name": "read_document", "arguments": {"document_id": 12}}], "repeat_ids": true}),
    );
    let mut body = chat_body(&question);
    body["tools"] = tools();
    let response = post_json(mock.addr(), CHAT, &body).await.response();
    let fragments: Vec<Value> = response
        .chunks()
        .iter()
        .filter_map(|c| c["choices"][0]["delta"]["tool_calls"].get(0).cloned())
        .collect();
    assert!(fragments.len() > 2);
    for fragment in &fragments {
        assert_eq!(fragment["id"], "call_0_0");
        assert_eq!(fragment["type"], "function");
        assert_eq!(fragment["function"]["name"], "read_document");
    }
    let arguments: String = fragments
        .iter()
        .map(|f| f["function"]["arguments"].as_str().unwrap())
        .collect();
    assert_eq!(arguments, r#"{"document_id":12}"#);
}

#[tokio::test]
async fn tool_rounds_counts_the_assistant_tool_call_messages() {
    let mock = MockLlm::start().unwrap();
    let question = with_directive(
        "Q",
        json!({"tool_calls": [{"name": "list_documents", "arguments": {}}], "tool_rounds": 2, "reply": "Done."}),
    );
    let mut body = chat_body(&question);
    body["tools"] = tools();
    let round = json!([
        {"role": "assistant", "content": null, "tool_calls": [{"id": "call_0_0", "type": "function",
            "function": {"name": "list_documents", "arguments": "{}"}}]},
        {"role": "tool", "tool_call_id": "call_0_0", "content": "[]"},
    ]);
    let mut answers = Vec::new();
    for _ in 0..3 {
        let response = post_json(mock.addr(), CHAT, &body).await.response();
        answers.push((
            tool_calls(&response.chunks())
                .first()
                .map(|call| call.0.clone()),
            response.delta_text("content"),
        ));
        body["messages"]
            .as_array_mut()
            .unwrap()
            .extend(round.as_array().unwrap().iter().cloned());
    }
    assert_eq!(
        answers,
        [
            (Some("call_0_0".to_owned()), String::new()),
            (Some("call_1_0".to_owned()), String::new()),
            (None, "Done.".to_owned()),
        ]
    );
}

#[tokio::test]
async fn leak_stops_after_the_correction_unless_leak_always() {
    let mock = MockLlm::start().unwrap();
    let leak =
        r#"<tool_call>{"name": "search_documents", "arguments": {"query": "x"}}</tool_call>"#;
    let question = with_directive("Q", json!({"leak": leak, "reply": "Clean answer."}));
    let mut body = chat_body(&question);
    let first = post_json(mock.addr(), CHAT, &body).await.response();
    assert_eq!(first.delta_text("content"), leak);
    assert!(
        first.chunks().len() > 3,
        "the markup is split over several chunks"
    );

    body["messages"][0]["content"] = json!(
        "You answer questions.\nYour previous reply contained raw tool-call markup, which is not interpreted here."
    );
    let corrected = post_json(mock.addr(), CHAT, &body).await.response();
    assert_eq!(corrected.delta_text("content"), "Clean answer.");

    let always = with_directive("Q", json!({"leak": leak, "leak_always": true}));
    body["messages"][1]["content"] = json!(always);
    let still = post_json(mock.addr(), CHAT, &body).await.response();
    assert_eq!(still.delta_text("content"), leak);
}

#[tokio::test]
async fn a_non_streaming_request_gets_one_completion_object() {
    let mock = MockLlm::start().unwrap();
    let mut body = chat_body("Tell me\nMOCK {\"reasoning\": \"Thinking.\"}");
    body["stream"] = json!(false);
    let response = post_json(mock.addr(), CHAT, &body).await.response();
    assert_eq!(response.status, 200);
    let completion = response.json();
    assert_eq!(completion["object"], "chat.completion");
    let message = &completion["choices"][0]["message"];
    assert_eq!(message["content"], "Mock answer: Tell me");
    assert_eq!(message["reasoning_content"], "Thinking.");
    assert_eq!(completion["choices"][0]["finish_reason"], "stop");

    body["messages"][1]["content"] =
        json!("Q\nMOCK {\"tool_calls\": [{\"name\": \"list_documents\"}]}");
    body["tools"] = tools();
    let completion = post_json(mock.addr(), CHAT, &body).await.response().json();
    assert_eq!(completion["choices"][0]["finish_reason"], "tool_calls");
    let call = &completion["choices"][0]["message"]["tool_calls"][0];
    assert_eq!(call["function"]["name"], "list_documents");
    assert_eq!(call["function"]["arguments"], "{}");
}

#[tokio::test]
async fn the_directive_is_read_from_the_last_user_message_only() {
    let mock = MockLlm::start().unwrap();
    let mut body = chat_body("Second question");
    body["messages"] = json!([
        {"role": "system", "content": "MOCK {\"status\": 500}"},
        {"role": "user", "content": "First\nMOCK {\"status\": 500}"},
        {"role": "assistant", "content": "Earlier answer"},
        {"role": "user", "content": [{"type": "text", "text": "Second question"}]},
    ]);
    let response = post_json(mock.addr(), CHAT, &body).await.response();
    assert_eq!(response.status, 200);
    assert_eq!(
        response.delta_text("content"),
        "Mock answer: Second question"
    );
}

#[tokio::test]
async fn bad_requests_and_bad_directives_get_openai_errors() {
    let mock = MockLlm::start().unwrap();
    let addr = mock.addr();

    let response = exchange(addr, "POST", CHAT, b"{not json").await.response();
    assert_eq!(response.status, 400);
    assert!(
        response.json()["error"]["message"]
            .as_str()
            .unwrap()
            .contains("JSON")
    );

    let typo = chat_body("Q\nMOCK {\"stauts\": 503}");
    let response = post_json(addr, CHAT, &typo).await.response();
    assert_eq!(response.status, 400);
    let message = response.json()["error"]["message"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(message.contains("stauts"), "{message}");
    assert_eq!(response.json()["error"]["type"], "invalid_request_error");

    let mut not_streaming = chat_body("Q\nMOCK {\"drop_after\": 1}");
    not_streaming["stream"] = json!(false);
    assert_eq!(
        post_json(addr, CHAT, &not_streaming)
            .await
            .response()
            .status,
        400
    );

    let no_messages = post_json(addr, CHAT, &json!({"model": "m"}))
        .await
        .response();
    assert_eq!(no_messages.status, 400);

    let unknown = exchange(addr, "GET", "/v1/unknown", b"").await.response();
    assert_eq!(unknown.status, 404);
    assert!(unknown.json()["error"]["message"].is_string());

    let wrong_method = exchange(addr, "GET", CHAT, b"").await.response();
    assert_eq!(wrong_method.status, 405);
}

#[tokio::test]
async fn models_lists_the_configured_ids() {
    let mock = MockLlm::start().unwrap();
    let models = exchange(mock.addr(), "GET", "/v1/models", b"")
        .await
        .response()
        .json();
    assert_eq!(models["object"], "list");
    assert_eq!(
        models["data"],
        json!([{"id": "smollm2", "object": "model", "created": 0, "owned_by": "bor-mock-llm"}])
    );

    let mock = MockLlm::builder()
        .models("chat-a", "embed-b")
        .start()
        .unwrap();
    let models = exchange(mock.addr(), "GET", "/v1/models", b"")
        .await
        .response()
        .json();
    let ids: Vec<&str> = models["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, ["chat-a", "embed-b"]);
}
