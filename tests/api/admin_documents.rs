//! The admin document list (`GET /api/admin/documents`, docs/PROTOCOL.md, "Document
//! routes"): who added each document, the search and the filters, the pages; and the
//! `default` collection that is not deleted.

use awc::http::Method;
use bor::db::users::Role;
use serde_json::{Value, json};

use crate::support::*;

const TOKEN: &str = "service-token";
const BOUNDARY: &str = "bor-admin-documents-3f2";

/// `files` as a `multipart/form-data` body into the collection `collection`.
fn multipart(collection: &str, files: &[(&str, &str)]) -> Vec<u8> {
    let mut body = format!(
        "--{BOUNDARY}\r\nContent-Disposition: form-data; name=\"collection\"\r\n\r\n{collection}\r\n"
    );
    for (name, text) in files {
        body.push_str(&format!(
            "--{BOUNDARY}\r\nContent-Disposition: form-data; name=\"file\"; filename=\"{name}\"\r\n\
             Content-Type: application/octet-stream\r\n\r\n{text}\r\n"
        ));
    }
    body.push_str(&format!("--{BOUNDARY}--\r\n"));
    body.into_bytes()
}

/// Uploads `files` as the person signed in with `cookie`.
async fn upload(app: &TestApp, cookie: &str, collection: &str, files: &[(&str, &str)]) {
    let response = TestApp::client()
        .post(format!("{}/api/documents", app.address))
        .insert_header(("Cookie", format!("bor_session={cookie}")))
        .insert_header(("Origin", app.address.clone()))
        .content_type(format!("multipart/form-data; boundary={BOUNDARY}"))
        .send_body(multipart(collection, files))
        .await
        .expect("the upload is sent");
    let reply = Reply::read(response).await;
    assert_eq!(reply.status, 200, "{}", reply.text());
    assert_eq!(
        reply.json()["documents"].as_array().map(Vec::len),
        Some(files.len()),
        "{}",
        reply.text()
    );
}

/// The titles listed in a page, in order.
fn titles(page: &Value) -> Vec<String> {
    page["documents"]
        .as_array()
        .expect("a list")
        .iter()
        .map(|document| document["title"].as_str().unwrap_or_default().to_owned())
        .collect()
}

async fn listed(app: &TestApp, who: &Credential, query: &str) -> Value {
    let reply = app
        .call(
            Method::GET,
            &format!("/api/admin/documents{query}"),
            who,
            None,
        )
        .await;
    assert_eq!(reply.status, 200, "{query}: {}", reply.text());
    reply.json()
}

