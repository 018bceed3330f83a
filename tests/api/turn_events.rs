//! A `/api/chat` turn outlives its response: frames numbered with `id:`, the turn named
//! by `X-Turn-Id`, read again from any frame by `GET /api/turns/{id}/events`, stopped by
//! `POST /api/turns/{id}/stop`, and answered from its row after the replay window.

use std::time::Duration;

use bor_actors::record::TurnStatus;
use eventsource_stream::Eventsource;
use futures_util::StreamExt;
use serde_json::{Value, json};

use crate::support::*;

/// The words of the slow answer, one token each.
const STORY: &str = "once upon a time there was a very long story indeed";

/// A slow answer, so that a client can leave or stop in the middle of it.
fn long_story(token_delay_ms: u64) -> String {
    directed(
        "Tell me a long story",
        json!({"reply": STORY, "token_delay_ms": token_delay_ms}),
    )
}

/// One frame as a reader sees it: its `id:`, event and data.
#[derive(Debug, Clone, PartialEq)]
struct Numbered {
    id: u64,
    event: String,
    data: Value,
}

type Events = std::pin::Pin<Box<dyn futures_util::Stream<Item = Numbered>>>;

/// A streamed response read frame by frame, with its `X-Turn-Id`.
async fn open_stream(request: awc::ClientRequest, body: Option<Value>) -> (String, Events) {
    let sent = match body {
        Some(body) => request.send_body(body.to_string()).await,
        None => request.send().await,
    };
    let response = sent.unwrap_or_else(|e| panic!("request failed: {e}"));
    assert_eq!(response.status().as_u16(), 200);
    let turn_id = turn_id_of(response.headers());
    let events = response.eventsource().map(|event| {
        let event = event.unwrap_or_else(|e| panic!("a well-formed stream: {e}"));
        Numbered {
            id: event
                .id
                .parse()
                .unwrap_or_else(|_| panic!("id {:?}", event.id)),
            event: event.event,
            data: serde_json::from_str(&event.data).unwrap_or_else(|e| panic!("JSON: {e}")),
        }
    });
    (turn_id, Box::pin(events))
}

async fn ask(app: &TestApp, question: &str) -> (String, Events) {
    open_stream(app.chat_request(), Some(json!({ "message": question }))).await
}

/// `GET /api/turns/{turn_id}/events` with extra headers and query.
async fn follow(app: &TestApp, turn_id: &str, query: &str, headers: &[(&str, &str)]) -> Events {
    let mut request =
        TestApp::client().get(format!("{}/api/turns/{turn_id}/events{query}", app.address));
    for &header in headers {
        request = request.insert_header(header);
    }
    if let Some(key) = app.key() {
        request = request.bearer_auth(key);
    }
    open_stream(request, None).await.1
}

async fn take(events: &mut Events, n: usize) -> Vec<Numbered> {
    let mut taken = Vec::new();
    while taken.len() < n {
        match tokio::time::timeout(STREAM_TIMEOUT, events.next()).await {
            Ok(Some(frame)) => taken.push(frame),
            Ok(None) => break,
            Err(_) => panic!("no frame in time"),
        }
    }
    taken
}

async fn rest(events: &mut Events) -> Vec<Numbered> {
    take(events, usize::MAX).await
}

fn text(frames: &[Numbered]) -> String {
    frames
        .iter()
        .filter(|f| f.event == "delta")
        .filter_map(|f| f.data["text"].as_str())
        .collect()
}

fn assert_ids_increase_from(frames: &[Numbered], after: u64) {
    let mut last = after;
    for frame in frames {
        assert!(frame.id > last, "{frames:?}");
        last = frame.id;
    }
}

#[actix_web::test]
async fn frames_are_numbered_from_one_and_the_turn_is_named() {
    let app = TestApp::spawn().await;
    let (turn_id, mut events) = ask(&app, "What is bor?").await;
    let frames = rest(&mut events).await;
    let ids: Vec<u64> = frames.iter().map(|f| f.id).collect();
    assert_eq!(ids, (1..=frames.len() as u64).collect::<Vec<_>>());
    let done = frames.last().unwrap();
    assert_eq!(done.event, "done");
    assert_eq!(done.data["turn_id"], turn_id.as_str());
    assert!(done.data.get("stopped").is_none());
}

