//! Every attempt of an LLM request is measured, by endpoint and status.

use std::time::Duration;

use bor_actors::llm::LlmCommand;
use bor_actors::metrics::metrics;
use serde_json::json;

use super::cancellation::wait_for_requests;
use super::*;

/// The count of attempts with these labels so far (the registry is process-wide, so
/// tests compare before and after).
fn attempts(endpoint: &str, status: &str) -> f64 {
    let series = format!(
        "bor_llm_request_duration_seconds_count{{endpoint=\"{endpoint}\",status=\"{status}\"}} "
    );
    metrics()
        .encode()
        .expect("the metrics encode")
        .lines()
        .find_map(|line| line.strip_prefix(&series)?.parse().ok())
        .unwrap_or(0.0)
}

#[actix::test]
async fn failed_and_successful_attempts_are_observed() {
    let mock = mock();
    let (failed, succeeded) = (attempts("chat", "503"), attempts("chat", "200"));
    let events = run(
        settings(mock.base_url()),
        chat(json!({"status": 503, "times": 2, "reply": "Fine now."})),
    )
    .await;
    assert_eq!(retries(&events).len(), 2);
    assert!(attempts("chat", "503") >= failed + 2.0);
    assert!(attempts("chat", "200") >= succeeded + 1.0);

    let models = attempts("models", "200");
    run(settings(mock.base_url()), LlmCommand::ListModels).await;
    assert!(attempts("models", "200") >= models + 1.0);
}

#[actix::test]
async fn refused_and_cancelled_attempts_are_observed() {
    let port = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        listener.local_addr().unwrap().port()
    };
    let mut refused = settings(format!("http://127.0.0.1:{port}/v1"));
    refused.retries = 0;
    let before = attempts("embeddings", "connect_error");
    run(refused, embed_documents(vec!["x".into()])).await;
    assert!(attempts("embeddings", "connect_error") >= before + 1.0);

    let mock = mock();
    let cancelled = attempts("chat", "cancelled");
    let harness = Harness::start(settings(mock.base_url()));
    harness.llm.do_send(chat(json!({"hang": true})));
    wait_for_requests(&mock, 1).await;
    harness.llm.do_send(LlmCommand::Cancel);
    assert!(
        mock.wait_for_client_disconnects_async(1, Duration::from_secs(2))
            .await
    );
    assert!(attempts("chat", "cancelled") >= cancelled + 1.0);
}