#[actix_web::test]
async fn the_list_says_who_added_each_document_and_filters_and_pages_it() {
    let app = TestApp::spawn_with_accounts(&[("BOR_ADMIN_TOKEN", TOKEN)]).await;
    let ann_id = app.add_user("ann", Role::Admin).await;
    let bob_id = app.add_user("bob", Role::Member).await;
    let ann_cookie = app.sign_in("ann").await;
    let ann = Credential::Cookie(ann_cookie.clone());
    let made = app
        .call(
            Method::POST,
            "/api/admin/collections",
            &ann,
            Some(json!({"name": "hr"})),
        )
        .await;
    assert_eq!(made.status, 201, "{}", made.text());
    let granted = app
        .call(
            Method::PUT,
            "/api/admin/collections/hr/grants",
            &ann,
            Some(json!([{"user": "bob", "access": "write"}])),
        )
        .await;
    assert_eq!(granted.status, 200, "{}", granted.text());

    // Ann uploads two files into default, Bob one into hr, the service token posts one.
    upload(
        &app,
        &ann_cookie,
        "default",
        &[
            ("kettle.md", "# Kettle care\n\nDescale the kettle monthly."),
            ("plants.txt", "Water the office plants on Fridays."),
        ],
    )
    .await;
    upload(
        &app,
        &app.sign_in("bob").await,
        "hr",
        &[("leave.md", "# Leave policy\n\nThirty days of paid leave.")],
    )
    .await;
    let posted = app
        .call(
            Method::POST,
            "/api/admin/documents",
            &Credential::Bearer(TOKEN.to_owned()),
            Some(json!({"title": "Scripted note", "content": "Posted by a script, 100% of it."})),
        )
        .await;
    assert_eq!(posted.status, 201, "{}", posted.text());

    let all = listed(&app, &ann, "").await;
    assert_eq!(all["total"], 4);
    assert_eq!(all["next_cursor"], Value::Null);
    assert_eq!(
        titles(&all),
        ["Scripted note", "Leave policy", "plants.txt", "Kettle care"],
        "newest first"
    );
    let by_title = |title: &str| {
        all["documents"]
            .as_array()
            .unwrap()
            .iter()
            .find(|document| document["title"] == title)
            .cloned()
            .unwrap()
    };
    let kettle = by_title("Kettle care");
    assert_eq!(kettle["added_by"]["username"], "ann");
    assert_eq!(kettle["added_by"]["id"], ann_id.as_str());
    assert_eq!(kettle["origin"], "person");
    assert_eq!(kettle["collection"], "default");
    assert_eq!(kettle["content_type"], "text/markdown");
    assert_eq!(kettle["chunks"], 1);
    assert_eq!(by_title("Leave policy")["added_by"]["username"], "bob");
    let scripted = by_title("Scripted note");
    assert_eq!(scripted["added_by"], Value::Null);
    assert_eq!(scripted["origin"], "service_token");

    // The search: words in the title or source, any case, `%` and `_` taken literally.
    assert_eq!(
        titles(&listed(&app, &ann, "?q=KETTLE").await),
        ["Kettle care"]
    );
    assert_eq!(
        titles(&listed(&app, &ann, "?q=plants.txt").await),
        ["plants.txt"]
    );
    // Every word, in any order, each in the title or the source.
    assert_eq!(
        titles(&listed(&app, &ann, "?q=care%20kettle").await),
        ["Kettle care"]
    );
    assert_eq!(
        titles(&listed(&app, &ann, "?q=kettle%20policy").await),
        Vec::<String>::new()
    );
    assert_eq!(
        titles(&listed(&app, &ann, "?q=100%25").await),
        Vec::<String>::new()
    );
    assert_eq!(
        titles(&listed(&app, &ann, "?q=%25").await),
        Vec::<String>::new()
    );
    // The filters, alone and together.
    assert_eq!(
        titles(&listed(&app, &ann, "?collection=hr").await),
        ["Leave policy"]
    );
    assert_eq!(
        titles(&listed(&app, &ann, "?kind=text/plain").await),
        ["plants.txt"]
    );
    assert_eq!(
        titles(&listed(&app, &ann, &format!("?added_by={bob_id}")).await),
        ["Leave policy"]
    );
    assert_eq!(
        titles(&listed(&app, &ann, "?added_by=none").await),
        ["Scripted note"]
    );
    assert_eq!(
        titles(
            &listed(
                &app,
                &ann,
                &format!("?added_by={ann_id}&kind=text/markdown")
            )
            .await
        ),
        ["Kettle care"]
    );
    assert_eq!(
        listed(&app, &ann, "?since=2999-01-01T00:00:00Z").await["total"],
        0
    );
    assert_eq!(
        listed(&app, &ann, "?until=2999-01-01T00:00:00Z").await["total"],
        4
    );

    // Pages of two, each carrying the total; the last has no cursor.
    let first = listed(&app, &ann, "?limit=2").await;
    assert_eq!(titles(&first), ["Scripted note", "Leave policy"]);
    assert_eq!(first["total"], 4);
    let cursor = first["next_cursor"].as_i64().expect("a cursor");
    let second = listed(&app, &ann, &format!("?limit=2&cursor={cursor}")).await;
    assert_eq!(titles(&second), ["plants.txt", "Kettle care"]);
    assert_eq!(second["next_cursor"], Value::Null);

    // A person deleted later is still told apart from the command line.
    let removed = app
        .call(
            Method::DELETE,
            &format!("/api/admin/users/{bob_id}"),
            &ann,
            None,
        )
        .await;
    assert_eq!(removed.status, 204, "{}", removed.text());
    let after = listed(&app, &ann, "?collection=hr").await;
    assert_eq!(after["documents"][0]["origin"], "deleted_person");
    assert_eq!(after["documents"][0]["added_by"], Value::Null);

    // What does not parse is refused and named.
    for (query, names) in [
        ("?limit=0", "limit"),
        ("?limit=201", "limit"),
        ("?cursor=x", "cursor"),
        ("?added_by=bob", "added_by"),
        ("?since=yesterday", "since"),
    ] {
        let reply = app
            .call(
                Method::GET,
                &format!("/api/admin/documents{query}"),
                &ann,
                None,
            )
            .await;
        assert_eq!(reply.status, 400, "{query}");
        assert_eq!(reply.json()["error"]["code"], "invalid_json", "{query}");
        assert!(reply.text().contains(names), "{query}: {}", reply.text());
    }
    let unknown = app
        .call(
            Method::GET,
            "/api/admin/documents?collection=nosuch",
            &ann,
            None,
        )
        .await;
    assert_eq!(unknown.status, 404, "{}", unknown.text());
}

