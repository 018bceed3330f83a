//! Clients that leave in the middle of a stream, and a client that stops reading.

use std::time::Duration;

use bor_actors::record::TurnStatus;
use bor_actors::turn::STALLED_CLIENT_TIMEOUT;
use eventsource_stream::Eventsource;
use futures_util::StreamExt;
use futures_util::future::join_all;
use serde_json::json;
use tokio::io::AsyncWriteExt;

use crate::support::directed;
use crate::{assert_nothing_left, scale};

#[actix_web::test]
async fn clients_that_leave_mid_stream_free_everything() {
    let clients = 200 * scale();
    let app = crate::drill_app(&[("BOR_MAX_CONCURRENT_TURNS", &(clients + 10).to_string())]).await;
    let question = directed(
        "Tell me a long story",
        json!({"reply": "once upon a time there was a story that went on and on", "token_delay_ms": 100}),
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
            let mut events = response.eventsource();
            let first = events.next().await.unwrap().unwrap();
            assert_eq!(first.event, "delta", "{}", first.data);
            // Dropping the stream closes the connection.
        }
    });
    join_all(leave_after_first_delta).await;

    assert!(
        app.mock
            .wait_for_client_disconnects_async(clients, Duration::from_secs(30))
            .await,
        "every upstream request was dropped: {} of {clients}",
        app.mock.client_disconnects()
    );
    assert_nothing_left(&app, &app.mock).await;
    let rows = app.wait_for_rows(clients).await;
    assert_eq!(rows.len(), clients);
    assert!(rows.iter().all(|row| row.status == TurnStatus::Stopped));
}

#[actix_web::test]
async fn a_client_that_never_reads_cannot_make_the_turn_buffer_the_whole_answer() {
    // The answer bound is set past the answer: the client's stall must stop the turn.
    let app = crate::drill_app(&[("BOR_MAX_ANSWER_CHARS", "50000000")]).await;
    // An answer of 20 MiB in pieces of 1 KiB: more than the socket buffers hold (up to
    // 4 MiB each way), in few enough frames that even a slow machine fills them well
    // within the stall timeout. Once they are full, the turn's backlog holds what waits,
    // the LLM stream is no longer read (the relay window), and after the stall timeout
    // the turn stops.
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
    // The stall timeout, and room for filling the buffers on a loaded machine.
    let limit = STALLED_CLIENT_TIMEOUT + Duration::from_secs(120);
    let stopped =
        crate::support::eventually_within(limit, async || app.query_log().await.len() == 1).await;
    assert!(
        stopped,
        "the turn was stopped while its client read nothing"
    );
    let row = &app.query_log().await[0];
    assert_eq!(row.status, TurnStatus::Stopped);
    assert!(
        row.answer.len() < PIECE_BYTES * PIECES,
        "stopped before the whole answer was relayed ({} bytes)",
        row.answer.len()
    );
    assert!(
        app.mock
            .wait_for_client_disconnects_async(1, Duration::from_secs(10))
            .await,
        "the upstream request was dropped"
    );
    assert_nothing_left(&app, &app.mock).await;
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
