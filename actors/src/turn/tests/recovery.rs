//! The scaffolding guardrail's recovery policy (docs/PROTOCOL.md, "Recovery"), on both
//! paths.

use super::*;
use crate::llm::Role;
use crate::record::{ErrorCode, TurnOutcome};
use crate::turn::CORRECTION_INSTRUCTION;

const LEAK: &str = "<tool_call>\n{\"name\": \"search_documents\", \"arguments\": {\"query\": \"refunds\"}}\n</tool_call>";

fn assert_recovery_request(run: &TurnRun) {
    let chats = run.chats();
    assert_eq!(chats.len(), 2, "exactly two chat requests");
    let (first, second) = (chats[0], chats[1]);
    assert!(second.tools.is_none(), "the recovery request is tools-free");
    assert_eq!(first.messages.len(), second.messages.len());
    let original = first.messages[0].content.as_deref().unwrap();
    assert_eq!(second.messages[0].role, Role::System);
    assert_eq!(
        second.messages[0].content.as_deref().unwrap(),
        format!("{original}\n{CORRECTION_INSTRUCTION}")
    );
    let system_messages = second
        .messages
        .iter()
        .filter(|m| m.role == Role::System)
        .count();
    assert_eq!(
        system_messages, 1,
        "the correction is folded into the one system message"
    );
    assert_eq!(
        first.messages.last(),
        second.messages.last(),
        "last message unchanged"
    );
    assert!(!original.contains(CORRECTION_INSTRUCTION));
}

async fn scaffolding_then(knowledge: FixedKnowledge, second: Vec<LlmEvent>) -> TurnRun {
    run_turn(
        "How do refunds work?",
        settings(),
        knowledge,
        vec![embedded(), reply(&[LEAK]), second],
    )
    .await
}

#[actix::test]
async fn scaffolding_only_grounded_reply_is_recovered_once() {
    let run = scaffolding_then(relevant(), reply(&["Refunds take 14 days."])).await;
    assert_recovery_request(&run);
    assert_eq!(
        run.names(),
        vec!["delta", "done"],
        "no markup reaches the client"
    );
    assert_eq!(run.deltas(), "Refunds take 14 days.");
    let done = run.done();
    assert!(done.recovered);
    assert_eq!(done.rounds, 2);
    assert_eq!(done.scaffold_stripped, LEAK.chars().count() as u64);
    assert_eq!(run.record().outcome, TurnOutcome::Done);
    assert!(run.record().recovered);
}

#[actix::test]
async fn scaffolding_only_deflected_reply_is_recovered_once() {
    let run = scaffolding_then(empty(), reply(&["I found nothing on that."])).await;
    assert_recovery_request(&run);
    assert!(run.done().recovered);
    assert_eq!(run.deltas(), "I found nothing on that.");
}

#[actix::test]
async fn scaffolding_twice_is_a_malformed_reply_without_row() {
    for knowledge in [relevant(), empty()] {
        let run = scaffolding_then(knowledge, reply(&[LEAK])).await;
        assert_recovery_request(&run);
        assert_eq!(run.names(), vec!["error"]);
        assert_eq!(
            run.frames[0],
            Frame::error(run.record().turn_id, None, ErrorCode::MalformedReply)
        );
        let record = run.record();
        assert_eq!(
            record.outcome,
            TurnOutcome::Error(ErrorCode::MalformedReply)
        );
        assert_eq!(record.outcome.row_status(), None, "no query_log row");
        assert_eq!(record.scaffold_stripped, 2 * LEAK.chars().count() as u64);
    }
}

#[actix::test]
async fn an_empty_recovery_reply_is_malformed_too() {
    let run = scaffolding_then(empty(), reply(&["   "])).await;
    assert_eq!(run.names(), vec!["delta", "error"]);
    assert_eq!(
        run.record().outcome,
        TurnOutcome::Error(ErrorCode::MalformedReply)
    );
}

#[actix::test]
async fn scaffolding_with_content_needs_no_recovery() {
    let text = format!("Let me look that up.\n{LEAK}");
    let run = run_turn(
        "How do refunds work?",
        settings(),
        relevant(),
        vec![embedded(), reply(&[&text])],
    )
    .await;
    assert_eq!(run.chats().len(), 1, "one request");
    assert_eq!(run.deltas().trim(), "Let me look that up.");
    let done = run.done();
    assert!(!done.recovered);
    assert_eq!(done.scaffold_stripped, LEAK.chars().count() as u64);
}

#[actix::test]
async fn empty_clean_reply_is_an_empty_answer() {
    let run = run_turn("Q?", settings(), empty(), vec![embedded(), reply(&[])]).await;
    assert_eq!(run.names(), vec!["done"]);
    assert_eq!(run.chats().len(), 1);
    assert_eq!(run.done().scaffold_stripped, 0);
}
