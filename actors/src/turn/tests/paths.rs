//! Deflected and grounded turns, the agent loop, its round cap and kill-switch.

use serde_json::Value;

use super::*;
use crate::llm::{ChatMessage, Role};
use crate::record::{TurnOutcome, TurnPath};
use crate::turn::{CORRECTION_INSTRUCTION, TOOL_NAMES};

#[actix::test]
async fn clean_deflected_turn_streams_and_ends_with_done() {
    let run = run_turn(
        "What is the capital of France?",
        settings(),
        empty(),
        vec![embedded(), reply(&["Paris", " is the capital."])],
    )
    .await;

    assert_eq!(run.names(), vec!["delta", "delta", "done"]);
    assert_eq!(run.deltas(), "Paris is the capital.");
    let done = run.done();
    assert_eq!(done.path, TurnPath::Deflected);
    assert_eq!(
        (done.rounds, done.retries, done.scaffold_stripped),
        (1, 0, 0)
    );
    assert!(!done.recovered);
    assert!(done.sources.is_empty());

    assert_eq!(
        run.asked[0],
        Asked::Embed(
            vec!["What is the capital of France?".into()],
            EmbedPurpose::Query
        )
    );
    assert_eq!(done.query, "What is the capital of France?");
    let chats = run.chats();
    assert_eq!(chats.len(), 1);
    assert!(
        chats[0].tools.is_none(),
        "a deflected request offers no tools"
    );
    let messages = &chats[0].messages;
    assert_eq!(messages.len(), 2);
    assert_eq!(messages[0].role, Role::System);
    assert!(
        messages[0]
            .content
            .as_deref()
            .unwrap()
            .contains("This is not from your documents")
    );
    assert_eq!(
        messages[1],
        ChatMessage::user("What is the capital of France?")
    );

    let record = run.record();
    assert_eq!(record.outcome, TurnOutcome::Done);
    assert_eq!(record.answer, "Paris is the capital.");
    assert_eq!(record.rounds, 1);
    assert!(record.first_token_ms.is_some());
    run.assert_one_terminal_frame_last();
}

#[actix::test]
async fn a_follow_up_searches_with_the_previous_question_and_asks_as_sent() {
    let run = run_setup(TurnSetup {
        question: "and what is its default?",
        history: vec![
            ChatMessage::user("What does BOR_RETRIEVAL_TOP_K control?"),
            ChatMessage::assistant("How many chunks the model gets."),
        ],
        knowledge: relevant(),
        script: vec![embedded(), reply(&["5."])],
        ..TurnSetup::default()
    })
    .await;

    let searched = "and what is its default?\nWhat does BOR_RETRIEVAL_TOP_K control?";
    assert_eq!(
        run.asked[0],
        Asked::Embed(vec![searched.into()], EmbedPurpose::Query)
    );
    assert_eq!(run.done().query, searched);
    assert_eq!(run.record().query, searched);
    assert_eq!(run.record().question, "and what is its default?");
    let messages = &run.chats()[0].messages;
    assert_eq!(
        messages.last(),
        Some(&ChatMessage::user("and what is its default?")),
        "the model is asked the question as sent"
    );
    assert_eq!(messages.len(), 4, "system, the history, the question");
}

