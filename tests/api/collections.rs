//! The collections routes and their refusals (docs/PROTOCOL.md, "Collections"): making,
//! describing and deleting collections, grants, groups and their members, and a grant
//! changed on one instance holding on another.

use awc::http::Method;
use bor::db::users::Role;
use serde_json::{Value, json};

use crate::support::*;

async fn as_admin(
    app: &TestApp,
    admin: &Credential,
    method: Method,
    path: &str,
    body: Option<Value>,
) -> Reply {
    app.call(method, path, admin, body).await
}

fn code(reply: &Reply) -> String {
    reply.json()["error"]["code"]
        .as_str()
        .unwrap_or_default()
        .to_owned()
}

async fn signed_in_admin(app: &TestApp) -> Credential {
    app.add_user("admin", Role::Admin).await;
    Credential::Cookie(app.sign_in("admin").await)
}

#[actix_web::test]
async fn admins_make_describe_grant_and_delete_collections() {
    let app = TestApp::spawn_with_accounts(&[]).await;
    let admin = signed_in_admin(&app).await;
    app.add_user("ann", Role::Member).await;

    let listed = as_admin(&app, &admin, Method::GET, "/api/admin/collections", None).await;
    assert_eq!(listed.status, 200);
    let default = &listed.json()["collections"][0];
    assert_eq!(default["name"], "default");
    assert_eq!(
        default["grants"],
        json!([{"group": "everyone", "access": "read"}])
    );

    let made = as_admin(
        &app,
        &admin,
        Method::POST,
        "/api/admin/collections",
        Some(json!({"name": "legal", "description": "Contracts"})),
    )
    .await;
    assert_eq!(made.status, 201, "{}", made.text());
    assert_eq!(made.json()["collection"]["name"], "legal");
    assert_eq!(made.json()["collection"]["grants"], json!([]));
    let again = as_admin(
        &app,
        &admin,
        Method::POST,
        "/api/admin/collections",
        Some(json!({"name": "legal"})),
    )
    .await;
    assert_eq!((again.status, code(&again)), (409, "name_taken".to_owned()));
    for bad in ["Legal", "with space", "", &"x".repeat(65), "dot.ted"] {
        let refused = as_admin(
            &app,
            &admin,
            Method::POST,
            "/api/admin/collections",
            Some(json!({"name": bad})),
        )
        .await;
        assert_eq!(
            (refused.status, code(&refused)),
            (400, "invalid_collection".to_owned()),
            "{bad:?}"
        );
        assert!(
            refused.text().contains("a-z"),
            "the rule is said: {}",
            refused.text()
        );
    }

    let changed = as_admin(
        &app,
        &admin,
        Method::PATCH,
        "/api/admin/collections/legal",
        Some(json!({"description": "Signed contracts"})),
    )
    .await;
    assert_eq!(
        changed.json()["collection"]["description"],
        "Signed contracts"
    );
    let absent = as_admin(
        &app,
        &admin,
        Method::PATCH,
        "/api/admin/collections/nosuch",
        Some(json!({"description": "x"})),
    )
    .await;
    assert_eq!(absent.status, 404);

    // Grants: to users and groups, unknown names refused by name, replaced whole.
    let unknown = as_admin(
        &app,
        &admin,
        Method::PUT,
        "/api/admin/collections/legal/grants",
        Some(json!([{"user": "ghost", "access": "read"}])),
    )
    .await;
    assert_eq!(
        (unknown.status, code(&unknown)),
        (400, "unknown_name".to_owned())
    );
    assert!(unknown.text().contains("ghost"), "{}", unknown.text());
    let unknown = as_admin(
        &app,
        &admin,
        Method::PUT,
        "/api/admin/collections/legal/grants",
        Some(json!([{"group": "phantoms", "access": "read"}])),
    )
    .await;
    assert!(unknown.text().contains("phantoms"), "{}", unknown.text());
    for bad in [
        json!([{"user": "ann", "group": "everyone", "access": "read"}]),
        json!([{"access": "read"}]),
        json!([{"user": "ann", "access": "own"}]),
        json!({"user": "ann"}),
    ] {
        let refused = as_admin(
            &app,
            &admin,
            Method::PUT,
            "/api/admin/collections/legal/grants",
            Some(bad.clone()),
        )
        .await;
        assert_eq!(
            (refused.status, code(&refused)),
            (400, "invalid_json".to_owned()),
            "{bad}"
        );
    }
    let granted = as_admin(&app, &admin, Method::PUT, "/api/admin/collections/legal/grants",
        Some(json!([{"user": "ann", "access": "read"}, {"user": "ann", "access": "write"}, {"group": "everyone", "access": "read"}]))).await;
    assert_eq!(granted.status, 200, "{}", granted.text());
    assert_eq!(
        granted.json()["collection"]["grants"],
        json!([{"user": "ann", "access": "write"}, {"group": "everyone", "access": "read"}])
    );
    let ann = Credential::Cookie(app.sign_in("ann").await);
    let seen = app
        .call(Method::GET, "/api/collections", &ann, None)
        .await
        .json();
    assert_eq!(
        seen["collections"],
        json!([
            {"name": "default", "description": "Documents imported without a collection", "documents": 0, "chunks": 0, "access": "read"},
            {"name": "legal", "description": "Signed contracts", "documents": 0, "chunks": 0, "access": "write"},
        ])
    );

    // A member on the admin routes.
    let refused = app
        .call(
            Method::POST,
            "/api/admin/collections",
            &ann,
            Some(json!({"name": "mine"})),
        )
        .await;
    assert_eq!(refused.status, 403);

    // Deleting takes the documents and their chunks, from the database and the index.
    let stored = app.call(Method::POST, "/api/documents", &ann,
        Some(json!({"title": "Lease", "content": "The lease runs ten years.", "collection": "legal"}))).await;
    assert_eq!(stored.status, 201, "{}", stored.text());
    let id = stored.json()["id"].as_i64().unwrap();
    assert!(eventually(async || app.indexed_chunks(id) == 1).await);
    let deleted = as_admin(
        &app,
        &admin,
        Method::DELETE,
        "/api/admin/collections/legal",
        None,
    )
    .await;
    assert_eq!(deleted.status, 204, "{}", deleted.text());
    assert_eq!(
        app.indexed_chunks(id),
        0,
        "gone from this instance's index at once"
    );
    let passage = as_admin(
        &app,
        &admin,
        Method::GET,
        &format!("/api/documents/{id}"),
        None,
    )
    .await;
    assert_eq!(passage.status, 404);
    let again = as_admin(
        &app,
        &admin,
        Method::DELETE,
        "/api/admin/collections/legal",
        None,
    )
    .await;
    assert_eq!(again.status, 404);
    let seen = app
        .call(Method::GET, "/api/collections", &ann, None)
        .await
        .json();
    assert_eq!(seen["collections"].as_array().unwrap().len(), 1);
}

