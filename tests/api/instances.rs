//! Several instances on one database: a change through one reaches every instance's
//! vector index through PostgreSQL `LISTEN`/`NOTIFY`, and a lost listening connection
//! is followed by a full reload.

use std::time::{Duration, Instant};

use bor::notify::APPLICATION_NAME;
use diesel::sql_types::Text;
use diesel_async::RunQueryDsl;
use serde_json::json;

use crate::documents::insert_one_chunk;
use crate::support::*;

const TOKEN: &str = "t";
/// Generous for a loaded machine; propagation normally takes milliseconds.
const PROPAGATION_LIMIT: Duration = Duration::from_secs(5);

/// Polls `condition` until it holds or `limit` has passed; returns how long it took.
pub(crate) async fn within(
    limit: Duration,
    mut condition: impl FnMut() -> bool,
) -> Option<Duration> {
    let started = Instant::now();
    while started.elapsed() < limit {
        if condition() {
            return Some(started.elapsed());
        }
        actix_web::rt::time::sleep(Duration::from_millis(5)).await;
    }
    condition().then(|| started.elapsed())
}

#[actix_web::test]
async fn a_document_posted_through_one_instance_reaches_the_other() {
    let a = TestApp::spawn_with(&[("BOR_ADMIN_TOKEN", TOKEN)]).await;
    let b = a.spawn_sharing(&[("BOR_ADMIN_TOKEN", TOKEN)]).await;
    let created = a
        .post_document(
            Some(TOKEN),
            &json!({"title": "Tides", "content": "The tides follow the moon twice a day."}),
        )
        .await;
    assert_eq!(created.status, 201, "{:?}", created.json);
    let id = created.json["id"].as_i64().unwrap();

    let took = within(PROPAGATION_LIMIT, || b.indexed_chunks(id) == 1).await;
    assert!(took.is_some(), "instance B's index never got document {id}");
    eprintln!("document reached instance B's index in {took:?}");
    let turn = b.chat("What do the tides follow?").await;
    assert_eq!(turn.last().data["path"], "grounded", "{:?}", turn.frames);
    assert_eq!(turn.last().data["sources"][0]["document_id"], json!(id));

    let deleted = b.delete_document(Some(TOKEN), &id.to_string()).await;
    assert_eq!(deleted.status, 204);
    let took = within(PROPAGATION_LIMIT, || a.indexed_chunks(id) == 0).await;
    assert!(
        took.is_some(),
        "instance A's index kept deleted document {id}"
    );
}

#[actix_web::test]
async fn after_a_lost_listener_connection_the_index_is_reloaded() {
    let app = TestApp::spawn().await;
    let embedding = app
        .mock_embedding("Bees dance to show where flowers are.")
        .await;
    let mut conn = app.pool.get().await.unwrap();
    // Written without notification (triggers off for this session): only a full
    // reload can find it.
    diesel::sql_query("SET session_replication_role = replica")
        .execute(&mut conn)
        .await
        .unwrap();
    let id = insert_one_chunk(
        &mut conn,
        "Bees",
        "Bees dance to show where flowers are.",
        &embedding,
    )
    .await;
    assert_eq!(app.indexed_chunks(id), 0);

    let terminated = diesel::sql_query(
        "SELECT pg_terminate_backend(pid) FROM pg_stat_activity \
         WHERE application_name = $1 AND datname = $2",
    )
    .bind::<Text, _>(APPLICATION_NAME)
    .bind::<Text, _>(app.database().name())
    .execute(&mut conn)
    .await
    .unwrap();
    assert_eq!(terminated, 1, "one listener connection per instance");

    let took = within(Duration::from_secs(15), || app.indexed_chunks(id) == 1).await;
    assert!(
        took.is_some(),
        "the index was not reloaded after reconnecting"
    );
    // And notifications flow again on the new connection.
    let (later, _) = app
        .insert_document("Ants", "Ants follow scent trails.")
        .await;
    assert_eq!(app.indexed_chunks(later), 1);
}

#[actix_web::test]
async fn a_deleted_collection_s_documents_leave_every_instance_s_index() {
    let a = TestApp::spawn_with(&[("BOR_ADMIN_TOKEN", TOKEN)]).await;
    let b = a.spawn_sharing(&[("BOR_ADMIN_TOKEN", TOKEN)]).await;
    let mut conn = a.pool.get().await.unwrap();
    let hr = bor::db::collections::create(&mut conn, "hr", "People")
        .await
        .unwrap()
        .unwrap();
    let mut ids = Vec::new();
    for (title, content) in [
        ("Leave", "Leave is asked for a week ahead."),
        ("Pay", "Pay day is the last Friday."),
    ] {
        let created = a
            .post_document(Some(TOKEN), &json!({"title": title, "content": content}))
            .await;
        assert_eq!(created.status, 201, "{:?}", created.json);
        ids.push(created.json["id"].as_i64().unwrap());
    }
    // The first moves to `hr`: a change of its document row, re-read everywhere.
    diesel::sql_query("UPDATE documents SET collection_id = $1 WHERE id = $2")
        .bind::<diesel::sql_types::BigInt, _>(hr.id)
        .bind::<diesel::sql_types::BigInt, _>(ids[0])
        .execute(&mut conn)
        .await
        .unwrap();
    let everywhere =
        |id: i64, chunks: usize| a.indexed_chunks(id) == chunks && b.indexed_chunks(id) == chunks;
    assert!(
        within(PROPAGATION_LIMIT, || everywhere(ids[0], 1)
            && everywhere(ids[1], 1))
        .await
        .is_some()
    );

    let deleted = bor::db::collections::delete(&mut conn, "hr").await.unwrap();
    assert_eq!(deleted, Some(vec![ids[0]]));
    let took = within(PROPAGATION_LIMIT, || everywhere(ids[0], 0)).await;
    assert!(
        took.is_some(),
        "an instance kept a document of the deleted collection"
    );
    assert!(
        everywhere(ids[1], 1),
        "the default collection's document stays"
    );
}