#[actix::test]
async fn grounded_turn_runs_a_tool_and_answers_with_sources() {
    let run = run_turn(
        "How do refunds work?",
        settings(),
        relevant(),
        vec![
            embedded(),
            calls(
                "",
                vec![tool_call(
                    "call_1",
                    "search_documents",
                    r#"{"query":"refund policy"}"#,
                )],
            ),
            embedded(),
            reply(&["Refunds take 14 days."]),
        ],
    )
    .await;

    assert_eq!(run.names(), vec!["tool", "tool", "delta", "done"]);
    assert_eq!(
        run.frames[0],
        Frame::tool_start("call_1", "search_documents")
    );
    assert_eq!(
        run.frames[1],
        Frame::tool_end("call_1", "search_documents", true)
    );
    let done = run.done();
    assert_eq!(done.path, TurnPath::Grounded);
    assert_eq!(done.rounds, 2);
    let chunk_ids: Vec<i64> = done.sources.iter().map(|s| s.chunk_id).collect();
    assert_eq!(chunk_ids, vec![11, 21], "deduplicated, best score first");
    let numbers: Vec<u32> = done.sources.iter().map(|s| s.n).collect();
    assert_eq!(numbers, vec![1, 2], "a chunk found again keeps its number");
    assert_eq!(done.sources[0].heading, "Part 1");
    assert_eq!(done.sources[0].snippet, "Text of chunk 11.");

    assert_eq!(
        run.asked[2],
        Asked::Embed(vec!["refund policy".into()], EmbedPurpose::Query),
        "a search_documents query is embedded as a query"
    );
    let chats = run.chats();
    assert_eq!(chats.len(), 2);
    for chat in &chats {
        let names: Vec<&str> = chat
            .tools
            .as_ref()
            .unwrap()
            .iter()
            .map(|t| t["function"]["name"].as_str().unwrap())
            .collect();
        assert_eq!(names, TOOL_NAMES);
    }
    let system = chats[0].messages[0].content.as_deref().unwrap();
    assert!(
        system.contains("[1] Document 1 — Part 1 (document 1, chunk 11)\nText of chunk 11."),
        "context in the system message, under its number: {system}"
    );
    let second = &chats[1].messages;
    assert_eq!(second.len(), 4);
    assert_eq!(second[2].role, Role::Assistant);
    assert_eq!(second[2].tool_calls[0].id, "call_1");
    assert_eq!(second[3].role, Role::Tool);
    assert_eq!(second[3].tool_call_id.as_deref(), Some("call_1"));
    let result: Value = serde_json::from_str(second[3].content.as_deref().unwrap()).unwrap();
    assert_eq!(result["results"][0]["chunk_id"], 11);
    assert_eq!(
        result["results"][0]["n"], 1,
        "search results are cited like the context"
    );
    assert_eq!(result["results"][0]["text"], "Text of chunk 11.");

    let record = run.record();
    assert_eq!(record.tool_calls, 1);
    assert_eq!(record.sources, done.sources);
    run.assert_one_terminal_frame_last();
}

#[actix::test]
async fn round_cap_ends_with_one_tools_free_request() {
    let list = || calls("", vec![tool_call("c", "list_documents", "{}")]);
    let mut capped = settings();
    capped.max_rounds = 2;
    let run = run_turn(
        "List everything",
        capped,
        relevant(),
        vec![embedded(), list(), list(), reply(&["Here they are."])],
    )
    .await;

    let chats = run.chats();
    assert_eq!(chats.len(), 3, "two tool rounds, then the final request");
    assert!(chats[0].tools.is_some());
    assert!(chats[1].tools.is_some());
    assert!(chats[2].tools.is_none(), "the final request is tools-free");
    assert_eq!(run.done().rounds, 3);
    assert_eq!(run.record().tool_calls, 2);
    assert_eq!(run.deltas(), "Here they are.");
}

#[actix::test]
async fn tool_calls_of_a_tools_free_request_are_not_executed() {
    let mut capped = settings();
    capped.max_rounds = 1;
    let list = || calls("", vec![tool_call("c", "list_documents", "{}")]);
    let run = run_turn(
        "List everything",
        capped,
        relevant(),
        vec![
            embedded(),
            list(),
            calls(
                "Done listing.",
                vec![tool_call("d", "list_documents", "{}")],
            ),
        ],
    )
    .await;
    assert_eq!(run.names(), vec!["tool", "tool", "delta", "done"]);
    assert_eq!(run.deltas(), "Done listing.");
    assert_eq!(run.record().tool_calls, 1);
}

#[actix::test]
async fn kill_switch_sends_one_request_with_context_and_no_tools() {
    let mut disabled = settings();
    disabled.agent_enabled = false;
    let run = run_turn(
        "How do refunds work?",
        disabled,
        relevant(),
        vec![
            embedded(),
            calls(
                "From the context: 14 days.",
                vec![tool_call("c", "list_documents", "{}")],
            ),
        ],
    )
    .await;
    let chats = run.chats();
    assert_eq!(chats.len(), 1);
    assert!(chats[0].tools.is_none());
    let system = chats[0].messages[0].content.as_deref().unwrap();
    assert!(system.contains("Text of chunk 11."));
    assert!(!system.contains("search_documents"));
    assert_eq!(
        run.names(),
        vec!["delta", "done"],
        "tool calls are not executed"
    );
    assert_eq!(run.done().path, TurnPath::Grounded);
    assert_eq!(run.done().rounds, 1);
}