#[actix_web::test]
async fn groups_hold_members_and_everyone_is_built_in() {
    let app = TestApp::spawn_with_accounts(&[]).await;
    let admin = signed_in_admin(&app).await;
    app.add_user("ann", Role::Member).await;
    app.add_user("bob", Role::Member).await;

    let made = as_admin(
        &app,
        &admin,
        Method::POST,
        "/api/admin/groups",
        Some(json!({"name": "Engineering Team"})),
    )
    .await;
    assert_eq!(made.status, 201, "{}", made.text());
    let again = as_admin(
        &app,
        &admin,
        Method::POST,
        "/api/admin/groups",
        Some(json!({"name": "Engineering Team"})),
    )
    .await;
    assert_eq!((again.status, code(&again)), (409, "name_taken".to_owned()));
    for bad in ["", "  ", "tab\there", &"x".repeat(65)] {
        let refused = as_admin(
            &app,
            &admin,
            Method::POST,
            "/api/admin/groups",
            Some(json!({"name": bad})),
        )
        .await;
        assert_eq!(
            (refused.status, code(&refused)),
            (400, "invalid_name".to_owned()),
            "{bad:?}"
        );
    }
    let path = "/api/admin/groups/Engineering%20Team/members";
    let set = as_admin(
        &app,
        &admin,
        Method::PUT,
        path,
        Some(json!(["bob", "ann", "ann"])),
    )
    .await;
    assert_eq!(set.status, 200, "{}", set.text());
    assert_eq!(set.json()["group"]["members"], json!(["ann", "bob"]));
    let unknown = as_admin(
        &app,
        &admin,
        Method::PUT,
        path,
        Some(json!(["ann", "ghost"])),
    )
    .await;
    assert_eq!(
        (unknown.status, code(&unknown)),
        (400, "unknown_name".to_owned())
    );
    assert!(unknown.text().contains("ghost"));
    let not_a_list = as_admin(
        &app,
        &admin,
        Method::PUT,
        path,
        Some(json!({"members": ["ann"]})),
    )
    .await;
    assert_eq!(
        (not_a_list.status, code(&not_a_list)),
        (400, "invalid_json".to_owned())
    );
    let users = as_admin(&app, &admin, Method::GET, "/api/admin/users", None)
        .await
        .json();
    let ann = users["users"]
        .as_array()
        .unwrap()
        .iter()
        .find(|u| u["username"] == "ann")
        .cloned()
        .unwrap();
    assert_eq!(ann["groups"], json!(["Engineering Team"]));

    let listed = as_admin(&app, &admin, Method::GET, "/api/admin/groups", None)
        .await
        .json();
    assert_eq!(
        listed["groups"],
        json!([
            {"name": "Engineering Team", "built_in": false, "members": ["ann", "bob"]},
            {"name": "everyone", "built_in": true, "members": []},
        ])
    );
    let everyone = as_admin(
        &app,
        &admin,
        Method::PUT,
        "/api/admin/groups/everyone/members",
        Some(json!(["ann"])),
    )
    .await;
    assert_eq!(
        (everyone.status, code(&everyone)),
        (409, "built_in".to_owned())
    );
    let everyone = as_admin(
        &app,
        &admin,
        Method::DELETE,
        "/api/admin/groups/everyone",
        None,
    )
    .await;
    assert_eq!(
        (everyone.status, code(&everyone)),
        (409, "built_in".to_owned())
    );

    let deleted = as_admin(
        &app,
        &admin,
        Method::DELETE,
        "/api/admin/groups/Engineering%20Team",
        None,
    )
    .await;
    assert_eq!(deleted.status, 204);
    let deleted = as_admin(
        &app,
        &admin,
        Method::DELETE,
        "/api/admin/groups/Engineering%20Team",
        None,
    )
    .await;
    assert_eq!(deleted.status, 404);
}

