//! Numbered sources and the passages they open (docs/PROTOCOL.md, "Sources and
//! citations"): `GET /api/documents/{id}`, the numbers in the prompt and in `sources`.

use serde_json::{Value, json};

use crate::support::*;

pub(crate) const TOKEN: &str = "t";
const GUIDE: &str = "# Guide\n\nAn introduction to the guide.\n\n## Install\n\nRun the installer and restart the shell.\n\n## Use\n\nType bor to start.";

/// An app with a guide of three chunks, one per heading, in `default`; its id.
pub(crate) async fn app_with_guide() -> (TestApp, i64) {
    let app = TestApp::spawn_with(&[("BOR_ADMIN_TOKEN", TOKEN)]).await;
    let created = app
        .post_document(Some(TOKEN), &json!({"title": "Guide", "content": GUIDE}))
        .await;
    assert_eq!(created.status, 201, "{:?}", created.json);
    let id = created.json["id"].as_i64().unwrap();
    (app, id)
}

#[actix_web::test]
async fn a_document_is_served_chunk_by_chunk_with_headings() {
    let (app, id) = app_with_guide().await;
    let reply = app.get(&format!("/api/documents/{id}"), None).await;
    assert_eq!(reply.status, 200);
    let document: Value = serde_json::from_slice(&reply.body).unwrap();
    assert_eq!(document["id"], id);
    assert_eq!(document["title"], "Guide");
    assert_eq!(document["content_type"], "text/markdown");
    assert_eq!(document["source"], Value::Null);
    assert_eq!(document["summary"], Value::Null);
    let chunks = document["chunks"].as_array().unwrap();
    let headings: Vec<&str> = chunks
        .iter()
        .map(|chunk| chunk["heading"].as_str().unwrap())
        .collect();
    assert_eq!(headings, ["Guide", "Guide › Install", "Guide › Use"]);
    let ords: Vec<i64> = chunks.iter().map(|c| c["ord"].as_i64().unwrap()).collect();
    assert_eq!(ords, [0, 1, 2]);
    assert!(chunks.iter().all(|chunk| chunk["page"].is_null()));
    assert!(
        chunks[1]["text"]
            .as_str()
            .unwrap()
            .contains("Run the installer")
    );
    assert!(chunks[1]["id"].is_i64());
}

#[actix_web::test]
async fn an_unknown_document_is_a_404() {
    let (app, id) = app_with_guide().await;
    for path in [
        format!("/api/documents/{}", id + 1000),
        "/api/documents/guide".to_owned(),
    ] {
        let reply = app.get(&path, None).await;
        assert_eq!(reply.status, 404, "{path}");
        let body: Value = serde_json::from_slice(&reply.body).unwrap();
        assert_eq!(body["error"]["code"], "not_found");
    }
}

#[actix_web::test]
async fn sources_are_numbered_as_the_prompt_shows_them_and_open_their_passage() {
    let (app, id) = app_with_guide().await;
    let response = app.chat("How do I run the installer?").await;
    let done = &response.last().data;
    assert_eq!(done["path"], "grounded", "{done}");
    let sources = done["sources"].as_array().unwrap();
    assert!(!sources.is_empty());
    let mut numbers: Vec<i64> = sources.iter().map(|s| s["n"].as_i64().unwrap()).collect();
    numbers.sort();
    assert_eq!(numbers, (1..=sources.len() as i64).collect::<Vec<_>>());
    let install = sources
        .iter()
        .find(|source| source["heading"] == "Guide › Install")
        .expect("the install section is a source");
    assert_eq!(install["document_id"], id);
    assert_eq!(install["page"], Value::Null);
    assert_eq!(
        install["snippet"], "Install Run the installer and restart the shell.",
        "the snippet is the chunk's text without its Markdown syntax"
    );
    let n = install["n"].as_i64().unwrap();
    let system = app.mock.chat_requests()[0]["messages"][0]["content"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(
        system.contains(&format!(
            "[{n}] Guide — Guide › Install (document {id}, chunk {})",
            install["chunk_id"]
        )),
        "{system}"
    );
    // The passage the source opens is one of the document's chunks.
    let reply = app.get(&format!("/api/documents/{id}"), None).await;
    let document: Value = serde_json::from_slice(&reply.body).unwrap();
    assert!(
        document["chunks"]
            .as_array()
            .unwrap()
            .iter()
            .any(|chunk| chunk["id"] == install["chunk_id"])
    );
    let rows = app.wait_for_rows(1).await;
    assert_eq!(
        rows[0].sources, done["sources"],
        "the row keeps the same list"
    );
}
