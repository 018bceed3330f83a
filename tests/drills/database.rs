//! PostgreSQL made unreachable while turns run, then brought back: turns keep being
//! answered from the knowledge base in memory, and the LogActor queues their rows
//! until the database returns.

use std::collections::HashSet;
use std::time::Duration;

use futures_util::future::{join, join_all};
use serde_json::json;

use crate::support::{TestApp, directed};
use crate::{assert_nothing_left, scale};

#[actix_web::test]
async fn turns_during_a_database_outage_are_answered_and_their_rows_written_once() {
    let streaming = 20 * scale();
    let slots = (streaming * 2 + 10).to_string();
    let app = TestApp::spawn_with_db_proxy(&crate::with_accounts(&[(
        "BOR_MAX_CONCURRENT_TURNS",
        &slots,
    )]))
    .await
    .asking_with_a_key("driller")
    .await;
    let proxy = app.db_proxy.as_ref().expect("the app's database proxy");
    let slow = directed(
        "Tell me slowly",
        json!({"reply": "a slow answer of eight words in all", "token_delay_ms": 150}),
    );
    let running = join_all((0..streaming).map(|_| app.chat(&slow)));
    let outage = async {
        // Cut the database once every turn has passed retrieval and is streaming.
        let all_streaming =
            crate::support::eventually_within(Duration::from_secs(20), async || {
                app.mock.chat_requests().len() >= streaming
            })
            .await;
        assert!(all_streaming, "the turns reached the LLM");
        proxy.cut();
        // Turns started during the outage retrieve from memory and are answered; their
        // rows wait in the LogActor's queue.
        let during = join_all((0..streaming / 4).map(|_| app.chat("Anyone home?"))).await;
        actix_web::rt::time::sleep(Duration::from_secs(2)).await;
        proxy.restore();
        during
    };
    let (finished, during) = join(running, outage).await;

    let mut done_ids = HashSet::new();
    for response in &finished {
        assert_eq!(response.last().event, "done", "{:?}", response.events());
        done_ids.insert(response.turn_id());
    }
    for response in &during {
        response.assert_one_terminal_frame();
        assert_eq!(
            response.last().event,
            "done",
            "answered during the outage: {:?}",
            response.frames
        );
        done_ids.insert(response.turn_id());
    }
    let after = app.chat("Back again?").await;
    assert_eq!(after.last().event, "done");
    done_ids.insert(after.turn_id());

    let written = crate::support::eventually_within(Duration::from_secs(20), async || {
        app.query_log().await.len() >= done_ids.len()
    })
    .await;
    assert!(
        written,
        "the queued rows reached the table once the database was back"
    );
    actix_web::rt::time::sleep(Duration::from_millis(500)).await;
    let rows = app.query_log().await;
    let row_ids: HashSet<String> = rows.iter().map(|row| row.turn_id.to_string()).collect();
    assert_eq!(rows.len(), done_ids.len(), "no row twice");
    assert_eq!(
        row_ids, done_ids,
        "a row for every done turn, those of the outage included"
    );
    assert_nothing_left(&app, &app.mock).await;
}
