//! The LLM server killed in the middle of many streaming turns, then restarted on the
//! same address.

use std::time::Duration;

use bor_mock_llm::MockLlm;
use eventsource_stream::Eventsource;
use futures_util::StreamExt;
use futures_util::future::join;
use serde_json::json;

use crate::support::{ChatResponse, directed};
use crate::{assert_nothing_left, scale};

const ANSWER: &str = "one two three four five six seven eight nine ten eleven twelve \
                      thirteen fourteen fifteen sixteen seventeen eighteen nineteen twenty";

#[actix_web::test]
async fn every_turn_ends_rightly_when_the_llm_server_dies_and_comes_back() {
    let turns = 100 * scale();
    let mock = MockLlm::start().unwrap();
    let addr = mock.addr();
    let app = crate::drill_app(&[
        ("BOR_LLM_BASE_URL", &mock.base_url()),
        ("BOR_LLM_RETRIES", "10"),
        ("BOR_LLM_RETRY_DELAY", "0.5"),
        ("BOR_MAX_CONCURRENT_TURNS", &(turns + 10).to_string()),
    ])
    .await;
    let question = directed(
        "Count for me",
        json!({"reply": ANSWER, "token_delay_ms": 40}),
    );
    // A long answer whose client reads it as it comes: once its first delta has arrived,
    // a kill is certain to cut a stream in the middle, however slow the machine.
    let long_question = directed(
        "Count for a long time",
        json!({"reply": ANSWER, "repeat": 20, "token_delay_ms": 40}),
    );
    let probe = app
        .chat_request()
        .send_body(json!({ "message": long_question }).to_string())
        .await
        .unwrap();
    let mut probe_events = probe.eventsource();
    let all_turns = futures_util::future::join_all((0..turns).map(|_| app.chat(&question)));
    let outage = async {
        let first = probe_events.next().await.unwrap().unwrap();
        assert_eq!(first.event, "delta", "{}", first.data);
        // Kill the server once half the turns are streaming, the rest still on their way.
        let half_streaming =
            crate::support::eventually_within(Duration::from_secs(20), async || {
                mock.chat_requests().len() > turns / 2
            })
            .await;
        assert!(half_streaming, "the turns reached the LLM server");
        drop(mock);
        actix_web::rt::time::sleep(Duration::from_secs(1)).await;
        MockLlm::builder().bind(addr).start().unwrap()
    };
    let (responses, restarted) = join(all_turns, outage).await;
    let mut probe_last = None;
    while let Some(event) = probe_events.next().await {
        probe_last = Some(event.unwrap());
    }
    let probe_last = probe_last.expect("the probe's stream ends with a frame");
    assert_eq!(probe_last.event, "error", "{}", probe_last.data);
    assert!(
        probe_last.data.contains("llm_interrupted"),
        "the kill cut the probe's stream in the middle: {}",
        probe_last.data
    );

    let mut interrupted = 0;
    let mut recovered = 0;
    let mut done = 0;
    for (n, response) in responses.iter().enumerate() {
        response.assert_one_terminal_frame();
        let last = response.last();
        let streamed = response.events().contains(&"delta");
        match last.event.as_str() {
            "done" => {
                done += 1;
                assert_eq!(
                    response.deltas(),
                    ANSWER,
                    "turn {n}: a done turn has its whole answer"
                );
                if response.events().contains(&"retry") {
                    recovered += 1;
                    assert_retries_before_output(response);
                }
            }
            "error" if streamed => {
                interrupted += 1;
                assert_eq!(last.data["code"], "llm_interrupted", "turn {n}");
                assert!(
                    ANSWER.starts_with(&response.deltas()),
                    "turn {n}: no token twice"
                );
            }
            _ => panic!("turn {n} failed before any output: {:?}", response.frames),
        }
    }
    assert!(
        recovered > 0,
        "turns waiting for the server were retried and finished"
    );
    assert_eq!(done + interrupted, turns);
    assert_nothing_left(&app, &restarted).await;
    let rows = app.wait_for_rows(done).await;
    assert_eq!(rows.len(), done, "one row per done turn, none for errors");
}

fn assert_retries_before_output(response: &ChatResponse) {
    let events = response.events();
    let first_delta = events
        .iter()
        .position(|e| *e == "delta")
        .unwrap_or(events.len());
    assert!(
        events[first_delta..].iter().all(|e| *e != "retry"),
        "retries come before any output: {events:?}"
    );
}
