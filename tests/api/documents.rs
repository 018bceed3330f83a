//! The documents API: adding, listing and deleting documents, its refusals, and the
//! vector index following every change.

use serde_json::{Value, json};

use crate::support::*;

const TOKEN: &str = "t";
const CATS: &str =
    "# Cats\n\nCats sleep most of the day in warm sunny spots.\n\nKittens play at night.";

async fn app_with_token() -> TestApp {
    TestApp::spawn_with(&[("BOR_ADMIN_TOKEN", TOKEN)]).await
}

fn id_of(response: &JsonResponse) -> i64 {
    response.json["id"].as_i64().expect("an integer id")
}

#[actix_web::test]
async fn a_document_with_u0000_in_its_title_or_content_is_refused() {
    let app = app_with_token().await;
    let content = format!("{}\u{0}\n\nMore\u{0} text.", CATS);
    for body in [
        json!({"title": "Ca\u{0}ts", "content": CATS}),
        json!({"title": "Cats", "content": content}),
    ] {
        let refused = app.post_document(Some(TOKEN), &body).await;
        assert_eq!(refused.status, 400, "{:?}", refused.json);
        assert_eq!(refused.json["error"]["code"], "invalid_text");
    }
    assert_eq!(app.documents().await, json!([]));
}

#[actix_web::test]
async fn documents_are_added_listed_and_deleted() {
    let app = app_with_token().await;
    assert_eq!(app.documents().await, json!([]));

    let created = app
        .post_document(Some(TOKEN), &json!({"title": "Cats", "content": CATS}))
        .await;
    assert_eq!(created.status, 201, "{:?}", created.json);
    let id = id_of(&created);
    let chunks = created.json["chunks"].as_i64().unwrap();
    assert!(chunks >= 1);

    let listed = app.documents().await;
    let entries = listed.as_array().unwrap();
    assert_eq!(entries.len(), 1);
    assert_eq!(entries[0]["id"], json!(id));
    assert_eq!(entries[0]["title"], "Cats");
    assert_eq!(entries[0]["chunks"], json!(chunks));
    let created_at = entries[0]["created_at"].as_str().unwrap();
    assert!(
        chrono::DateTime::parse_from_rfc3339(created_at).is_ok(),
        "{created_at}"
    );

    // The same content again: the existing id, the title unchanged.
    let again = app
        .post_document(Some(TOKEN), &json!({"title": "Felines", "content": CATS}))
        .await;
    assert_eq!(again.status, 200, "{:?}", again.json);
    assert_eq!(id_of(&again), id);
    assert_eq!(app.documents().await[0]["title"], "Cats");
    assert_eq!(app.documents().await.as_array().unwrap().len(), 1);

    let deleted = app.delete_document(Some(TOKEN), &id.to_string()).await;
    assert_eq!(deleted.status, 204);
    assert_eq!(deleted.json, Value::Null);
    assert_eq!(app.documents().await, json!([]));
    let gone = app.delete_document(Some(TOKEN), &id.to_string()).await;
    assert_eq!((gone.status, gone.error_code()), (404, "not_found"));
    let not_a_number = app.delete_document(Some(TOKEN), "cats").await;
    assert_eq!(
        (not_a_number.status, not_a_number.error_code()),
        (404, "not_found")
    );
}

#[actix_web::test]
async fn admin_routes_are_disabled_without_a_configured_token() {
    let app = TestApp::spawn().await;
    let body = json!({"title": "Cats", "content": CATS});
    for response in [
        app.post_document(None, &body).await,
        app.post_document(Some("anything"), &body).await,
        app.delete_document(Some("anything"), "1").await,
        app.reindex(Some("anything")).await,
    ] {
        assert_eq!(
            (response.status, response.error_code()),
            (403, "admin_disabled")
        );
    }
    assert_eq!(app.documents().await, json!([]), "nothing was stored");
}

#[actix_web::test]
async fn admin_routes_refuse_a_missing_or_wrong_token() {
    let app = app_with_token().await;
    let body = json!({"title": "Cats", "content": CATS});
    for token in [None, Some("wrong"), Some("")] {
        for response in [
            app.post_document(token, &body).await,
            app.delete_document(token, "1").await,
            app.delete_document(token, "not-a-number").await,
            app.reindex(token).await,
        ] {
            assert_eq!(
                (response.status, response.error_code()),
                (401, "unauthorized"),
                "{token:?}"
            );
            assert!(response.json["error"]["message"].is_string());
        }
    }
    assert_eq!(app.documents().await, json!([]));
}

