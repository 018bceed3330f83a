//! What a turn took, as its row keeps it (docs/LIMITS.md, "Usage").

use bor::db::schema::documents;
use diesel::prelude::*;
use diesel_async::RunQueryDsl;
use serde_json::json;

use crate::support::*;

#[actix_web::test]
async fn a_turn_keeps_the_servers_token_counts_its_key_and_its_collections() {
    let app = TestApp::spawn_with_accounts(&[])
        .await
        .asking_with_a_key("ann")
        .await;
    let (document_id, _) = app
        .insert_document("Refunds", "Refunds take 14 days.")
        .await;
    let reply = app.chat("Refunds take 14 days.").await;
    reply.assert_one_terminal_frame();
    let rows = app.wait_for_rows(1).await;
    let row = &rows[0];
    assert!(
        row.prompt_tokens > 0 && row.completion_tokens > 0,
        "{row:?}"
    );
    assert!(!row.tokens_estimated, "the mock reports usage when asked");
    assert!(row.key_id.is_some(), "asked with a key");
    let mut conn = app.pool.get().await.unwrap();
    let collection: i64 = documents::table
        .find(document_id)
        .select(documents::collection_id)
        .first(&mut conn)
        .await
        .unwrap();
    assert_eq!(row.collection_ids, vec![collection]);
}

#[actix_web::test]
async fn a_server_that_reports_no_usage_leaves_an_estimate_marked_as_such() {
    let app = TestApp::spawn().await;
    let reply = app
        .chat(&directed(
            "How long do refunds take?",
            json!({"refuse_stream_options": true, "reply": "Fourteen days, as a rule."}),
        ))
        .await;
    reply.assert_one_terminal_frame();
    assert_eq!(reply.deltas(), "Fourteen days, as a rule.");
    let row = &app.wait_for_rows(1).await[0];
    assert!(row.tokens_estimated);
    assert_eq!(
        row.completion_tokens, 7,
        "25 characters, a token for every 4"
    );
    assert!(row.prompt_tokens > 0);
    assert_eq!(row.key_id, None);
}
