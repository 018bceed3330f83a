//! Whole turns over recorded-shape streams of real servers (the mock's `fixture`
//! directive replays `mock-llm/fixtures/*.sse`): the frames bor sends, and the follow-up
//! request that carries an assembled tool call.

use serde_json::{Value, json};

use crate::support::*;

/// The text of every frame of one kind, joined.
fn text_of(response: &ChatResponse, event: &str) -> String {
    response
        .frames
        .iter()
        .filter(|f| f.event == event)
        .filter_map(|f| f.data["text"].as_str())
        .collect()
}

/// A deflected turn (empty knowledge base) over `fixture`.
async fn deflected_turn(app: &TestApp, fixture: &str) -> ChatResponse {
    let response = app
        .chat(&directed(
            "How are refunds paid?",
            json!({ "fixture": fixture }),
        ))
        .await;
    response.assert_one_terminal_frame();
    response
}

#[actix_web::test]
async fn openai_text_with_a_usage_only_final_chunk_is_a_clean_answer() {
    let app = TestApp::spawn().await;
    let response = deflected_turn(&app, "openai-text").await;
    let events = response.events();
    assert_eq!(events.last(), Some(&"done"), "{events:?}");
    assert!(events[..events.len() - 1].iter().all(|e| *e == "delta"));
    assert_eq!(response.deltas(), "Refunds are paid within 14 days.");
    assert_eq!(response.last().data["rounds"], 1);
    let rows = app.wait_for_rows(1).await;
    assert_eq!(rows[0].answer, "Refunds are paid within 14 days.");
}

#[actix_web::test]
async fn reasoning_content_and_reasoning_fields_become_thinking_frames() {
    let app = TestApp::spawn().await;
    for (fixture, thinking, answer) in [
        (
            "vllm-reasoning",
            "The context says fourteen days.",
            "Refunds take fourteen days.",
        ),
        (
            "ollama-reasoning",
            "The user asks about refunds.",
            "Refunds take fourteen days.",
        ),
        (
            "llamacpp-reasoning",
            "The policy page says fourteen days.",
            "Refunds take fourteen days.",
        ),
    ] {
        let response = deflected_turn(&app, fixture).await;
        assert_eq!(response.last().event, "done", "{fixture}");
        assert_eq!(text_of(&response, "thinking"), thinking, "{fixture}");
        assert_eq!(response.deltas().trim(), answer, "{fixture}");
        let events = response.events();
        let first_delta = events.iter().position(|e| *e == "delta").unwrap();
        let last_thinking = events.iter().rposition(|e| *e == "thinking").unwrap();
        assert!(last_thinking < first_delta, "{fixture}: {events:?}");
        assert_eq!(response.last().data["scaffold_stripped"], 0, "{fixture}");
    }
}

#[actix_web::test]
async fn a_finish_chunk_without_done_is_a_complete_answer() {
    let app = TestApp::spawn().await;
    let response = deflected_turn(&app, "finish-without-done").await;
    assert_eq!(response.last().event, "done");
    assert_eq!(response.deltas(), "Refunds take fourteen days.");
    assert_eq!(response.last().data["retries"], 0);
    assert_eq!(app.mock.chat_requests().len(), 1);
}

#[actix_web::test]
async fn a_stream_cut_off_after_output_is_interrupted_and_not_retried() {
    let app = TestApp::spawn().await;
    let response = deflected_turn(&app, "cut-off-mid-answer").await;
    assert_eq!(response.events(), vec!["delta", "delta", "error"]);
    assert_eq!(response.deltas(), "Refunds take");
    assert_eq!(response.last().data["code"], "llm_interrupted");
    assert_eq!(app.mock.chat_requests().len(), 1);
    assert!(app.query_log().await.is_empty());
}

#[actix_web::test]
async fn an_error_object_after_output_is_interrupted() {
    let app = TestApp::spawn().await;
    let response = deflected_turn(&app, "vllm-error-mid-stream").await;
    assert_eq!(response.events(), vec!["delta", "delta", "error"]);
    assert_eq!(response.deltas(), "Refunds are");
    assert_eq!(response.last().data["code"], "llm_interrupted");
    assert_eq!(app.mock.chat_requests().len(), 1);
}

#[actix_web::test]
async fn an_error_object_before_output_is_retried_then_unavailable() {
    let app = TestApp::spawn_with(&[("BOR_LLM_RETRIES", "1")]).await;
    let response = deflected_turn(&app, "openai-error").await;
    assert_eq!(response.events(), vec!["retry", "error"]);
    assert_eq!(response.frames[0].data, json!({"attempt": 1, "max": 1}));
    assert_eq!(response.last().data["code"], "llm_unavailable");
    let chats = app.mock.chat_requests();
    assert_eq!(chats.len(), 2);
    assert_eq!(chats[0], chats[1], "a retry sends the identical body");
}

