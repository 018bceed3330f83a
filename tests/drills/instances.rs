//! Two instances on one database: readers that reach the instance not running their
//! turn are served through it, and when that instance dies under them they resume on
//! the one that runs the turn, with no frame lost or repeated.

use eventsource_stream::Eventsource;
use futures_util::StreamExt;
use futures_util::future::join_all;
use serde_json::{Value, json};
use tokio::sync::Barrier;

use crate::scale;
use crate::support::{TcpProxy, TestApp, directed, eventually};

const STORY: &str = "once upon a time there was a story that went on and on and on";

/// Reads `/api/turns/{turn_id}/events` at `address` after frame `after` until the
/// stream ends or fails: the text of its deltas, the last id read and the terminal
/// event. With `pause`, after `frames` frames the reader waits at the barrier before
/// it reads on.
async fn read_events(
    address: &str,
    key: &str,
    turn_id: &str,
    after: u64,
    pause: Option<(usize, &Barrier)>,
) -> (String, u64, Option<String>) {
    let response = TestApp::client()
        .get(format!("{address}/api/turns/{turn_id}/events"))
        .bearer_auth(key)
        .insert_header(("Last-Event-ID", after.to_string()))
        .send()
        .await
        .unwrap_or_else(|e| panic!("events request: {e}"));
    assert_eq!(response.status(), 200);
    let mut events = response.eventsource();
    let (mut text, mut last_id, mut terminal, mut read) = (String::new(), after, None, 0);
    loop {
        if let Some((frames, barrier)) = pause
            && read == frames
        {
            barrier.wait().await;
        }
        let Some(Ok(event)) = events.next().await else {
            break;
        };
        let id: u64 = event
            .id
            .parse()
            .unwrap_or_else(|_| panic!("id {:?}", event.id));
        assert!(id > last_id, "frames in order, none twice");
        last_id = id;
        read += 1;
        let data: Value = serde_json::from_str(&event.data).unwrap_or_else(|e| panic!("{e}"));
        match event.event.as_str() {
            "delta" => text.push_str(data["text"].as_str().unwrap_or_default()),
            "done" | "error" => terminal = Some(event.event),
            _ => {}
        }
    }
    (text, last_id, terminal)
}

#[actix_web::test]
async fn when_the_instance_serving_the_reader_dies_the_reader_resumes_on_the_other() {
    let turns = 20 * scale();
    let a = crate::drill_app(&[]).await;
    let b = a.spawn_sharing(&crate::with_accounts(&[])).await;
    let key = a.key().unwrap_or_default().to_owned();
    let b_port: u16 = b
        .address
        .rsplit(':')
        .next()
        .and_then(|port| port.parse().ok())
        .unwrap_or_else(|| panic!("a port in {}", b.address));
    // Readers reach B through a proxy: cutting it is B dying under them.
    let to_b = TcpProxy::start(([127, 0, 0, 1], b_port).into());
    let b_address = format!("http://127.0.0.1:{}", to_b.port());
    let question = directed(
        "Tell me a long story",
        json!({"reply": STORY, "token_delay_ms": 100}),
    );
    let body = json!({ "message": question }).to_string();

    // Every turn runs on A; its first reader leaves after the first frame.
    let started = (0..turns).map(|_| {
        let request = a.chat_request();
        let body = body.clone();
        async move {
            let response = request
                .send_body(body)
                .await
                .unwrap_or_else(|e| panic!("{e}"));
            let turn_id = crate::support::turn_id_of(response.headers());
            let mut events = response.eventsource();
            let first = events.next().await.unwrap_or_else(|| panic!("no frame"));
            let first = first.unwrap_or_else(|e| panic!("{e}"));
            let data: Value = serde_json::from_str(&first.data).unwrap_or_else(|e| panic!("{e}"));
            (
                turn_id,
                data["text"].as_str().unwrap_or_default().to_owned(),
            )
        }
    });
    let started = join_all(started).await;
    let recorded = eventually(async || {
        let mut conn = a.pool.get().await.unwrap_or_else(|e| panic!("{e}"));
        let mut all = true;
        for (turn_id, _) in &started {
            let turn_id = turn_id.parse().unwrap_or_else(|e| panic!("{e}"));
            all &= bor::db::turn_owners::instance_of(&mut conn, turn_id)
                .await
                .unwrap_or_else(|e| panic!("{e}"))
                .is_some();
        }
        all
    })
    .await;
    assert!(recorded, "every turn's instance is recorded");

    // Each reader comes back through B and reads a few frames; then B dies under them
    // and their streams fail.
    let all_reading = Barrier::new(turns + 1);
    let through_b = started.iter().map(|(turn_id, first)| {
        let (b_address, key, all_reading) = (&b_address, &key, &all_reading);
        async move {
            let pause = Some((3, all_reading));
            let (text, last_id, terminal) = read_events(b_address, key, turn_id, 1, pause).await;
            assert_eq!(terminal, None, "B died before the end");
            (turn_id.clone(), format!("{first}{text}"), last_id)
        }
    });
    let cut = async {
        all_reading.wait().await;
        to_b.cut();
    };
    let (through_b, ()) = futures_util::join!(join_all(through_b), cut);

    // Each resumes on A where it was, and gets the rest exactly once.
    let on_a = through_b.iter().map(|(turn_id, so_far, last_id)| {
        let (address, key) = (&a.address, &key);
        async move {
            let (rest, _, terminal) = read_events(address, key, turn_id, *last_id, None).await;
            assert_eq!(terminal.as_deref(), Some("done"));
            assert_eq!(
                format!("{so_far}{rest}"),
                STORY,
                "no frame lost or repeated"
            );
        }
    });
    join_all(on_a).await;
    let rows = a.wait_for_rows(turns).await;
    assert_eq!(rows.len(), turns);
    assert!(
        eventually(async || a.turns_in_flight() == 0).await,
        "every turn ended"
    );
}
