//! U+0000 in any input is refused at the edge as 400 `invalid_text` (docs/PROTOCOL.md,
//! "Error codes"), never passed to PostgreSQL (which answered 500): one test per field
//! where it once did, and the path and the query string.

use awc::http::Method;
use bor::db::users::Role;
use serde_json::{Value, json};

use crate::support::*;

const NUL: &str = "a\u{0}b";

fn cookie(value: &str) -> Credential {
    Credential::Cookie(value.to_owned())
}

/// An app with an admin signed in: the app and the admin's credential.
async fn app_with_admin() -> (TestApp, Credential) {
    let app = TestApp::spawn_with_accounts(&[]).await;
    app.add_user("root", Role::Admin).await;
    let admin = cookie(&app.sign_in("root").await);
    (app, admin)
}

async fn assert_invalid_text(
    app: &TestApp,
    who: &Credential,
    method: Method,
    path: &str,
    body: Option<Value>,
) {
    let reply = app.call(method.clone(), path, who, body).await;
    assert_eq!(reply.status, 400, "{method} {path}: {}", reply.text());
    assert_eq!(
        reply.json()["error"]["code"],
        "invalid_text",
        "{method} {path}"
    );
}

#[actix_web::test]
async fn in_the_sign_in_username_without_credentials() {
    let app = TestApp::spawn_with_accounts(&[]).await;
    let body = json!({"username": NUL, "password": "whatever it is"});
    assert_invalid_text(
        &app,
        &Credential::Nobody,
        Method::POST,
        "/api/auth/login",
        Some(body),
    )
    .await;
}

#[actix_web::test]
async fn in_a_key_name() {
    let (app, admin) = app_with_admin().await;
    let body = json!({"name": NUL});
    assert_invalid_text(&app, &admin, Method::POST, "/api/keys", Some(body)).await;
}

#[actix_web::test]
async fn in_a_display_name() {
    let (app, admin) = app_with_admin().await;
    let body = json!({"username": "ann", "role": "member", "display_name": NUL});
    assert_invalid_text(&app, &admin, Method::POST, "/api/admin/users", Some(body)).await;
    let ann = app.add_user("ann2", Role::Member).await;
    let path = format!("/api/admin/users/{ann}");
    assert_invalid_text(
        &app,
        &admin,
        Method::PATCH,
        &path,
        Some(json!({"display_name": NUL})),
    )
    .await;
}

#[actix_web::test]
async fn in_a_grant() {
    let (app, admin) = app_with_admin().await;
    let made = app
        .call(
            Method::POST,
            "/api/admin/collections",
            &admin,
            Some(json!({"name": "hr"})),
        )
        .await;
    assert_eq!(made.status, 201, "{}", made.text());
    let grants = json!([{"user": NUL, "access": "read"}]);
    let path = "/api/admin/collections/hr/grants";
    assert_invalid_text(&app, &admin, Method::PUT, path, Some(grants)).await;
    let grants = json!([{"group": NUL, "access": "read"}]);
    assert_invalid_text(&app, &admin, Method::PUT, path, Some(grants)).await;
}

#[actix_web::test]
async fn in_a_member_list() {
    let (app, admin) = app_with_admin().await;
    let made = app
        .call(
            Method::POST,
            "/api/admin/groups",
            &admin,
            Some(json!({"name": "staff"})),
        )
        .await;
    assert_eq!(made.status, 201, "{}", made.text());
    let path = "/api/admin/groups/staff/members";
    assert_invalid_text(&app, &admin, Method::PUT, path, Some(json!(["root", NUL]))).await;
}

#[actix_web::test]
async fn in_a_collection_description() {
    let (app, admin) = app_with_admin().await;
    let body = json!({"name": "hr", "description": NUL});
    assert_invalid_text(
        &app,
        &admin,
        Method::POST,
        "/api/admin/collections",
        Some(body),
    )
    .await;
    let made = app
        .call(
            Method::POST,
            "/api/admin/collections",
            &admin,
            Some(json!({"name": "hr"})),
        )
        .await;
    assert_eq!(made.status, 201, "{}", made.text());
    let body = json!({"description": NUL});
    assert_invalid_text(
        &app,
        &admin,
        Method::PATCH,
        "/api/admin/collections/hr",
        Some(body),
    )
    .await;
}

#[actix_web::test]
async fn in_the_path_and_the_query_string() {
    let (app, admin) = app_with_admin().await;
    for (method, path) in [
        (Method::GET, "/api/conversations/a%00b"),
        (Method::DELETE, "/api/keys/a%00b"),
        (Method::PATCH, "/api/admin/collections/a%00b"),
        (Method::DELETE, "/api/admin/groups/a%00b"),
        (Method::GET, "/api/admin/users/a%00b/keys"),
        (Method::GET, "/api/conversations?q=a%00b"),
        (Method::GET, "/api/documents?collection=a%00b"),
    ] {
        let body = (method == Method::PATCH).then(|| json!({"description": "x"}));
        assert_invalid_text(&app, &admin, method, path, body).await;
    }
    let v1 = app
        .call(Method::GET, "/v1/models/a%00b", &admin, None)
        .await;
    assert_eq!(v1.status, 400, "{}", v1.text());
    assert_eq!(
        v1.json()["error"]["code"],
        "invalid_text",
        "the OpenAI shape"
    );
    assert_eq!(v1.json()["error"]["type"], "invalid_request_error");
}
