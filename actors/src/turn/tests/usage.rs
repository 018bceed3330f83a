//! The tokens a turn took: every chat request of the turn summed, as the server
//! reported them or as bor estimated them (docs/LIMITS.md, "Usage").

use super::*;
use crate::llm::Usage;
use crate::record::TokenUsage;

/// `events` with the server's usage on their `ChatDone`.
fn reporting(mut events: Vec<LlmEvent>, prompt: u64, completion: u64) -> Vec<LlmEvent> {
    for event in &mut events {
        if let LlmEvent::ChatDone(completion_done) = event {
            completion_done.usage = Some(Usage {
                prompt_tokens: prompt,
                completion_tokens: completion,
                total_tokens: prompt + completion,
            });
        }
    }
    events
}

fn characters(request: &ChatRequest) -> usize {
    request
        .messages
        .iter()
        .map(|m| {
            m.content.as_deref().map_or(0, |c| c.chars().count())
                + m.tool_calls
                    .iter()
                    .map(|c| c.function.name.chars().count() + c.function.arguments.chars().count())
                    .sum::<usize>()
        })
        .sum()
}

#[actix::test]
async fn the_usage_of_every_round_is_summed() {
    let run = run_turn(
        "How do refunds work?",
        settings(),
        relevant(),
        vec![
            embedded(),
            reporting(
                calls(
                    "",
                    vec![tool_call(
                        "c1",
                        "search_documents",
                        r#"{"query":"refunds"}"#,
                    )],
                ),
                900,
                12,
            ),
            embedded(),
            reporting(reply(&["Refunds take 14 days."]), 1_400, 9),
        ],
    )
    .await;
    assert_eq!(run.chats().len(), 2);
    assert_eq!(
        run.record().usage,
        TokenUsage {
            prompt_tokens: 2_300,
            completion_tokens: 21,
            estimated: false,
        }
    );
}

#[actix::test]
async fn a_request_the_server_reports_nothing_for_is_estimated_and_marked() {
    let leak = "<tool_call>\n{\"name\": \"search_documents\", \"arguments\": {}}\n</tool_call>";
    let run = run_turn(
        "How do refunds work?",
        settings(),
        relevant(),
        vec![
            embedded(),
            reporting(reply(&[leak]), 500, 30),
            reply(&["Refunds ", "take 14 days."]),
        ],
    )
    .await;
    let chats = run.chats();
    assert_eq!(chats.len(), 2, "the recovery request counts too");
    let estimate = TokenUsage::estimate(characters(chats[1]), "Refunds take 14 days.".len());
    assert_eq!(
        run.record().usage,
        TokenUsage {
            prompt_tokens: 500 + estimate.prompt_tokens,
            completion_tokens: 30 + estimate.completion_tokens,
            estimated: true,
        }
    );
    assert_eq!(estimate.completion_tokens, 6, "21 characters, 4 to a token");
}

#[actix::test]
async fn a_request_that_fails_before_any_reply_counts_nothing() {
    let run = run_turn(
        "How do refunds work?",
        settings(),
        relevant(),
        vec![
            embedded(),
            vec![LlmEvent::Failed(crate::llm::LlmError::Rejected(
                crate::llm::AttemptError::Status {
                    status: 400,
                    body: "no".into(),
                },
            ))],
        ],
    )
    .await;
    assert_eq!(run.record().usage, TokenUsage::default());
}
