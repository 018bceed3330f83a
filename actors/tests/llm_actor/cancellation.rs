//! Stopping the request in flight and pending timers.

use std::time::Duration;

use bor_actors::llm::{LlmCommand, LlmEvent};
use serde_json::json;

use super::*;

#[actix::test]
async fn cancel_closes_the_upstream_connection() {
    let mock = mock();
    let harness = Harness::start(settings(mock.base_url()));
    harness.llm.do_send(chat(json!({"hang": true})));
    wait_for_requests(&mock, 1).await;
    harness.llm.do_send(LlmCommand::Cancel);
    assert!(
        mock.wait_for_client_disconnects_async(1, Duration::from_secs(2))
            .await,
        "the mock saw the connection closed"
    );
}

#[actix::test]
async fn a_requester_going_away_stops_the_actor_and_its_stream() {
    let mock = mock();
    let mut harness = Harness::start(settings(mock.base_url()));
    harness.llm.do_send(chat(
        json!({"reply": "slow words keep coming here", "token_delay_ms": 500}),
    ));
    // Wait for the first piece, then let the requester go.
    loop {
        if let Some(LlmEvent::Content(_)) = harness.events.recv().await {
            break;
        }
    }
    let llm = harness.llm.clone();
    harness.collector.do_send(Leave);
    drop(harness);
    assert!(
        mock.wait_for_client_disconnects_async(1, Duration::from_secs(2))
            .await,
        "the upstream request was dropped"
    );
    assert!(wait_for(|| !llm.connected()).await, "the actor stopped");
}

#[actix::test]
async fn stopping_during_a_retry_wait_cancels_the_timer() {
    let mock = mock();
    let mut patient = settings(mock.base_url());
    patient.retry_delay = Duration::from_secs(60);
    let mut harness = Harness::start(patient);
    harness.llm.do_send(chat(json!({"status": 503})));
    assert_eq!(
        harness.events.recv().await,
        Some(LlmEvent::Retrying { attempt: 1, max: 3 })
    );
    let llm = harness.llm.clone();
    harness.collector.do_send(Leave);
    drop(harness);
    assert!(
        wait_for(|| !llm.connected()).await,
        "the actor stopped while waiting"
    );
    assert_eq!(mock.chat_requests().len(), 1, "no further attempt");
}

#[actix::test]
async fn cancel_during_a_retry_wait_prevents_the_next_attempt() {
    let mock = mock();
    let mut short = settings(mock.base_url());
    short.retry_delay = Duration::from_millis(150);
    let mut harness = Harness::start(short);
    harness.llm.do_send(chat(json!({"status": 503})));
    assert!(matches!(
        harness.events.recv().await,
        Some(LlmEvent::Retrying { .. })
    ));
    harness.llm.do_send(LlmCommand::Cancel);
    actix::clock::sleep(Duration::from_millis(450)).await;
    assert_eq!(mock.chat_requests().len(), 1);
    assert!(
        harness.events.try_recv().is_err(),
        "nothing more is reported"
    );
}

pub(super) async fn wait_for_requests(mock: &bor_mock_llm::MockLlm, n: usize) {
    assert!(
        wait_for(|| mock.requests().len() >= n).await,
        "requests arrive"
    );
}

async fn wait_for(condition: impl Fn() -> bool) -> bool {
    for _ in 0..300 {
        if condition() {
            return true;
        }
        actix::clock::sleep(Duration::from_millis(10)).await;
    }
    condition()
}