#[actix_web::test]
async fn the_default_collection_is_not_deleted() {
    let app = TestApp::spawn_with_accounts(&[]).await;
    app.add_user("ann", Role::Admin).await;
    let ann = Credential::Cookie(app.sign_in("ann").await);
    let stored = app
        .call(
            Method::POST,
            "/api/admin/documents",
            &ann,
            Some(json!({"title": "Kettle", "content": "Descale it monthly."})),
        )
        .await;
    assert_eq!(stored.status, 201, "{}", stored.text());
    let refused = app
        .call(Method::DELETE, "/api/admin/collections/default", &ann, None)
        .await;
    assert_eq!(refused.status, 409, "{}", refused.text());
    assert_eq!(refused.json()["error"]["code"], "built_in");
    assert!(
        refused.json()["error"]["message"]
            .as_str()
            .unwrap_or_default()
            .contains("default cannot be deleted"),
        "{}",
        refused.text()
    );
    let kept = listed(&app, &ann, "?collection=default").await;
    assert_eq!(titles(&kept), ["Kettle"]);
}

#[actix_web::test]
async fn an_empty_filter_is_no_filter() {
    let app = TestApp::spawn_with_accounts(&[]).await;
    app.add_user("ann", Role::Admin).await;
    let ann = Credential::Cookie(app.sign_in("ann").await);
    let stored = app
        .call(
            Method::POST,
            "/api/admin/documents",
            &ann,
            Some(json!({"title": "Kettle", "content": "Descale it monthly."})),
        )
        .await;
    assert_eq!(stored.status, 201, "{}", stored.text());
    // As a form sends its fields left empty, one by one and all together.
    for query in [
        "?q=",
        "?collection=",
        "?kind=",
        "?added_by=",
        "?since=",
        "?until=",
        "?q=&collection=&kind=&added_by=&since=&until=",
    ] {
        assert_eq!(
            titles(&listed(&app, &ann, query).await),
            ["Kettle"],
            "{query}"
        );
    }
}

#[actix_web::test]
async fn each_document_says_how_it_came_in() {
    use bor::db::documents::{Adder, NewDocument, insert_document};

    let app = TestApp::spawn_with_accounts(&[("BOR_ADMIN_TOKEN", TOKEN)]).await;
    app.add_user("ann", Role::Admin).await;
    let ann = Credential::Cookie(app.sign_in("ann").await);
    // One stored before bor recorded how documents came in, one by `bor import`.
    let mut conn = app.pool.get().await.expect("a connection");
    for (title, adder) in [
        ("Old note", Adder::Unknown),
        ("Imported note", Adder::CommandLine),
    ] {
        insert_document(
            &mut conn,
            &NewDocument::new(title, None, title).added_by(adder),
        )
        .await
        .expect("the document is stored");
    }
    drop(conn);
    let posted = app
        .call(
            Method::POST,
            "/api/admin/documents",
            &Credential::Bearer(TOKEN.to_owned()),
            Some(json!({"title": "Scripted note", "content": "Posted by a script."})),
        )
        .await;
    assert_eq!(posted.status, 201, "{}", posted.text());
    let page = listed(&app, &ann, "").await;
    let origins: Vec<(String, String)> = page["documents"]
        .as_array()
        .expect("a list")
        .iter()
        .map(|document| {
            (
                document["title"].as_str().unwrap_or_default().to_owned(),
                document["origin"].as_str().unwrap_or_default().to_owned(),
            )
        })
        .collect();
    assert_eq!(
        origins,
        [
            ("Scripted note".to_owned(), "service_token".to_owned()),
            ("Imported note".to_owned(), "command_line".to_owned()),
            ("Old note".to_owned(), "unknown".to_owned()),
        ]
    );
    // None of them was added by a person signed in.
    assert_eq!(listed(&app, &ann, "?added_by=none").await["total"], 3);
}
