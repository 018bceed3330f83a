//! What reaches the requester from a real stream: content, reasoning, assembled tool
//! calls, and the request bor sends.

use bor_actors::llm::{ChatMessage, ChatRequest, LlmCommand, LlmEvent};
use serde_json::json;

use super::*;

#[actix::test]
async fn content_streams_in_pieces_and_the_request_is_openai_shaped() {
    let mock = mock();
    let events = run(
        settings(mock.base_url()),
        chat(json!({"reply": "Hello there, friend."})),
    )
    .await;
    let pieces: Vec<&LlmEvent> = events
        .iter()
        .filter(|e| matches!(e, LlmEvent::Content(_)))
        .collect();
    assert!(pieces.len() >= 3, "one piece per token: {pieces:?}");
    assert_eq!(content(&events), "Hello there, friend.");
    match events.last() {
        Some(LlmEvent::ChatDone(done)) => assert_eq!(done.finish_reason.as_deref(), Some("stop")),
        other => panic!("{other:?}"),
    }
    let request = &mock.requests()[0];
    assert_eq!(request.path, "/v1/chat/completions");
    assert_eq!(
        request.header("authorization"),
        Some(format!("Bearer {API_KEY}").as_str())
    );
    assert_eq!(request.body["model"], "smollm2");
    assert_eq!(request.body["stream"], true);
    assert!(
        request.body.get("tools").is_none(),
        "tools-free means no tools key"
    );
    assert_eq!(
        request.body["messages"][0],
        json!({"role": "system", "content": "You are a test."})
    );
}

/// A streamed answer read to its `[DONE]` leaves its connection to the next request:
/// three answers and an embedding, one after the other, over one connection.
#[actix::test]
async fn answers_one_after_another_share_one_connection() {
    let mock = mock();
    for reply in ["One.", "Two.", "Three."] {
        let events = run(settings(mock.base_url()), chat(json!({"reply": reply}))).await;
        assert_eq!(content(&events), reply);
        // The rest of the stream, once the mock has written it, is read by a task of
        // its own on this thread.
        while mock.responses_in_progress() > 0 {
            actix::clock::sleep(std::time::Duration::from_millis(5)).await;
        }
        actix::clock::sleep(std::time::Duration::from_millis(10)).await;
    }
    run(
        settings(mock.base_url()),
        embed_documents(vec!["a passage".to_owned()]),
    )
    .await;
    assert_eq!(mock.requests().len(), 4);
    assert_eq!(mock.accepted_connections(), 1);
}

#[actix::test]
async fn reasoning_is_separated_from_content_in_both_field_names() {
    for field in ["reasoning_content", "reasoning"] {
        let mock = mock();
        let events = run(
            settings(mock.base_url()),
            chat(
                json!({"reasoning": "First think.", "reasoning_field": field, "reply": "Answer."}),
            ),
        )
        .await;
        let reasoning: String = events
            .iter()
            .filter_map(|e| match e {
                LlmEvent::Reasoning(text) => Some(text.as_str()),
                _ => None,
            })
            .collect();
        assert_eq!(reasoning, "First think.", "{field}");
        assert_eq!(content(&events), "Answer.", "{field}");
    }
}

#[actix::test]
async fn tool_calls_are_assembled_from_fragments() {
    for repeat_ids in [false, true] {
        let mock = mock();
        let directive = json!({
            "repeat_ids": repeat_ids,
            "tool_calls": [
                {"name": "search_documents", "arguments": {"query": "refund policy for orders", "limit": 3}},
                {"name": "list_documents", "arguments": {}}
            ]
        });
        let command = LlmCommand::Chat(ChatRequest {
            messages: vec![ChatMessage::user(format!("Q\nMOCK {directive}"))],
            tools: Some(bor_actors::turn::tool_definitions()),
        });
        let events = run(settings(mock.base_url()), command).await;
        let Some(LlmEvent::ChatDone(done)) = events.last() else {
            panic!("{events:?}");
        };
        assert_eq!(done.finish_reason.as_deref(), Some("tool_calls"));
        assert_eq!(done.tool_calls.len(), 2, "repeat_ids={repeat_ids}");
        let first = &done.tool_calls[0];
        assert_eq!(first.function.name, "search_documents");
        let arguments: serde_json::Value = serde_json::from_str(&first.function.arguments).unwrap();
        assert_eq!(
            arguments,
            json!({"query": "refund policy for orders", "limit": 3})
        );
        assert!(!first.id.is_empty());
        assert_ne!(first.id, done.tool_calls[1].id);
        assert_eq!(done.tool_calls[1].function.name, "list_documents");
        let body = &mock.chat_requests()[0];
        assert_eq!(body["tools"].as_array().unwrap().len(), 3);
    }
}

#[actix::test]
async fn multibyte_text_split_across_reads_arrives_whole() {
    let mock = mock();
    let reply = "Grüße — 日本語 🎉 ok";
    let events = run(
        settings(mock.base_url()),
        chat(json!({"reply": reply, "split_writes": true})),
    )
    .await;
    assert_eq!(content(&events), reply);
}

#[actix::test]
async fn a_finish_reason_without_done_is_a_complete_answer() {
    let mock = mock();
    let events = run(
        settings(mock.base_url()),
        chat(json!({"no_done": true, "reply": "All here."})),
    )
    .await;
    assert_eq!(content(&events), "All here.");
    assert!(matches!(events.last(), Some(LlmEvent::ChatDone(_))));
}