#[actix_web::test]
async fn a_client_that_leaves_does_not_stop_the_turn() {
    let app = TestApp::spawn().await;
    let (turn_id, mut events) = ask(&app, &long_story(50)).await;
    let first = take(&mut events, 1).await;
    assert_eq!(first[0].event, "delta");
    drop(events);

    let rows = app.wait_for_rows(1).await;
    assert_eq!(rows.len(), 1);
    assert_eq!(rows[0].turn_id.to_string(), turn_id);
    assert_eq!(rows[0].status, TurnStatus::Done);
    assert_eq!(rows[0].answer, STORY);
    let line = single_turn_log_line(&turn_id).await;
    assert!(line.contains("outcome=done"), "{line}");
    assert_eq!(
        app.mock.client_disconnects(),
        0,
        "the upstream request ran to its end"
    );
}

#[actix_web::test]
async fn a_reader_that_comes_back_gets_the_frames_after_its_last_once_and_in_order() {
    let app = TestApp::spawn().await;
    let (turn_id, mut events) = ask(&app, &long_story(100)).await;
    let before = take(&mut events, 2).await;
    drop(events);
    let last_read = before[1].id.to_string();

    // By header, as an EventSource reconnects; mid-answer, then live to the end.
    let mut again = follow(&app, &turn_id, "", &[("Last-Event-ID", &last_read)]).await;
    let after = rest(&mut again).await;
    assert_ids_increase_from(&after, before[1].id);
    assert_eq!(after.last().unwrap().event, "done");
    assert_eq!(format!("{}{}", text(&before), text(&after)), STORY);

    // By query, from any frame: the text after it, exactly once.
    let mut from_first = follow(&app, &turn_id, "?after=1", &[]).await;
    let frames = rest(&mut from_first).await;
    assert_eq!(format!("{}{}", text(&before[..1]), text(&frames)), STORY);
    // From the start, the whole turn.
    let mut whole = follow(&app, &turn_id, "", &[]).await;
    let frames = rest(&mut whole).await;
    assert_eq!(text(&frames), STORY);
    assert_eq!(frames.last().unwrap().data["turn_id"], turn_id.as_str());
    // After its terminal frame there is nothing more: 204, so an EventSource stops.
    let terminal = frames.last().unwrap().id.to_string();
    let path = format!("/api/turns/{turn_id}/events");
    let read_out = app
        .send("get", &path, &[("Last-Event-ID", &terminal)])
        .await;
    assert_eq!(read_out.status, 204);
    assert!(read_out.body.is_empty());
}

#[actix_web::test]
async fn the_owner_stops_a_turn_and_every_reader_gets_its_end() {
    let app = TestApp::spawn().await;
    let (turn_id, mut events) = ask(&app, &long_story(300)).await;
    let first = take(&mut events, 1).await;
    let mut second_reader = follow(&app, &turn_id, "", &[]).await;

    let stopped = app
        .send("post", &format!("/api/turns/{turn_id}/stop"), &[])
        .await;
    assert_eq!(stopped.status, 204);
    let rest_of_first = rest(&mut events).await;
    let end = rest_of_first.last().unwrap();
    assert_eq!(end.event, "done");
    assert_eq!(end.data["stopped"], true);
    let of_second = rest(&mut second_reader).await;
    assert_eq!(of_second.last().unwrap(), end);

    let rows = app.wait_for_rows(1).await;
    assert_eq!(rows[0].status, TurnStatus::Stopped);
    let shown = format!("{}{}", text(&first), text(&rest_of_first));
    assert_eq!(rows[0].answer, shown);
    assert!(
        STORY.starts_with(&shown) && shown.len() < STORY.len(),
        "{shown}"
    );
    assert!(
        app.mock
            .wait_for_client_disconnects_async(1, Duration::from_secs(10))
            .await,
        "the upstream request is dropped"
    );
    // Stopping it again changes nothing.
    let again = app
        .send("post", &format!("/api/turns/{turn_id}/stop"), &[])
        .await;
    assert_eq!(again.status, 204);
}

