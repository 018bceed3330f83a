//! A healthy database that is slower than the turns: `query_log` held locked by another
//! session (as a busy or paused server, a long `VACUUM FULL` or a backup's lock would),
//! while clients ask at full speed. Turns past the queue's mark are refused before they
//! start (503 `busy`); every turn answered `done` has its row, none is dropped.

use std::time::{Duration, Instant};

use diesel_async::{AsyncPgConnection, SimpleAsyncConnection};

use crate::support::TestApp;
use crate::support::load::{Burst, turns_at_full_speed};
use crate::{assert_nothing_left, drill_app, scale};

/// Rows waiting past which turns are refused: small, so that a drill reaches it.
const MARK: &str = "100";
const CLIENTS: usize = 16;

/// Holds `query_log` locked against writes (reads go on) until `unlock`.
async fn lock_query_log(app: &TestApp) -> AsyncPgConnection {
    let mut conn = app.database().connect().await;
    conn.batch_execute("BEGIN; LOCK TABLE query_log IN EXCLUSIVE MODE")
        .await
        .unwrap_or_else(|error| panic!("query_log is locked: {error}"));
    conn
}

async fn unlock(mut conn: AsyncPgConnection) {
    conn.batch_execute("COMMIT")
        .await
        .unwrap_or_else(|error| panic!("query_log is unlocked: {error}"));
}

/// Every turn answered has exactly its row once the queue has drained, and none was
/// dropped.
async fn assert_every_answered_turn_kept(app: &TestApp, burst: &Burst) {
    let drained = crate::support::eventually_within(Duration::from_secs(60), async || {
        app.log_stats().await.queued == 0
    })
    .await;
    assert!(drained, "the queue drained: {:?}", app.log_stats().await);
    let rows = app.query_log().await;
    let kept: std::collections::HashSet<String> =
        rows.iter().map(|row| row.turn_id.to_string()).collect();
    let lost = burst.done.difference(&kept).count();
    assert_eq!(lost, 0, "answered and lost, of {}", burst.done.len());
    assert_eq!(
        rows.len(),
        burst.done.len(),
        "a row for each answered turn, once"
    );
    assert_eq!(app.log_stats().await.dropped, 0);
    assert_nothing_left(app, &app.mock).await;
}

#[actix_web::test]
async fn a_database_slower_than_the_turns_refuses_turns_and_keeps_every_row() {
    let app = drill_app(&[("BOR_LOG_QUEUE_ROWS", MARK)]).await;
    let until = Instant::now() + Duration::from_secs(15 * scale() as u64);
    // The writer gets the table a fifth of the time: far slower than the turns.
    let slow = async {
        while Instant::now() < until {
            let lock = lock_query_log(&app).await;
            actix_web::rt::time::sleep(Duration::from_millis(400)).await;
            unlock(lock).await;
            actix_web::rt::time::sleep(Duration::from_millis(100)).await;
        }
    };
    let load = turns_at_full_speed(|| app.chat_request(), "Anyone home?", CLIENTS, until);
    let ((), burst) = futures_util::join!(slow, load);
    assert!(burst.refused > 0, "the mark was reached: {burst:?}");
    assert!(
        burst.done.len() > 100,
        "turns went on: {}",
        burst.done.len()
    );
    assert_every_answered_turn_kept(&app, &burst).await;
}

#[actix_web::test]
async fn a_database_paused_for_ten_seconds_refuses_turns_and_keeps_every_row() {
    let app = drill_app(&[("BOR_LOG_QUEUE_ROWS", MARK)]).await;
    let until = Instant::now() + Duration::from_secs(16);
    let pause = async {
        actix_web::rt::time::sleep(Duration::from_secs(3)).await;
        let lock = lock_query_log(&app).await;
        actix_web::rt::time::sleep(Duration::from_secs(10)).await;
        let waiting = app.log_stats().await.queued;
        unlock(lock).await;
        waiting
    };
    let load = turns_at_full_speed(|| app.chat_request(), "Anyone home?", CLIENTS, until);
    let (waiting_at_the_end_of_the_pause, burst) = futures_util::join!(pause, load);
    let mark: usize = MARK.parse().expect("a number");
    assert!(
        (mark..=mark + 256).contains(&waiting_at_the_end_of_the_pause),
        "the queue stopped at the mark, with room for the turns in flight: {waiting_at_the_end_of_the_pause}"
    );
    assert!(burst.refused > 0, "turns were refused: {burst:?}");
    assert_every_answered_turn_kept(&app, &burst).await;
}