#[actix::test]
async fn usage_only_final_chunk_is_reported() {
    let mock = mock();
    let events = run(settings(mock.base_url()), chat(json!({"usage": true}))).await;
    let Some(LlmEvent::ChatDone(done)) = events.last() else {
        panic!("{events:?}");
    };
    assert!(done.usage.is_some_and(|u| u.total_tokens > 0));
}

#[actix::test]
async fn streams_ask_for_usage_and_get_it_without_a_directive() {
    let mock = mock();
    let events = run(
        settings(mock.base_url()),
        chat(json!({"reply": "Three words here."})),
    )
    .await;
    let Some(LlmEvent::ChatDone(done)) = events.last() else {
        panic!("{events:?}");
    };
    let usage = done.usage.expect("the server's usage");
    assert!(
        usage.prompt_tokens > 0 && usage.completion_tokens > 0,
        "{usage:?}"
    );
    let asked = &mock.chat_requests()[0];
    assert_eq!(asked["stream_options"], json!({"include_usage": true}));
}

#[actix::test]
async fn a_server_that_refuses_stream_options_is_asked_again_without_them() {
    let mock = mock();
    let settings = settings(mock.base_url());
    let stream_usage = settings.stream_usage.clone();
    let directive = json!({"refuse_stream_options": true, "reply": "Fine."});
    let events = run(settings.clone(), chat(directive.clone())).await;
    assert_eq!(content(&events), "Fine.");
    let Some(LlmEvent::ChatDone(done)) = events.last() else {
        panic!("{events:?}");
    };
    assert_eq!(done.usage, None, "no usage: the turn estimates it");
    assert!(
        retries(&events).is_empty(),
        "not a retry: the same attempt, reworded"
    );
    assert!(!stream_usage.asked(), "not asked again in this process");
    let asked = mock.chat_requests();
    assert_eq!(asked.len(), 2);
    assert!(asked[0].get("stream_options").is_some());
    assert!(asked[1].get("stream_options").is_none());

    let events = run(settings, chat(directive)).await;
    assert_eq!(content(&events), "Fine.");
    assert_eq!(
        mock.chat_requests().len(),
        3,
        "the next request goes without at once"
    );
}

#[actix::test]
async fn models_are_listed() {
    let mock = mock();
    let events = run(settings(mock.base_url()), LlmCommand::ListModels).await;
    assert_eq!(events, vec![LlmEvent::Models(vec!["smollm2".into()])]);
}

#[actix::test]
async fn the_stream_pauses_at_the_relay_window_until_pieces_are_acknowledged() {
    use bor_actors::llm::RELAY_WINDOW;
    let mock = mock();
    let tokens = RELAY_WINDOW + 100;
    let mut harness = Harness::start(settings(mock.base_url()));
    harness
        .llm
        .do_send(chat(json!({"reply": "w ", "repeat": tokens})));
    let mut pieces = 0;
    while pieces < RELAY_WINDOW {
        match harness.events.recv().await {
            Some(LlmEvent::Content(_)) => pieces += 1,
            other => panic!("expected content, got {other:?}"),
        }
    }
    // Nothing more comes until the requester says it passed the pieces on.
    let more =
        tokio::time::timeout(std::time::Duration::from_millis(300), harness.events.recv()).await;
    assert!(more.is_err(), "the actor went past its window: {more:?}");

    harness.llm.do_send(LlmCommand::Relayed(RELAY_WINDOW));
    let rest = harness.until_end().await;
    assert_eq!(content(&rest).len(), 2 * (tokens - RELAY_WINDOW));
    assert!(matches!(rest.last(), Some(LlmEvent::ChatDone(_))));
}

#[actix::test]
async fn embeddings_go_to_the_embeddings_server_and_chat_to_the_chat_server() {
    let (chat_server, embeddings_server) = (mock(), mock());
    let mut two_servers = settings(chat_server.base_url());
    two_servers.embed_base_url = embeddings_server.base_url();

    let events = run(
        two_servers.clone(),
        embed_documents(vec!["refund policy".into()]),
    )
    .await;
    assert!(
        matches!(events.last(), Some(LlmEvent::Embedded(v)) if v.len() == 1),
        "{events:?}"
    );
    let events = run(two_servers.clone(), chat(json!({"reply": "Hi."}))).await;
    assert_eq!(content(&events), "Hi.");
    run(two_servers.embeddings_server(), LlmCommand::ListModels).await;

    let paths = |server: &bor_mock_llm::MockLlm| -> Vec<String> {
        server.requests().iter().map(|r| r.path.clone()).collect()
    };
    assert_eq!(paths(&chat_server), ["/v1/chat/completions"]);
    assert_eq!(paths(&embeddings_server), ["/v1/embeddings", "/v1/models"]);
}

#[actix::test]
async fn a_configured_temperature_goes_with_every_chat_request() {
    let mock = mock();
    let mut greedy = settings(mock.base_url());
    greedy.temperature = Some(0.0);
    let events = run(greedy, chat(json!({"reply": "Hi."}))).await;
    assert_eq!(content(&events), "Hi.");
    assert_eq!(mock.requests()[0].body["temperature"], 0.0);
}