#[actix_web::test]
async fn bad_document_bodies_are_refused() {
    let app = app_with_token().await;
    let refused = |response: JsonResponse, status: u16, code: &str| {
        assert_eq!(
            (response.status, response.error_code()),
            (status, code),
            "{:?}",
            response.json
        );
        response.json["error"]["message"]
            .as_str()
            .unwrap_or("")
            .to_owned()
    };
    let message = refused(
        app.post_document(Some(TOKEN), &json!({"title": " ", "content": CATS}))
            .await,
        400,
        "invalid_json",
    );
    assert_eq!(message, "`title` is empty");
    let message = refused(
        app.post_document(Some(TOKEN), &json!({"title": "Cats", "content": "\n "}))
            .await,
        400,
        "invalid_json",
    );
    assert_eq!(message, "`content` is empty");
    refused(
        app.post_document_raw(Some(TOKEN), "application/json", b"{\"title\":".to_vec())
            .await,
        400,
        "invalid_json",
    );
    refused(
        app.post_document_raw(Some(TOKEN), "text/plain", b"hello".to_vec())
            .await,
        415,
        "unsupported_media_type",
    );
    let huge = json!({"title": "Big", "content": "word ".repeat(1_000_000)});
    refused(
        app.post_document(Some(TOKEN), &huge).await,
        413,
        "body_too_large",
    );
    assert_eq!(app.documents().await, json!([]));
}

#[actix_web::test]
async fn the_index_follows_api_imports_and_deletes_at_once() {
    let app = app_with_token().await;
    let created = app
        .post_document(Some(TOKEN), &json!({"title": "Cats", "content": CATS}))
        .await;
    let id = id_of(&created);
    let chunks = created.json["chunks"].as_u64().unwrap() as usize;
    assert_eq!(
        app.indexed_chunks(id),
        chunks,
        "indexed before the response"
    );

    let turn = app.chat("Where do cats sleep during the day?").await;
    let done = turn.last();
    assert_eq!(done.event, "done", "{:?}", turn.frames);
    assert_eq!(done.data["path"], "grounded");
    assert_eq!(done.data["sources"][0]["document_id"], json!(id));
    assert_eq!(done.data["sources"][0]["title"], "Cats");

    assert_eq!(
        app.delete_document(Some(TOKEN), &id.to_string())
            .await
            .status,
        204
    );
    assert_eq!(app.indexed_chunks(id), 0, "removed before the response");
    let turn = app.chat("Where do cats sleep during the day?").await;
    assert_eq!(turn.last().data["path"], "deflected");
    assert_eq!(turn.last().data["sources"], json!([]));
}

#[actix_web::test]
async fn reindex_picks_up_rows_written_without_notification() {
    let app = app_with_token().await;
    let embedding = app.mock_embedding("Owls hunt at night.").await;
    // Triggers off for this session: the rows arrive without any notification.
    let mut conn = app.pool.get().await.unwrap();
    diesel_async::RunQueryDsl::execute(
        diesel::sql_query("SET session_replication_role = replica"),
        &mut conn,
    )
    .await
    .unwrap();
    let document_id = insert_one_chunk(&mut conn, "Owls", "Owls hunt at night.", &embedding).await;
    drop(conn);

    let reloaded = app.reindex(Some(TOKEN)).await;
    assert_eq!(reloaded.status, 200, "{:?}", reloaded.json);
    assert_eq!(reloaded.json["chunks"], 1);
    assert_eq!(reloaded.json["documents"], 1);
    assert_eq!(reloaded.json["dimension"], embedding.len());
    assert_eq!(reloaded.json["dimension_mismatch"], 0);
    assert_eq!(app.indexed_chunks(document_id), 1);
}

