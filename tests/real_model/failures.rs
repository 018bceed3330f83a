//! A model server that dies mid-answer, and a client that leaves mid-answer, with a
//! server instance of the test's own.

use std::time::{Duration, Instant};

use bor_actors::record::TurnStatus;
use serde_json::json;

use crate::support::*;

#[actix_web::test]
async fn a_server_killed_mid_stream_ends_the_turn_with_llm_interrupted() {
    let mut server = ModelServer::start();
    let app = RealModelApp::spawn(&server.base_url(), &[("BOR_LLM_RETRIES", "2")]).await;

    let mut frames = app.open_chat(LONG_QUESTION).await;
    let first = next_frame(&mut frames).await.expect("a first frame");
    assert_eq!(first.event, "delta", "{first:?}");
    server.kill();
    let rest = rest_of(frames).await;
    let (last, before) = rest.split_last().expect("a terminal frame after the kill");
    assert_eq!(last.event, "error", "{rest:?}");
    assert_eq!(last.data["code"], "llm_interrupted");
    assert_eq!(
        last.data["detail"],
        "The language model dropped the connection — please try again."
    );
    assert!(
        before.iter().all(|f| f.event == "delta"),
        "never retried once output flowed: {rest:?}"
    );
    assert!(app.query_log().await.is_empty(), "no row for an error");

    // The server is gone: the next turn's requests are refused, retried, then given up.
    let turn = app.chat("Hello?").await;
    assert_eq!(turn.events(), vec!["retry", "retry", "error"]);
    assert_eq!(turn.frames[0].data, json!({"attempt": 1, "max": 2}));
    assert_eq!(turn.last().data["code"], "llm_unavailable");
}

#[actix_web::test]
async fn a_turn_stopped_mid_stream_frees_the_model_server() {
    let server = ModelServer::start();
    let app = RealModelApp::spawn(&server.base_url(), &[]).await;

    let (turn_id, mut frames) = app.open_turn(json!({ "message": LONG_QUESTION })).await;
    let first = next_frame(&mut frames).await.expect("a first frame");
    assert_eq!(first.event, "delta", "{first:?}");
    drop(frames);
    // Leaving the stream does not stop an `/api/chat` turn; Stop does.
    assert_eq!(app.stop_turn(&turn_id).await, 204);

    // bor drops the upstream request; the server notices at its next token and stops
    // generating.
    let waited = Instant::now();
    while !server.log().contains("Disconnected from client") {
        assert!(
            waited.elapsed() < Duration::from_secs(60),
            "the server saw no disconnect: {}",
            server.log()
        );
        actix_web::rt::time::sleep(Duration::from_millis(100)).await;
    }
    let rows = app.wait_for_rows(1).await;
    assert_eq!(rows.len(), 1);
    assert_eq!(rows[0].status, TurnStatus::Stopped);
    assert!(!rows[0].answer.is_empty(), "the partial answer is kept");

    // Its one slot is free again: a short request is served.
    let models = llm_client(&server.base_url()).list_models().await.unwrap();
    assert!(models.contains(&MODEL.to_owned()), "{models:?}");
    let turn = app.chat("Say hello.").await;
    assert_eq!(turn.last().event, "done", "{:?}", turn.frames);
}
