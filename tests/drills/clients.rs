//! Clients that leave in the middle of a stream and come back, and a client that stops
//! reading.

use std::time::Duration;

use bor_actors::record::TurnStatus;
use eventsource_stream::Eventsource;
use futures_util::StreamExt;
use futures_util::future::join_all;
use serde_json::json;
use tokio::io::AsyncWriteExt;

use crate::support::directed;
use crate::{assert_nothing_left, scale};

#[actix_web::test]
async fn every_client_leaves_mid_answer_and_each_turn_ends_done_and_resumes_whole() {
    let clients = 200 * scale();
    let app = crate::drill_app(&[("BOR_MAX_CONCURRENT_TURNS", &(clients + 10).to_string())]).await;
    const STORY: &str = "once upon a time there was a story that went on and on";
    let question = directed(
        "Tell me a long story",
        json!({"reply": STORY, "token_delay_ms": 100}),
    );
    let body = json!({ "message": question }).to_string();
    // Clients arrive in waves of 100, a quarter of a second apart, so that even the long
    // drill's 2,000 do not queue their retrievals past the database pool's wait.
    let leave_after_first_delta = (0..clients).map(|n| {
        let body = body.clone();
        let request = app.chat_request();
        async move {
            actix_web::rt::time::sleep(Duration::from_millis(250 * (n / 100) as u64)).await;
            let response = request.send_body(body).await.unwrap();
            let turn_id = crate::support::turn_id_of(response.headers());
            let mut events = response.eventsource();
            let first = events.next().await.unwrap().unwrap();
            assert_eq!(first.event, "delta", "{}", first.data);
            assert_eq!(first.id, "1");
            let text: serde_json::Value = serde_json::from_str(&first.data).unwrap();
            // Dropping the stream closes the connection.
            (
                turn_id,
                text["text"].as_str().unwrap_or_default().to_owned(),
            )
        }
    });
    let left = join_all(leave_after_first_delta).await;

    // Each reader comes back where it left, while its turn runs or after it ended.
    let come_back = left.iter().map(|(turn_id, first_text)| {
        let request = crate::support::TestApp::client()
            .get(format!("{}/api/turns/{turn_id}/events", app.address))
            .bearer_auth(app.key().unwrap_or_default())
            .insert_header(("Last-Event-ID", "1"));
        async move {
            let response = request.send().await.unwrap();
            assert_eq!(response.status(), 200);
            let mut text = first_text.clone();
            let mut last_id = 1;
            let mut events = response.eventsource();
            let mut terminal = None;
            while let Some(event) = events.next().await {
                let event = event.unwrap();
                let id: u64 = event.id.parse().unwrap();
                assert!(id > last_id, "frames in order, none twice");
                last_id = id;
                let data: serde_json::Value = serde_json::from_str(&event.data).unwrap();
                match event.event.as_str() {
                    "delta" => text.push_str(data["text"].as_str().unwrap_or_default()),
                    _ => terminal = Some(event.event),
                }
            }
            assert_eq!(terminal.as_deref(), Some("done"));
            assert_eq!(text, STORY, "no frame lost");
        }
    });
    join_all(come_back).await;

    let rows = app.wait_for_rows(clients).await;
    assert_eq!(rows.len(), clients);
    assert!(
        rows.iter()
            .all(|row| row.status == TurnStatus::Done && row.answer == STORY)
    );
    assert_eq!(
        app.mock.client_disconnects(),
        0,
        "no upstream request was dropped"
    );
    assert_nothing_left(&app, &app.mock).await;
}

#[actix_web::test]
async fn a_client_that_never_reads_neither_holds_the_turn_nor_grows_its_memory() {
    let app = crate::drill_app(&[("BOR_MAX_ANSWER_CHARS", "50000000")]).await;
    // An answer of 20 MiB in pieces of 1 KiB: more than the socket buffers hold (up to
    // 4 MiB each way). The turn writes its frames to the hub, which keeps the answer's
    // text and a few bytes a frame; the client's response reads from the hub only as
    // fast as its socket takes it, so the turn ends `done` while the client reads nothing.
    const PIECE_BYTES: usize = 1024;
    const PIECES: usize = 20 * 1024;
    let piece = "w".repeat(PIECE_BYTES);
    let question = directed("Flood me", json!({"chunks": [piece], "repeat": PIECES}));
    let body = json!({ "message": question }).to_string();
    let socket = tokio::net::TcpSocket::new_v4().unwrap();
    socket.set_recv_buffer_size(4096).unwrap();
    let address = app.address.trim_start_matches("http://").parse().unwrap();
    let mut stream = socket.connect(address).await.unwrap();
    let request = format!(
        "POST /api/chat HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n\
         Authorization: Bearer {}\r\nContent-Length: {}\r\n\r\n{body}",
        app.key().unwrap_or_default(),
        body.len()
    );
    stream.write_all(request.as_bytes()).await.unwrap();
    // The client now reads nothing, and keeps its connection open.
    let limit = Duration::from_secs(120);
    let ended =
        crate::support::eventually_within(limit, async || app.query_log().await.len() == 1).await;
    assert!(ended, "the turn ended while its client read nothing");
    let row = &app.query_log().await[0];
    assert_eq!(row.status, TurnStatus::Done);
    assert_eq!(row.answer.len(), PIECE_BYTES * PIECES, "the whole answer");
    let kept = app
        .state
        .frame_hub
        .send(bor_actors::frame_hub::GetHubStats)
        .await
        .unwrap();
    assert_eq!(kept.turns, 1);
    assert!(
        kept.bytes < PIECE_BYTES * PIECES + PIECES * 4 + 64 * 1024,
        "the hub keeps the answer's text and a few bytes a frame: {kept:?}"
    );
    assert_eq!(
        app.mock.client_disconnects(),
        0,
        "the upstream request ran to its end"
    );
    assert!(
        crate::support::eventually(async || app.turns_in_flight() == 0).await,
        "the turn's slot is free"
    );
    drop(stream);
}

#[actix_web::test]
async fn clients_that_stall_in_their_bodies_are_cut_with_408_and_hold_nothing() {
    use tokio::io::AsyncReadExt;
    let stalled = 100 * scale();
    let app = crate::drill_app(&[("BOR_REQUEST_BODY_TIMEOUT", "1")]).await;
    let port = app.address.rsplit(':').next().unwrap().to_owned();
    let mut connections = Vec::new();
    for _ in 0..stalled {
        let mut stream = tokio::net::TcpStream::connect(format!("127.0.0.1:{port}"))
            .await
            .unwrap();
        // Headers announce 100 bytes; ten arrive, then nothing.
        let head = format!(
            "POST /api/chat HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n\
             Authorization: Bearer {}\r\nContent-Length: 100\r\n\r\n{{\"message\"",
            app.key().unwrap_or_default()
        );
        stream.write_all(head.as_bytes()).await.unwrap();
        connections.push(stream);
    }
    let health = app.get("/api/health", None).await;
    assert_eq!(health.status, 200, "the service answers while bodies stall");

    for mut stream in connections {
        let mut answer = Vec::new();
        let read =
            actix_web::rt::time::timeout(Duration::from_secs(30), stream.read_to_end(&mut answer))
                .await;
        assert!(read.is_ok(), "the connection is closed after the answer");
        let text = String::from_utf8_lossy(&answer);
        assert!(text.starts_with("HTTP/1.1 408"), "{text}");
        assert!(text.contains("body_timeout"), "{text}");
    }
}
