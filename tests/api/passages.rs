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

/// A member sees the name of the file a document came from, not the server's folders;
/// an admin sees the whole path, and a web page's address is whole for everyone.
#[actix_web::test]
async fn a_member_sees_a_sources_file_name_and_an_admin_its_path() {
    use awc::http::Method;
    use bor::db::users::Role;
    use diesel::prelude::*;
    use diesel_async::RunQueryDsl;

    let app = TestApp::spawn_with_accounts(&[]).await;
    app.add_user("admin", Role::Admin).await;
    app.add_user("ann", Role::Member).await;
    let admin = Credential::Cookie(app.sign_in("admin").await);
    let ann = Credential::Cookie(app.sign_in("ann").await);
    let (id, _) = app
        .insert_document("Handbook", "Descale the kettle monthly.")
        .await;
    let source_of = async |who: &Credential| {
        let reply = app
            .call(Method::GET, &format!("/api/documents/{id}"), who, None)
            .await;
        assert_eq!(reply.status, 200, "{}", reply.text());
        reply.json()["source"].clone()
    };
    for (stored, for_member) in [
        ("/srv/bor/private/team/handbook.md", "handbook.md"),
        ("C:\\share\\team\\handbook.md", "handbook.md"),
        (
            "https://example.com/docs/handbook",
            "https://example.com/docs/handbook",
        ),
    ] {
        let mut conn = app.database().connect().await;
        diesel::update(bor::db::schema::documents::table.find(id))
            .set(bor::db::schema::documents::source.eq(stored))
            .execute(&mut conn)
            .await
            .unwrap();
        assert_eq!(source_of(&ann).await, for_member, "{stored}");
        assert_eq!(source_of(&admin).await, stored, "{stored}");
    }
}
