//! The audit trail (docs/PROTOCOL.md, "Audit trail"): sign-ins and their failures, keys,
//! users, groups, grants and documents, each with who, when and from where; listed
//! newest first, filtered and paged, by admins only; and never a secret in it.

use awc::http::Method;
use bor::db::users::Role;
use serde_json::{Value, json};

use crate::support::*;

const SERVICE_TOKEN: &str = "service-token-of-the-audit-trail-5521";
const WRONG_PASSWORD: &str = "wrong-password-secret-7781";
const TYPED_AS_NAME: &str = "my-password-typed-as-a-username-3390";
const NEW_PASSWORD: &str = "a new password nobody should read 4410";
const CAROLS_PASSWORD: &str = "carol's first password 6612";

async fn trail(app: &TestApp, who: &Credential, query: &str) -> Reply {
    app.call(Method::GET, &format!("/api/admin/audit{query}"), who, None)
        .await
}

fn actions(page: &Value) -> Vec<String> {
    page["entries"]
        .as_array()
        .expect("entries")
        .iter()
        .map(|entry| entry["action"].as_str().unwrap_or_default().to_owned())
        .collect()
}

#[actix_web::test]
async fn every_change_is_kept_with_who_when_and_where_and_no_secret() {
    let app = TestApp::spawn_with_accounts(&[("BOR_ADMIN_TOKEN", SERVICE_TOKEN)]).await;
    app.add_user("admin", Role::Admin).await;
    app.add_user("ann", Role::Member).await;
    let failed = app.login("ann", WRONG_PASSWORD).await;
    assert_eq!(failed.status, 401);
    let unknown = app.login(TYPED_AS_NAME, WRONG_PASSWORD).await;
    assert_eq!(unknown.status, 401);
    let ann_cookie = app.sign_in("ann").await;
    let admin_cookie = app.sign_in("admin").await;
    let (ann, admin) = (
        Credential::Cookie(ann_cookie.clone()),
        Credential::Cookie(admin_cookie.clone()),
    );
    let (key_id, key) = app.make_key(&ann_cookie, "editor").await;
    let changed = app
        .call(
            Method::POST,
            "/api/auth/password",
            &ann,
            Some(json!({"current": PASSWORD, "new": NEW_PASSWORD})),
        )
        .await;
    assert_eq!(changed.status, 204, "{}", changed.text());

    let carol = app
        .call(
            Method::POST,
            "/api/admin/users",
            &admin,
            Some(json!({"username": "carol", "role": "member", "password": CAROLS_PASSWORD})),
        )
        .await;
    assert_eq!(carol.status, 201, "{}", carol.text());
    let carol_id = carol.json()["user"]["id"]
        .as_str()
        .expect("an id")
        .to_owned();
    let steps: [(Method, String, Option<Value>); 9] = [
        (
            Method::PATCH,
            format!("/api/admin/users/{carol_id}"),
            Some(json!({"disabled": true})),
        ),
        (
            Method::POST,
            "/api/admin/groups".into(),
            Some(json!({"name": "staff"})),
        ),
        (
            Method::PUT,
            "/api/admin/groups/staff/members".into(),
            Some(json!(["ann"])),
        ),
        (
            Method::POST,
            "/api/admin/collections".into(),
            Some(json!({"name": "hr"})),
        ),
        (
            Method::PUT,
            "/api/admin/collections/hr/grants".into(),
            Some(json!([{"group": "staff", "access": "read"}])),
        ),
        (
            Method::POST,
            "/api/admin/documents".into(),
            Some(
                json!({"title": "Salary bands", "content": "Reviewed every March.", "collection": "hr"}),
            ),
        ),
        (Method::DELETE, format!("/api/keys/{key_id}"), None),
        (Method::DELETE, format!("/api/admin/users/{carol_id}"), None),
        (Method::DELETE, "/api/admin/collections/hr".into(), None),
    ];
    for (method, path, body) in steps {
        let who = if path.starts_with("/api/keys") {
            &ann
        } else {
            &admin
        };
        let reply = app.call(method.clone(), &path, who, body).await;
        assert!(reply.status < 300, "{method} {path}: {}", reply.text());
    }

    let page = trail(&app, &admin, "").await;
    assert_eq!(page.status, 200, "{}", page.text());
    let page = page.json();
    assert_eq!(
        actions(&page),
        [
            "collection_deleted",
            "user_deleted",
            "key_revoked",
            "document_added",
            "grants_set",
            "collection_created",
            "group_members_set",
            "group_created",
            "user_changed",
            "user_created",
            "password_changed",
            "key_created",
            "signed_in",
            "signed_in",
            "sign_in_failed",
            "sign_in_failed",
        ]
    );
    let entries = page["entries"].as_array().expect("entries");
    let by_action = |action: &str| {
        entries
            .iter()
            .filter(|entry| entry["action"] == action)
            .cloned()
            .collect::<Vec<_>>()
    };
    assert!(entries.iter().all(|entry| entry["address"] == "127.0.0.1"));
    let failures = by_action("sign_in_failed");
    assert_eq!(failures[1]["target"], "ann");
    assert_eq!(failures[0]["target"], "(no such user)");
    assert_eq!(failures[0]["actor"], "anonymous");
    assert_eq!(by_action("key_created")[0]["actor"], "ann");
    assert_eq!(by_action("key_revoked")[0]["target"], "editor");
    assert_eq!(by_action("user_deleted")[0]["target"], "carol");
    assert_eq!(by_action("user_changed")[0]["details"]["disabled"], true);
    assert_eq!(by_action("grants_set")[0]["target"], "hr");
    assert_eq!(by_action("document_added")[0]["target"], "Salary bands");
    assert_eq!(
        by_action("collection_deleted")[0]["details"]["documents"],
        1
    );
    assert_eq!(page["next_before"], Value::Null);

    // Filters and pages.
    let failed_only = trail(&app, &admin, "?action=sign_in_failed").await.json();
    assert_eq!(actions(&failed_only), ["sign_in_failed", "sign_in_failed"]);
    let anns = trail(&app, &admin, "?actor=ann").await.json();
    assert_eq!(
        actions(&anns),
        [
            "key_revoked",
            "password_changed",
            "key_created",
            "signed_in"
        ]
    );
    let first = trail(&app, &admin, "?limit=10").await.json();
    let before = first["next_before"].as_i64().expect("a next page");
    let second = trail(&app, &admin, &format!("?limit=10&before={before}"))
        .await
        .json();
    assert_eq!(
        [actions(&first), actions(&second)].concat(),
        actions(&page),
        "the pages follow on"
    );
    assert_eq!(second["next_before"], Value::Null);
    for bad in [
        "?action=nothing",
        "?limit=0",
        "?since=yesterday",
        "?before=x",
    ] {
        assert_eq!(trail(&app, &admin, bad).await.status, 400, "{bad}");
    }
    // The service token reads it; a member and nobody do not.
    let service = trail(&app, &Credential::Bearer(SERVICE_TOKEN.into()), "").await;
    assert_eq!(service.status, 200);
    let ann_now = Credential::Cookie(app.sign_in_with("ann", NEW_PASSWORD).await);
    assert_eq!(trail(&app, &ann_now, "").await.status, 403);
    assert_eq!(trail(&app, &Credential::Nobody, "").await.status, 401);

    // No secret the suite made is anywhere in the trail.
    let whole: Vec<String> = {
        use diesel::prelude::*;
        use diesel_async::RunQueryDsl;
        let mut conn = app.database().connect().await;
        bor::db::schema::audit_log::table
            .select(diesel::dsl::sql::<diesel::sql_types::Text>(
                "row_to_json(audit_log)::text",
            ))
            .load(&mut conn)
            .await
            .expect("the trail")
    };
    for secret in [
        PASSWORD,
        WRONG_PASSWORD,
        TYPED_AS_NAME,
        NEW_PASSWORD,
        CAROLS_PASSWORD,
        SERVICE_TOKEN,
        key.as_str(),
        ann_cookie.as_str(),
        admin_cookie.as_str(),
    ] {
        assert!(
            !whole.iter().any(|row| row.contains(secret)),
            "{secret:?} is in the trail"
        );
    }
}