#[actix_web::test]
async fn a_grant_changed_on_one_instance_holds_on_the_other() {
    let first = TestApp::spawn_with_accounts(&[]).await;
    let second = first.spawn_sharing(&[("BOR_AUTH", "accounts")]).await;
    let admin = signed_in_admin(&first).await;
    first.add_user("ann", Role::Member).await;
    as_admin(
        &first,
        &admin,
        Method::POST,
        "/api/admin/collections",
        Some(json!({"name": "hr"})),
    )
    .await;
    let ann = Credential::Cookie(second.sign_in("ann").await);
    let sees_hr = async |app: &TestApp| {
        let listed = app
            .call(Method::GET, "/api/collections", &ann, None)
            .await
            .json();
        listed["collections"]
            .as_array()
            .unwrap()
            .iter()
            .any(|c| c["name"] == "hr")
    };
    assert!(!sees_hr(&second).await);

    let granted = as_admin(
        &first,
        &admin,
        Method::PUT,
        "/api/admin/collections/hr/grants",
        Some(json!([{"user": "ann", "access": "read"}])),
    )
    .await;
    assert_eq!(granted.status, 200);
    assert!(
        eventually(async || sees_hr(&second).await).await,
        "the grant reached the other instance"
    );

    as_admin(
        &first,
        &admin,
        Method::PUT,
        "/api/admin/collections/hr/grants",
        Some(json!([])),
    )
    .await;
    assert!(
        eventually(async || !sees_hr(&second).await).await,
        "the revocation too"
    );

    // Through a group: membership given on one instance.
    as_admin(
        &first,
        &admin,
        Method::POST,
        "/api/admin/groups",
        Some(json!({"name": "staff"})),
    )
    .await;
    as_admin(
        &first,
        &admin,
        Method::PUT,
        "/api/admin/collections/hr/grants",
        Some(json!([{"group": "staff", "access": "read"}])),
    )
    .await;
    assert!(!sees_hr(&second).await);
    as_admin(
        &first,
        &admin,
        Method::PUT,
        "/api/admin/groups/staff/members",
        Some(json!(["ann"])),
    )
    .await;
    assert!(
        eventually(async || sees_hr(&second).await).await,
        "the membership reached the other instance"
    );
}
