//! The stop sequence in process: no new turns, turns in flight finish within the grace,
//! the rest end `stopped` with their partial answer.

use std::time::Duration;

use bor::health::turns_in_flight;
use bor_actors::record::TurnStatus;
use serde_json::json;

use crate::support::*;

/// Stops the app's turns with `grace` once one turn runs.
async fn stop_once_running(app: &TestApp, grace: Duration) {
    assert!(eventually(async || turns_in_flight(&app.state) == 1).await);
    let state = &app.state;
    state
        .lifecycle
        .stop(&state.turn_slots, state.config.max_concurrent_turns, grace)
        .await;
}

#[actix_web::test]
async fn turns_in_flight_finish_within_the_grace_and_new_ones_are_refused() {
    let app = TestApp::spawn().await;
    let question = directed(
        "Tell me slowly",
        json!({"reply": "one two three four five six", "token_delay_ms": 200}),
    );
    let refused = async {
        stop_once_running(&app, Duration::from_secs(30)).await;
        app.chat("Anyone there?").await
    };
    let during = async {
        assert!(eventually(async || !app.state.lifecycle.is_accepting()).await);
        app.chat("Anyone there?").await
    };
    let (turn, refused_after, refused_during) =
        futures_util::join!(app.chat(&question), refused, during);
    assert_eq!(turn.last().event, "done");
    assert_eq!(turn.deltas(), "one two three four five six");
    for refusal in [refused_after, refused_during] {
        assert_eq!(refusal.status, 503);
        assert_eq!(refusal.error_code(), "unavailable");
        let message = refusal.json.as_ref().unwrap()["error"]["message"]
            .as_str()
            .unwrap()
            .to_owned();
        assert!(message.contains("shutting down"), "{message}");
    }
    let rows = app.wait_for_rows(1).await;
    assert_eq!(rows.len(), 1);
    assert_eq!(rows[0].status, TurnStatus::Done);
}

#[actix_web::test]
async fn turns_still_running_after_the_grace_end_stopped_with_their_partial_answer() {
    let app = TestApp::spawn().await;
    let words: Vec<String> = (1..=40).map(|n| format!("word{n}")).collect();
    let full = words.join(" ");
    let question = directed(
        "Tell me everything",
        json!({"reply": full, "token_delay_ms": 200}),
    );
    let (turn, ()) = futures_util::join!(
        app.chat(&question),
        stop_once_running(&app, Duration::from_millis(500))
    );
    let (last, before) = turn.frames.split_last().expect("frames");
    assert!(
        before.iter().all(|f| f.event == "delta"),
        "{:?}",
        turn.events()
    );
    assert_eq!(
        last.event,
        "error",
        "one terminal frame: {:?}",
        turn.events()
    );
    assert_eq!(last.data["code"], "internal");
    assert_eq!(
        last.data["detail"],
        "Something went wrong on our side — please try again."
    );
    assert_eq!(turns_in_flight(&app.state), 0);
    let rows = app.wait_for_rows(1).await;
    assert_eq!(rows.len(), 1);
    assert_eq!(rows[0].status, TurnStatus::Stopped);
    assert!(!rows[0].answer.is_empty());
    assert!(full.starts_with(&rows[0].answer), "{}", rows[0].answer);
    assert!(rows[0].answer.len() < full.len());
    assert_eq!(rows[0].answer, turn.deltas());
}

#[actix_web::test]
async fn a_turn_whose_reader_left_is_ended_by_the_stop_and_its_replay_says_so() {
    let app = TestApp::spawn().await;
    let question = directed(
        "Tell me everything",
        json!({"reply": "one two three four five six seven eight nine ten", "token_delay_ms": 300}),
    );
    let response = app
        .chat_request()
        .send_body(json!({ "message": question }).to_string())
        .await
        .unwrap_or_else(|e| panic!("chat request: {e}"));
    let turn_id = turn_id_of(response.headers());
    // The client leaves at once; the turn goes on until the stop ends it.
    drop(response);
    stop_once_running(&app, Duration::from_millis(500)).await;
    assert_eq!(turns_in_flight(&app.state), 0);
    let rows = app.wait_for_rows(1).await;
    assert_eq!(rows[0].status, TurnStatus::Stopped);

    let replay = app
        .send("get", &format!("/api/turns/{turn_id}/events"), &[])
        .await;
    assert_eq!(replay.status, 200);
    let text = replay.text();
    let last_event = text
        .lines()
        .filter_map(|line| line.strip_prefix("event: "))
        .next_back();
    assert_eq!(last_event, Some("error"), "{text}");
    assert!(text.contains(r#""code":"internal""#), "{text}");
}