#[actix_web::test]
async fn chunks_of_another_dimension_are_refused_with_the_command_that_fixes_them() {
    let app = app_with_token().await;
    // Fixes the index's dimension at the mock's.
    app.insert_document("Cats", "Cats sleep in the sun.").await;
    let (stale, _) = app
        .insert_document_with("Old model", "Dogs bark at the moon.", vec![0.5, 0.5, 0.1])
        .await;
    let refused =
        eventually(async || app.state.library.index().stats().dimension_mismatch == 1).await;
    assert!(refused, "{:?}", app.state.library.index().stats());
    assert_eq!(app.indexed_chunks(stale), 0);
    let health = app.get("/api/admin/health", Some(TOKEN)).await.json();
    assert_eq!(health["knowledge"]["dimension_mismatch"], 1);
    assert_eq!(health["status"], "degraded");
    assert!(
        health["problems"]
            .as_array()
            .unwrap()
            .iter()
            .any(|p| p.as_str().unwrap().contains("run `bor reembed`")),
        "{health}"
    );
    let lines = log_lines_containing("document refused by the vector index");
    assert!(
        lines
            .iter()
            .any(|line| line.contains(&format!("document_id={stale}"))
                && line.contains("run `bor reembed`")),
        "{lines:?}"
    );
    // Re-importing through the API (same content, new embeddings) makes it searchable.
    let again = app
        .post_document(
            Some(TOKEN),
            &json!({"title": "Old model", "content": "Dogs bark at the moon."}),
        )
        .await;
    assert_eq!(
        (again.status, id_of(&again)),
        (200, stale),
        "{:?}",
        again.json
    );
    assert_eq!(app.indexed_chunks(stale), 1);
    assert_eq!(app.state.library.index().stats().dimension_mismatch, 0);
}

/// Inserts a document of one chunk on `conn`; returns the document id.
pub async fn insert_one_chunk(
    conn: &mut diesel_async::AsyncPgConnection,
    title: &str,
    text: &str,
    embedding: &[f32],
) -> i64 {
    use bor::db::chunks::{NewChunk, insert_chunks};
    use bor::db::documents::{NewDocument, insert_document};
    let document_id = insert_document(conn, &NewDocument::new(title, None, text))
        .await
        .expect("the document is stored");
    insert_chunks(
        conn,
        &[NewChunk {
            document_id,
            ord: 0,
            text,
            heading: "",
            page: None,
            embedder: None,
            embedding,
        }],
    )
    .await
    .expect("the chunk is stored");
    document_id
}

#[actix_web::test]
async fn with_summaries_on_each_document_gets_one_in_the_background() {
    let app = TestApp::spawn_with(&[("BOR_ADMIN_TOKEN", TOKEN), ("BOR_SUMMARIES", "true")]).await;
    // The chat model fails for this one: its summary stays empty, and the next is written.
    let failing = format!("{CATS}\nMOCK {}", json!({"status": 500}));
    let broken = app
        .post_document(Some(TOKEN), &json!({"title": "Broken", "content": failing}))
        .await;
    assert_eq!(broken.status, 201, "{:?}", broken.json);
    let created = app
        .post_document(Some(TOKEN), &json!({"title": "Cats", "content": CATS}))
        .await;
    assert_eq!(
        created.status, 201,
        "the import does not wait for the summary"
    );
    let summarised = eventually(async || {
        app.documents()
            .await
            .as_array()
            .unwrap()
            .iter()
            .any(|d| d["summary"].is_string())
    })
    .await;
    assert!(summarised, "{}", app.documents().await);
    let documents = app.documents().await;
    let cats = documents
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d["title"] == "Cats")
        .unwrap();
    // The mock answers with the start of the last user message: the title and the text.
    assert_eq!(
        cats["summary"],
        "Mock answer: Title: Cats # Cats Cats sleep most of the day in warm"
    );
    let broken = documents
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d["title"] == "Broken")
        .unwrap();
    assert_eq!(broken["summary"], Value::Null);
    let summary_requests = app
        .mock
        .chat_requests()
        .iter()
        .filter(|request| {
            request["messages"][0]["content"]
                .as_str()
                .unwrap_or("")
                .starts_with("Summarise")
        })
        .count();
    assert!(summary_requests >= 2, "both were tried");
}

#[actix_web::test]
async fn without_summaries_none_is_asked_for() {
    let app = app_with_token().await;
    let created = app
        .post_document(Some(TOKEN), &json!({"title": "Cats", "content": CATS}))
        .await;
    assert_eq!(created.status, 201);
    assert_eq!(app.documents().await[0]["summary"], Value::Null);
    assert!(app.mock.chat_requests().is_empty());
}