#[actix::test]
async fn tool_errors_go_back_to_the_model() {
    let run = run_turn(
        "Read something",
        settings(),
        relevant(),
        vec![
            embedded(),
            calls(
                "",
                vec![
                    tool_call("a", "web_search", r#"{"q":"x"}"#),
                    tool_call("b", "read_document", r#"{"document_id": 99}"#),
                    tool_call("c", "read_document", r#"{"document_id": "#),
                    tool_call("d", "read_document", r#"{"document_id": 1}"#),
                ],
            ),
            reply(&["Answer."]),
        ],
    )
    .await;
    let oks: Vec<bool> = run
        .frames
        .iter()
        .filter_map(|f| match f {
            Frame::ToolEnd { ok, .. } => Some(*ok),
            _ => None,
        })
        .collect();
    assert_eq!(oks, vec![false, false, false, true]);
    let second = &run.chats()[1].messages;
    let results: Vec<Value> = second
        .iter()
        .filter(|m| m.role == Role::Tool)
        .map(|m| serde_json::from_str(m.content.as_deref().unwrap()).unwrap())
        .collect();
    assert!(
        results[0]["error"]
            .as_str()
            .unwrap()
            .contains("unknown tool `web_search`")
    );
    assert!(results[1]["error"].as_str().unwrap().contains("99"));
    assert!(
        results[2]["error"]
            .as_str()
            .unwrap()
            .contains("not valid JSON")
    );
    assert_eq!(results[3]["text"], "The whole first document.");
    assert_eq!(results[3]["truncated"], false);
    assert_eq!(run.record().tool_calls, 4);
    assert_eq!(run.done().rounds, 2);
}

#[actix::test]
async fn reasoning_goes_out_as_thinking_and_is_not_visible_content() {
    let mut script = vec![embedded()];
    let mut answer = vec![LlmEvent::Reasoning("Let me think.".into())];
    answer.extend(reply(&["Answer."]));
    script.push(answer);
    let run = run_turn("Q?", settings(), empty(), script).await;
    assert_eq!(run.names(), vec!["thinking", "delta", "done"]);
    assert_eq!(
        run.frames[0],
        Frame::Thinking {
            text: "Let me think.".into()
        }
    );
    assert_eq!(run.record().answer, "Answer.");
}

#[actix::test]
async fn reasoning_only_reply_is_an_empty_answer_without_recovery() {
    let mut answer = vec![LlmEvent::Reasoning("Hmm.".into())];
    answer.extend(reply(&[]));
    let run = run_turn("Q?", settings(), empty(), vec![embedded(), answer]).await;
    assert_eq!(run.names(), vec!["thinking", "done"]);
    assert_eq!(run.chats().len(), 1);
    assert!(!run.done().recovered);
}

#[actix::test]
async fn clean_turns_never_carry_the_correction() {
    let run = run_turn(
        "How do refunds work?",
        settings(),
        relevant(),
        vec![
            embedded(),
            calls("", vec![tool_call("c", "list_documents", "")]),
            reply(&["Fine."]),
        ],
    )
    .await;
    for chat in run.chats() {
        for message in &chat.messages {
            assert!(
                !message
                    .content
                    .as_deref()
                    .unwrap_or("")
                    .contains(CORRECTION_INSTRUCTION)
            );
        }
    }
}

/// The turn's slot goes to the LogActor with its record and is free only once the log
/// has it: a row still on its way counts among the turns in flight.
#[actix::test]
async fn the_slot_travels_with_the_record_to_the_log() {
    let mut started = start_turn(TurnSetup {
        question: "What is the capital of France?",
        knowledge: empty(),
        script: vec![embedded(), reply(&["Paris."])],
        ..TurnSetup::default()
    });
    assert_eq!(
        started.slots.available_permits(),
        0,
        "held while the turn runs"
    );
    while started.frames.recv().await.is_some() {}
    assert_eq!(started.records().await.len(), 1);
    assert_eq!(*started.carried_slot.lock().unwrap(), [true]);
    assert_eq!(
        started.slots.available_permits(),
        1,
        "free once the log has it"
    );
}