#[actix_web::test]
async fn after_the_replay_window_the_stored_row_answers() {
    let app = TestApp::spawn_with(&[("BOR_TURN_REPLAY_SECONDS", "0")]).await;
    let (turn_id, mut events) = ask(&app, "What is bor?").await;
    let live = rest(&mut events).await;
    app.wait_for_rows(1).await;

    // The live reader read to the end; a moment later the frames are let go and the
    // row answers.
    let mut frames = Vec::new();
    let from_row = eventually(async || {
        let mut stored = follow(&app, &turn_id, "?after=3", &[]).await;
        frames = rest(&mut stored).await;
        frames
            .iter()
            .map(|f| (f.id, f.event.clone()))
            .collect::<Vec<_>>()
            == [(1, "delta".to_owned()), (2, "done".to_owned())]
    })
    .await;
    assert!(from_row, "{frames:?}");
    assert_eq!(frames[0].data["text"], text(&live).as_str());
    let mut live_done = live.last().unwrap().data.clone();
    let mut stored_done = frames[1].data.clone();
    // The row keeps what the `done` frame said, but not whether the answer was cut.
    live_done.as_object_mut().unwrap().remove("truncated");
    stored_done.as_object_mut().unwrap().remove("truncated");
    assert_eq!(stored_done, live_done);
}

#[actix_web::test]
async fn an_absent_turn_and_a_bad_frame_number_are_refused() {
    let app = TestApp::spawn().await;
    let absent = uuid::Uuid::new_v4();
    for path in [
        format!("/api/turns/{absent}/events"),
        "/api/turns/not-a-uuid/events".to_owned(),
    ] {
        let reply = app.send("get", &path, &[]).await;
        assert_eq!(reply.status, 404, "{path}");
        assert_eq!(reply.json()["error"]["code"], "not_found");
    }
    let reply = app
        .send("post", &format!("/api/turns/{absent}/stop"), &[])
        .await;
    assert_eq!(reply.status, 404);

    let (turn_id, mut events) = ask(&app, "What is bor?").await;
    rest(&mut events).await;
    let path = format!("/api/turns/{turn_id}/events");
    let bad_header = app.send("get", &path, &[("Last-Event-ID", "two")]).await;
    assert_eq!(bad_header.status, 400);
    assert_eq!(bad_header.json()["error"]["code"], "invalid_json");
    let bad_query = app.send("get", &format!("{path}?after=-1"), &[]).await;
    assert_eq!(bad_query.status, 400);
}

/// Waits until the instance running `turn_id` is recorded (in the background, after the
/// turn's response started).
async fn wait_until_its_instance_is_recorded(app: &TestApp, turn_id: &str) {
    let turn_id: uuid::Uuid = turn_id.parse().unwrap_or_else(|e| panic!("{e}"));
    let recorded = eventually(async || {
        let mut conn = app.pool.get().await.unwrap_or_else(|e| panic!("{e}"));
        bor::db::turn_owners::instance_of(&mut conn, turn_id)
            .await
            .unwrap_or_else(|e| panic!("{e}"))
            .is_some()
    })
    .await;
    assert!(recorded, "the turn's instance is recorded");
}

#[actix_web::test]
async fn a_reader_on_another_instance_gets_the_same_frames_and_can_stop_the_turn() {
    let a = TestApp::spawn().await;
    let b = a.spawn_sharing(&[]).await;

    // Read on B from where the reader left A, live to the end.
    let (turn_id, mut events) = ask(&a, &long_story(100)).await;
    let before = take(&mut events, 2).await;
    drop(events);
    wait_until_its_instance_is_recorded(&a, &turn_id).await;
    let last_read = before[1].id.to_string();
    let mut on_b = follow(&b, &turn_id, "", &[("Last-Event-ID", &last_read)]).await;
    let after = rest(&mut on_b).await;
    assert_ids_increase_from(&after, before[1].id);
    assert_eq!(after.last().unwrap().event, "done");
    assert_eq!(format!("{}{}", text(&before), text(&after)), STORY);
    // Ended, it still replays whole through B.
    let mut whole = follow(&b, &turn_id, "?after=0", &[]).await;
    assert_eq!(text(&rest(&mut whole).await), STORY);

    // Stopped through B.
    let (turn_id, mut events) = ask(&a, &long_story(300)).await;
    take(&mut events, 1).await;
    wait_until_its_instance_is_recorded(&a, &turn_id).await;
    let stopped = b
        .send("post", &format!("/api/turns/{turn_id}/stop"), &[])
        .await;
    assert_eq!(stopped.status, 204);
    let end = rest(&mut events).await;
    assert_eq!(end.last().unwrap().data["stopped"], true);

    // A turn no instance knows is absent on both.
    let absent = uuid::Uuid::new_v4();
    for app in [&a, &b] {
        let reply = app
            .send("get", &format!("/api/turns/{absent}/events"), &[])
            .await;
        assert_eq!(reply.status, 404);
    }
}