/// A call as the follow-up request must carry it (OpenAI layout).
fn call(id: &str, name: &str, arguments: &str) -> Value {
    json!({"id": id, "type": "function", "function": {"name": name, "arguments": arguments}})
}

/// A grounded turn whose first request is answered by `fixture` (tool calls) and the
/// second by a plain reply; checks the tool frames and the follow-up request.
async fn tool_turn(fixture: &str, expected_calls: &[Value], text_before_calls: &str) {
    let app = TestApp::spawn().await;
    let (document_id, _) = app
        .insert_document(
            "Refund policy",
            "Refunds are paid within fourteen days of a return.",
        )
        .await;
    assert_eq!(document_id, 1, "the fixtures read document 1");
    let question = directed(
        "How are refunds paid?",
        json!({"fixture": fixture, "reply": "Within fourteen days."}),
    );
    let response = app.chat(&question).await;
    response.assert_one_terminal_frame();
    assert_eq!(
        response.last().event,
        "done",
        "{fixture}: {:?}",
        response.frames
    );

    let tool_frames: Vec<&Frame> = response
        .frames
        .iter()
        .filter(|f| f.event == "tool")
        .collect();
    assert_eq!(tool_frames.len(), 2 * expected_calls.len(), "{fixture}");
    for (frames, expected) in tool_frames.chunks(2).zip(expected_calls) {
        let name = &expected["function"]["name"];
        assert_eq!(frames[0].data["phase"], "start", "{fixture}");
        assert_eq!(frames[0].data["name"], *name, "{fixture}");
        assert_eq!(frames[0].data["call_id"], expected["id"], "{fixture}");
        assert_eq!(frames[1].data["phase"], "end", "{fixture}");
        assert_eq!(frames[1].data["ok"], true, "{fixture}: {name}");
    }
    assert_eq!(
        response.deltas(),
        format!("{text_before_calls}Within fourteen days."),
        "{fixture}"
    );
    assert_eq!(response.last().data["rounds"], 2, "{fixture}");

    let chats = app.mock.chat_requests();
    assert_eq!(chats.len(), 2, "{fixture}");
    let messages = chats[1]["messages"]
        .as_array()
        .expect("the follow-up request has messages");
    let assistant = &messages[2];
    assert_eq!(assistant["role"], "assistant", "{fixture}");
    assert_eq!(assistant["content"], text_before_calls, "{fixture}");
    assert_eq!(
        assistant["tool_calls"],
        Value::Array(expected_calls.to_vec()),
        "{fixture}"
    );
    for (offset, expected) in expected_calls.iter().enumerate() {
        let result = &messages[3 + offset];
        assert_eq!(result["role"], "tool", "{fixture}");
        assert_eq!(result["tool_call_id"], expected["id"], "{fixture}");
        let content: Value = result["content"]
            .as_str()
            .and_then(|text| serde_json::from_str(text).ok())
            .expect("a tool result is JSON text");
        assert!(content.get("error").is_none(), "{fixture}: {content}");
    }
    assert_eq!(messages.len(), 3 + expected_calls.len(), "{fixture}");
}

#[actix_web::test]
async fn openai_parallel_tool_calls_are_assembled_by_index() {
    tool_turn(
        "openai-tool-call",
        &[
            call(
                "call_DdmO9pD3xa9XTPNJ32zg2hcA",
                "search_documents",
                r#"{"query":"refund policy"}"#,
            ),
            call("call_q0WQrXxHxGGTwWyBMkxRzHqV", "list_documents", "{}"),
        ],
        "",
    )
    .await;
}

#[actix_web::test]
async fn a_vllm_tool_call_after_some_text_keeps_the_text() {
    tool_turn(
        "vllm-tool-call",
        &[call(
            "chatcmpl-tool-8d1e4b7c2a9f4e3b",
            "read_document",
            r#"{"document_id": 1}"#,
        )],
        "Let me look that up.",
    )
    .await;
}

#[actix_web::test]
async fn an_ollama_tool_call_in_one_chunk_is_taken_whole() {
    tool_turn(
        "ollama-tool-call",
        &[call(
            "call_wl5rtq5y",
            "search_documents",
            r#"{"limit":3,"query":"refund policy"}"#,
        )],
        "",
    )
    .await;
}

#[actix_web::test]
async fn a_llamacpp_tool_call_split_mid_word_is_joined() {
    tool_turn(
        "llamacpp-tool-call",
        &[call(
            "hX4tQ9kB2mR7vN1cL8pW3sJ6yF0dG5aE",
            "read_document",
            r#"{"document_id": 1}"#,
        )],
        "",
    )
    .await;
}

#[actix_web::test]
async fn llama_cpp_python_repeated_ids_and_names_are_taken_once() {
    tool_turn(
        "llama-cpp-python-tool-call",
        &[call(
            "call__0_read_document_cmpl-3f2a9c4e-8b1d-4e6f-a0c2-5d7e9b1f3a6c",
            "read_document",
            r#"{"document_id": 1}"#,
        )],
        "",
    )
    .await;
}
