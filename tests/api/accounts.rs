//! Accounts (docs/PROTOCOL.md, "Accounts"): signing in and out, sessions and keys, who
//! may reach what, and every refusal, against a real PostgreSQL.

use awc::http::Method;
use bor::db::users::Role;
use serde_json::{Value, json};

use crate::support::*;

const SERVICE_TOKEN: &str = "service-token-5521";

fn cookie(value: &str) -> Credential {
    Credential::Cookie(value.to_owned())
}

fn bearer(token: &str) -> Credential {
    Credential::Bearer(token.to_owned())
}

async fn me(app: &TestApp, credential: &Credential) -> Reply {
    app.call(Method::GET, "/api/auth/me", credential, None)
        .await
}

async fn patch_user(app: &TestApp, credential: &Credential, id: &str, change: Value) -> Reply {
    let path = format!("/api/admin/users/{id}");
    app.call(Method::PATCH, &path, credential, Some(change))
        .await
}

fn code(reply: &Reply) -> String {
    reply.json()["error"]["code"]
        .as_str()
        .unwrap_or("")
        .to_owned()
}

#[actix_web::test]
async fn a_user_signs_in_is_known_and_signs_out() {
    let app = TestApp::spawn_with_accounts(&[]).await;
    let id = app.add_user("Ann", Role::Member).await;

    let login = app.login("ann", PASSWORD).await;
    assert_eq!(login.status, 200, "{}", login.text());
    assert_eq!(
        login.json(),
        json!({"user": {"id": id, "username": "Ann", "display_name": "Ann", "role": "member"}})
    );
    let set_cookie = login.headers.get("set-cookie").unwrap().to_str().unwrap();
    for attribute in ["HttpOnly", "SameSite=Lax", "Path=/"] {
        assert!(set_cookie.contains(attribute), "{set_cookie}");
    }
    assert!(
        !set_cookie.contains("Secure"),
        "no Secure cookie over http: {set_cookie}"
    );
    let session = session_cookie(&login).unwrap();

    let known = me(&app, &cookie(&session)).await;
    assert_eq!(known.status, 200);
    assert_eq!(known.json()["user"]["id"], json!(id));

    let out = app
        .call(Method::POST, "/api/auth/logout", &cookie(&session), None)
        .await;
    assert_eq!(out.status, 204);
    let after = me(&app, &cookie(&session)).await;
    assert_eq!(after.status, 401);
    assert_eq!(code(&after), "unauthorized");
}

#[actix_web::test]
async fn the_cookie_is_secure_when_bor_is_reached_over_https() {
    let app = TestApp::spawn_with_accounts(&[("BOR_PUBLIC_URL", "https://bor.example.com")]).await;
    app.add_user("ann", Role::Member).await;
    let login = app.login("ann", PASSWORD).await;
    let set_cookie = login.headers.get("set-cookie").unwrap().to_str().unwrap();
    assert!(set_cookie.contains("Secure"), "{set_cookie}");
}

#[actix_web::test]
async fn an_unknown_user_and_a_wrong_password_get_one_answer_and_one_hash_each() {
    let app = TestApp::spawn_with_accounts(&[]).await;
    app.add_user("ann", Role::Member).await;
    let verifier = &app.state.accounts.verifier;

    let before = verifier.verifications();
    let wrong = app.login("ann", "not the password at all").await;
    assert_eq!(verifier.verifications(), before + 1);
    let unknown = app.login("nobody", PASSWORD).await;
    assert_eq!(
        verifier.verifications(),
        before + 2,
        "an unknown user still costs a password hash"
    );
    assert_eq!(wrong.status, 401);
    assert_eq!(unknown.status, 401);
    assert_eq!(wrong.body, unknown.body);
    assert_eq!(code(&wrong), "invalid_credentials");
    assert!(session_cookie(&wrong).is_none());
}

#[actix_web::test]
async fn five_failures_for_a_username_then_429_with_retry_after() {
    let app = TestApp::spawn_with_accounts(&[]).await;
    app.add_user("ann", Role::Member).await;
    for _ in 0..5 {
        assert_eq!(app.login("ann", "wrong password!!").await.status, 401);
    }
    let limited = app.login("ann", PASSWORD).await;
    assert_eq!(limited.status, 429, "{}", limited.text());
    assert_eq!(code(&limited), "too_many_attempts");
    let wait: u64 = limited
        .headers
        .get("retry-after")
        .unwrap()
        .to_str()
        .unwrap()
        .parse()
        .unwrap();
    assert!((1..=15 * 60).contains(&wait), "{wait}");
    // The address has its five failures too: another username from it is refused.
    app.add_user("bob", Role::Member).await;
    assert_eq!(app.login("bob", PASSWORD).await.status, 429);
}

/// `POST /api/auth/login` from the client address `from` (another loopback address
/// than the one the other requests come from).
async fn login_from(app: &TestApp, from: &str, username: &str, password: &str) -> Reply {
    let connector = awc::Connector::new().local_address(from.parse().unwrap());
    let client = awc::Client::builder().connector(connector).finish();
    let response = client
        .post(format!("{}/api/auth/login", app.address))
        .send_json(&json!({"username": username, "password": password}))
        .await
        .unwrap();
    Reply::read(response).await
}

#[actix_web::test]
async fn one_key_for_a_username_in_the_limiter_the_lookup_and_the_unique_index() {
    let app = TestApp::spawn_with_accounts(&[]).await;
    app.add_user("root", Role::Admin).await;
    app.add_user("iris", Role::Member).await;
    let admin = cookie(&app.sign_in("root").await);
    for _ in 0..5 {
        assert_eq!(app.login("iris", "wrong password!!").await.status, 401);
    }
    // From another address, every spelling the account lookup takes for `iris` is
    // locked too; `İris` (lower case `i̇ris`) is another name, with no account.
    assert_eq!(
        login_from(&app, "127.0.0.2", "IRIS", PASSWORD).await.status,
        429
    );
    let dotted = login_from(&app, "127.0.0.2", "İris", PASSWORD).await;
    assert_eq!(
        (dotted.status, code(&dotted).as_str()),
        (401, "invalid_credentials"),
        "{}",
        dotted.text()
    );

    // The unique index holds the same key: `IRIS` is taken, `İris` is not.
    let make = async |username: &str| {
        app.call(
            Method::POST,
            "/api/admin/users",
            &admin,
            Some(json!({"username": username, "role": "member", "password": PASSWORD})),
        )
        .await
    };
    let taken = make("IRIS").await;
    assert_eq!(
        (taken.status, code(&taken).as_str()),
        (409, "username_taken")
    );
    let other = make("İris").await;
    assert_eq!(other.status, 201, "{}", other.text());
    let signed_in = login_from(&app, "127.0.0.3", "İRIS", PASSWORD).await;
    assert_eq!(signed_in.status, 200, "{}", signed_in.text());
    assert_eq!(signed_in.json()["user"]["username"], "İris");
}

#[actix_web::test]
async fn forged_expired_and_revoked_credentials_are_401() {
    let app = TestApp::spawn_with_accounts(&[]).await;
    let id = app.add_user("ann", Role::Member).await;
    let session = app.sign_in("ann").await;

    for forged in [
        "",
        "x",
        &"0".repeat(64),
        &format!("{session}0"),
        &session.to_uppercase(),
    ] {
        assert_eq!(
            me(&app, &cookie(forged)).await.status,
            401,
            "cookie {forged:?}"
        );
    }
    for forged in [
        "bor_",
        "bor_nothex",
        &format!("bor_{}", "a".repeat(64)),
        "sk-whatever",
    ] {
        let reply = me(&app, &bearer(forged)).await;
        assert_eq!(reply.status, 401, "key {forged:?}");
        assert_eq!(code(&reply), "unauthorized");
    }

    // A session whose time is over, written as another instance would.
    let expired_secret = "e".repeat(64);
    let hash = {
        use sha2::Digest;
        sha2::Sha256::digest(expired_secret.as_bytes())
            .iter()
            .map(|byte| format!("{byte:02x}"))
            .collect::<String>()
    };
    let mut conn = app.pool.get().await.unwrap();
    bor::db::sessions::insert(
        &mut conn,
        &bor::db::sessions::SessionRow {
            id: uuid::Uuid::new_v4(),
            user_id: id.parse().unwrap(),
            secret_sha256: hash,
            created_at: chrono::Utc::now() - chrono::TimeDelta::days(31),
            expires_at: chrono::Utc::now() - chrono::TimeDelta::seconds(1),
        },
    )
    .await
    .unwrap();
    assert_eq!(me(&app, &cookie(&expired_secret)).await.status, 401);

    let (key_id, key) = app.make_key(&session, "script").await;
    assert_eq!(me(&app, &bearer(&key)).await.status, 200);
    let revoked = app.revoke_key(&session, &key_id).await;
    assert_eq!(revoked.status, 204);
    assert_eq!(me(&app, &bearer(&key)).await.status, 401, "revoked at once");
}

#[actix_web::test]
async fn keys_are_listed_without_the_key_and_are_their_owners_own() {
    let app = TestApp::spawn_with_accounts(&[]).await;
    app.add_user("ann", Role::Member).await;
    app.add_user("bob", Role::Member).await;
    let ann = app.sign_in("ann").await;
    let bob = app.sign_in("bob").await;
    let (key_id, key) = app.make_key(&ann, "laptop").await;
    assert!(key.starts_with("bor_"));

    let listed = app
        .call(Method::GET, "/api/keys", &cookie(&ann), None)
        .await;
    assert_eq!(listed.status, 200);
    let keys = listed.json()["keys"].clone();
    assert_eq!(keys.as_array().unwrap().len(), 1);
    assert_eq!(keys[0]["id"], json!(key_id));
    assert_eq!(keys[0]["name"], "laptop");
    assert_eq!(keys[0]["prefix"], json!(&key[..12]));
    assert!(
        !listed.text().contains(&key[12..]),
        "the key itself is never listed"
    );

    let bobs = app
        .call(Method::GET, "/api/keys", &cookie(&bob), None)
        .await;
    assert_eq!(bobs.json()["keys"], json!([]));
    let not_bobs = app.revoke_key(&bob, &key_id).await;
    assert_eq!(not_bobs.status, 404);
    let absent = app
        .call(
            Method::DELETE,
            &format!("/api/keys/{}", uuid::Uuid::new_v4()),
            &cookie(&bob),
            None,
        )
        .await;
    assert_eq!(
        (absent.status, absent.body),
        (not_bobs.status, not_bobs.body.clone())
    );
    assert_eq!(me(&app, &bearer(&key)).await.status, 200, "still Ann's");

    for bad in [json!({"name": ""}), json!({"name": "x".repeat(101)})] {
        let refused = app
            .call(Method::POST, "/api/keys", &cookie(&ann), Some(bad))
            .await;
        assert_eq!(
            (refused.status, code(&refused).as_str()),
            (400, "invalid_name")
        );
    }
}

#[actix_web::test]
async fn every_api_route_but_health_and_sign_in_needs_a_caller_and_pages_send_to_login() {
    let app = TestApp::spawn_with_accounts(&[]).await;
    for path in [
        "/api/documents",
        "/api/conversations",
        "/api/auth/me",
        "/api/keys",
        "/api/openapi.json",
    ] {
        let reply = app.call(Method::GET, path, &Credential::Nobody, None).await;
        assert_eq!(
            (reply.status, code(&reply).as_str()),
            (401, "unauthorized"),
            "{path}"
        );
    }
    let chat = app.chat("hello").await;
    assert_eq!((chat.status, chat.error_code()), (401, "unauthorized"));
    let models = app
        .call(Method::GET, "/v1/models", &Credential::Nobody, None)
        .await;
    assert_eq!(models.status, 401);
    assert_eq!(models.json()["error"]["code"], "unauthorized");
    assert!(
        models.json()["error"]["type"].is_string(),
        "the OpenAI shape: {}",
        models.text()
    );

    assert_eq!(app.get("/api/health", None).await.status, 200);
    let monitor = app.get("/api/health", Some("a-monitor-token")).await;
    assert_eq!(
        monitor.status, 200,
        "health answers whatever credential comes along"
    );
    assert_eq!(app.get("/login", None).await.status, 200);
    assert_eq!(app.get("/static/style.css", None).await.status, 200);
    for (page, next) in [
        ("/", "%2F"),
        ("/admin", "%2Fadmin"),
        ("/admin/people", "%2Fadmin%2Fpeople"),
        ("/documents/4?x=1", "%2Fdocuments%2F4%3Fx%3D1"),
    ] {
        let reply = app.call(Method::GET, page, &Credential::Nobody, None).await;
        assert_eq!(reply.status, 302, "{page}");
        assert_eq!(
            reply.headers.get("location").unwrap().to_str().unwrap(),
            format!("/login?next={next}")
        );
    }
    app.add_user("ann", Role::Member).await;
    let session = app.sign_in("ann").await;
    let page = app.call(Method::GET, "/", &cookie(&session), None).await;
    assert_eq!(page.status, 200);
}

#[actix_web::test]
async fn an_api_key_serves_v1_and_the_api() {
    let app = TestApp::spawn_with_accounts(&[]).await;
    app.add_user("ann", Role::Member).await;
    let session = app.sign_in("ann").await;
    let (_, key) = app.make_key(&session, "openai client").await;
    let models = app
        .call(Method::GET, "/v1/models", &bearer(&key), None)
        .await;
    assert_eq!(models.status, 200, "{}", models.text());
    let completion = app
        .call(
            Method::POST,
            "/v1/chat/completions",
            &bearer(&key),
            Some(json!({"model": "bor", "messages": [{"role": "user", "content": "hello"}]})),
        )
        .await;
    assert_eq!(completion.status, 200, "{}", completion.text());
    let documents = app
        .call(Method::GET, "/api/documents", &bearer(&key), None)
        .await;
    assert_eq!(documents.status, 200);
}

#[actix_web::test]
async fn a_cookie_change_from_another_origin_is_403_and_a_key_is_not_judged() {
    let app = TestApp::spawn_with_accounts(&[]).await;
    app.add_user("ann", Role::Member).await;
    let session = app.sign_in("ann").await;
    let body = Some(json!({"name": "k"}));
    let forged = Credential::CookieFrom(session.clone(), "http://evil.example".to_owned());
    let refused = app
        .call(Method::POST, "/api/keys", &forged, body.clone())
        .await;
    assert_eq!(
        (refused.status, code(&refused).as_str()),
        (403, "forbidden_origin")
    );
    let logout = app
        .call(Method::POST, "/api/auth/logout", &forged, None)
        .await;
    assert_eq!(
        logout.status, 403,
        "a forged sign-out does not end the session"
    );
    assert_eq!(me(&app, &cookie(&session)).await.status, 200);

    // No Origin and no Referer: refused too.
    let mut bare = TestApp::client()
        .post(format!("{}/api/keys", app.address))
        .insert_header(("Cookie", format!("bor_session={session}")))
        .send_json(&json!({"name": "k"}))
        .await
        .unwrap();
    assert_eq!(bare.status().as_u16(), 403);
    let bare: Value = bare.json().await.unwrap();
    assert_eq!(bare["error"]["code"], "forbidden_origin");

    // A read needs no origin; a key is not a cookie a browser sends by itself.
    let read = app.call(Method::GET, "/api/keys", &forged, None).await;
    assert_eq!(read.status, 200);
    let (_, key) = app.make_key(&session, "script").await;
    assert_eq!(
        app.call(Method::POST, "/api/keys", &bearer(&key), body)
            .await
            .status,
        201
    );
}

#[actix_web::test]
async fn the_admin_api_takes_admins_and_the_service_token_only() {
    let app = TestApp::spawn_with_accounts(&[("BOR_ADMIN_TOKEN", SERVICE_TOKEN)]).await;
    app.add_user("root", Role::Admin).await;
    app.add_user("ann", Role::Member).await;
    let admin = app.sign_in("root").await;
    let member = app.sign_in("ann").await;
    let (_, member_key) = app.make_key(&member, "k").await;

    let nobody = app
        .call(Method::GET, "/api/admin/users", &Credential::Nobody, None)
        .await;
    assert_eq!(
        (nobody.status, code(&nobody).as_str()),
        (401, "unauthorized")
    );
    for credential in [cookie(&member), bearer(&member_key)] {
        let refused = app
            .call(Method::GET, "/api/admin/users", &credential, None)
            .await;
        assert_eq!(
            (refused.status, code(&refused).as_str()),
            (403, "forbidden")
        );
    }
    let reindex = app
        .call(Method::POST, "/api/admin/reindex", &cookie(&member), None)
        .await;
    assert_eq!(reindex.status, 403);
    for credential in [cookie(&admin), bearer(SERVICE_TOKEN)] {
        let listed = app
            .call(Method::GET, "/api/admin/users", &credential, None)
            .await;
        assert_eq!(listed.status, 200, "{}", listed.text());
        assert_eq!(listed.json()["users"].as_array().unwrap().len(), 2);
    }
    let health = app
        .call(Method::GET, "/api/admin/health", &cookie(&admin), None)
        .await;
    assert_ne!(health.status, 401);
    assert_ne!(health.status, 403);
    // The service token is for the admin API only.
    let elsewhere = me(&app, &bearer(SERVICE_TOKEN)).await;
    assert_eq!(elsewhere.status, 401);
}

#[actix_web::test]
async fn admins_make_change_and_delete_users_but_never_the_last_admin() {
    let app = TestApp::spawn_with_accounts(&[]).await;
    let root_id = app.add_user("root", Role::Admin).await;
    let admin = cookie(&app.sign_in("root").await);

    let made = app
        .call(
            Method::POST,
            "/api/admin/users",
            &admin,
            Some(json!({"username": "Cleo", "role": "member"})),
        )
        .await;
    assert_eq!(made.status, 201, "{}", made.text());
    let password = made.json()["password"].as_str().unwrap().to_owned();
    let cleo_id = made.json()["user"]["id"].as_str().unwrap().to_owned();
    assert_eq!(app.login("cleo", &password).await.status, 200);
    let taken = app
        .call(
            Method::POST,
            "/api/admin/users",
            &admin,
            Some(json!({"username": "CLEO", "role": "admin"})),
        )
        .await;
    assert_eq!(
        (taken.status, code(&taken).as_str()),
        (409, "username_taken")
    );
    for (body, expected) in [
        (
            json!({"username": "no spaces", "role": "member"}),
            "invalid_username",
        ),
        (
            json!({"username": "dan", "role": "member", "password": "short"}),
            "invalid_password",
        ),
        (json!({"username": "dan", "role": "owner"}), "invalid_json"),
    ] {
        let refused = app
            .call(Method::POST, "/api/admin/users", &admin, Some(body))
            .await;
        assert_eq!((refused.status, code(&refused).as_str()), (400, expected));
    }

    for change in [json!({"role": "member"}), json!({"disabled": true})] {
        let refused = patch_user(&app, &admin, &root_id, change).await;
        assert_eq!(
            (refused.status, code(&refused).as_str()),
            (409, "last_admin")
        );
    }
    let refused = app
        .call(
            Method::DELETE,
            &format!("/api/admin/users/{root_id}"),
            &admin,
            None,
        )
        .await;
    assert_eq!(
        (refused.status, code(&refused).as_str()),
        (409, "last_admin")
    );

    let promoted = patch_user(
        &app,
        &admin,
        &cleo_id,
        json!({"role": "admin", "display_name": "Cleo P."}),
    )
    .await;
    assert_eq!(promoted.status, 200, "{}", promoted.text());
    assert_eq!(promoted.json()["role"], "admin");
    assert_eq!(promoted.json()["display_name"], "Cleo P.");
    let first_session = app.sign_in_with("cleo", &password).await;
    let reset = patch_user(
        &app,
        &admin,
        &cleo_id,
        json!({"password": "a password set by root"}),
    )
    .await;
    assert_eq!(reset.status, 200);
    assert_eq!(
        me(&app, &cookie(&first_session)).await.status,
        401,
        "a new password ends the sessions"
    );
    let password = "a password set by root".to_owned();
    let cleo_session = app.sign_in_with("cleo", &password).await;
    let (_, cleo_key) = app.make_key(&cleo_session, "k").await;
    let cleo = cookie(&cleo_session);
    let demoted_root = patch_user(&app, &cleo, &root_id, json!({"role": "member"})).await;
    assert_eq!(demoted_root.status, 200, "another admin is left");

    let absent = app
        .call(
            Method::DELETE,
            &format!("/api/admin/users/{}", uuid::Uuid::new_v4()),
            &cleo,
            None,
        )
        .await;
    assert_eq!(absent.status, 404);
    let deleted = app
        .call(
            Method::DELETE,
            &format!("/api/admin/users/{root_id}"),
            &cleo,
            None,
        )
        .await;
    assert_eq!(deleted.status, 204);
    assert_eq!(
        me(&app, &admin).await.status,
        401,
        "their sessions went with them"
    );
    assert_eq!(me(&app, &bearer(&cleo_key)).await.status, 200);
}

#[actix_web::test]
async fn a_disabled_user_is_refused_at_once_with_session_and_key() {
    let app = TestApp::spawn_with_accounts(&[]).await;
    app.add_user("root", Role::Admin).await;
    let ann_id = app.add_user("ann", Role::Member).await;
    let admin = cookie(&app.sign_in("root").await);
    let ann = app.sign_in("ann").await;
    let (_, key) = app.make_key(&ann, "k").await;

    let disabled = patch_user(&app, &admin, &ann_id, json!({"disabled": true})).await;
    assert_eq!(disabled.status, 200, "{}", disabled.text());
    assert_eq!(me(&app, &cookie(&ann)).await.status, 401);
    assert_eq!(me(&app, &bearer(&key)).await.status, 401);
    assert_eq!(app.login("ann", PASSWORD).await.status, 401);
}

#[actix_web::test]
async fn disabling_or_a_new_password_from_an_admin_ends_sessions_and_keys_for_good() {
    let app = TestApp::spawn_with_accounts(&[]).await;
    app.add_user("root", Role::Admin).await;
    let ann_id = app.add_user("ann", Role::Member).await;
    let bob_id = app.add_user("bob", Role::Member).await;
    let admin = cookie(&app.sign_in("root").await);

    // Disabled, then enabled again: nothing comes back.
    let ann = app.sign_in("ann").await;
    let (_, ann_key) = app.make_key(&ann, "k").await;
    let disabled = patch_user(&app, &admin, &ann_id, json!({"disabled": true})).await;
    assert_eq!(disabled.status, 200, "{}", disabled.text());
    let enabled = patch_user(&app, &admin, &ann_id, json!({"disabled": false})).await;
    assert_eq!(enabled.status, 200, "{}", enabled.text());
    assert_eq!(me(&app, &cookie(&ann)).await.status, 401, "the session");
    assert_eq!(me(&app, &bearer(&ann_key)).await.status, 401, "the key");
    let keys = app
        .call(
            Method::GET,
            &format!("/api/admin/users/{ann_id}/keys"),
            &admin,
            None,
        )
        .await;
    assert_eq!(keys.json()["keys"], json!([]), "the key is gone");
    assert_eq!(app.login("ann", PASSWORD).await.status, 200);

    // An admin's new password.
    let bob = app.sign_in("bob").await;
    let (_, bob_key) = app.make_key(&bob, "k").await;
    let reset = patch_user(
        &app,
        &admin,
        &bob_id,
        json!({"password": "a new password from the admin"}),
    )
    .await;
    assert_eq!(reset.status, 200, "{}", reset.text());
    assert_eq!(me(&app, &cookie(&bob)).await.status, 401, "the session");
    assert_eq!(me(&app, &bearer(&bob_key)).await.status, 401, "the key");
    assert_eq!(me(&app, &admin).await.status, 200, "other people's stay");
}

#[actix_web::test]
async fn a_key_may_expire() {
    let app = TestApp::spawn_with_accounts(&[]).await;
    app.add_user("ann", Role::Member).await;
    let ann = cookie(&app.sign_in("ann").await);
    let make = async |expires_at: Value| {
        app.call(
            Method::POST,
            "/api/keys",
            &ann,
            Some(json!({"name": "k", "expires_at": expires_at})),
        )
        .await
    };

    for bad in [json!("2020-01-01T00:00:00Z"), json!("tomorrow"), json!(7)] {
        let refused = make(bad.clone()).await;
        assert_eq!(
            (refused.status, code(&refused).as_str()),
            (400, "invalid_json"),
            "{bad}"
        );
    }
    let expires_at = chrono::Utc::now() + chrono::TimeDelta::seconds(2);
    let made = make(json!(expires_at)).await;
    assert_eq!(made.status, 201, "{}", made.text());
    let key = made.json()["key"].as_str().unwrap_or_default().to_owned();
    assert!(made.json()["expires_at"].is_string());
    let forever = make(Value::Null).await;
    assert_eq!(forever.json()["expires_at"], Value::Null);
    let forever_key = forever.json()["key"]
        .as_str()
        .unwrap_or_default()
        .to_owned();

    let listed = app.call(Method::GET, "/api/keys", &ann, None).await;
    let expiries: Vec<bool> = listed.json()["keys"]
        .as_array()
        .map(|keys| keys.iter().map(|key| key["expires_at"].is_null()).collect())
        .unwrap_or_default();
    assert_eq!(expiries, [true, false], "newest first");
    assert_eq!(me(&app, &bearer(&key)).await.status, 200);
    assert!(
        eventually_within(std::time::Duration::from_secs(10), async || {
            me(&app, &bearer(&key)).await.status == 401
        })
        .await,
        "the key is refused once it has expired"
    );
    assert_eq!(me(&app, &bearer(&forever_key)).await.status, 200);
}

#[actix_web::test]
async fn admins_list_and_revoke_anyones_keys_and_see_their_last_use() {
    let app = TestApp::spawn_with_accounts(&[]).await;
    app.add_user("root", Role::Admin).await;
    let ann_id = app.add_user("ann", Role::Member).await;
    let bob_id = app.add_user("bob", Role::Member).await;
    let admin = cookie(&app.sign_in("root").await);
    let ann = app.sign_in("ann").await;
    let bob = cookie(&app.sign_in("bob").await);
    let (key_id, key) = app.make_key(&ann, "laptop").await;
    let (_, other_key) = app.make_key(&ann, "phone").await;
    let keys_of = |id: &str| format!("/api/admin/users/{id}/keys");

    assert_eq!(me(&app, &bearer(&key)).await.status, 200);
    assert!(
        eventually(async || {
            let listed = app.call(Method::GET, &keys_of(&ann_id), &admin, None).await;
            let keys = listed.json()["keys"].clone();
            keys.as_array().is_some_and(|keys| {
                keys.iter().any(|listed| {
                    listed["id"] == json!(key_id) && listed["last_used_at"].is_string()
                })
            })
        })
        .await,
        "the admin's list shows when the key was last used"
    );
    let owners = app
        .call(Method::GET, "/api/keys", &cookie(&ann), None)
        .await;
    let owners = owners.json();
    let owners_key = owners["keys"]
        .as_array()
        .and_then(|keys| keys.iter().find(|listed| listed["id"] == json!(key_id)));
    assert!(
        owners_key.is_some_and(|listed| listed["last_used_at"].is_string()),
        "and the owner's: {owners}"
    );
    let listed = app.call(Method::GET, &keys_of(&ann_id), &admin, None).await;
    assert!(!listed.text().contains(&key[12..]), "never the key itself");

    let member = app.call(Method::GET, &keys_of(&ann_id), &bob, None).await;
    assert_eq!((member.status, code(&member).as_str()), (403, "forbidden"));
    let by_member = app
        .call(
            Method::DELETE,
            &format!("{}/{key_id}", keys_of(&ann_id)),
            &bob,
            None,
        )
        .await;
    assert_eq!(by_member.status, 403);
    let unknown = app
        .call(
            Method::GET,
            &keys_of(&uuid::Uuid::new_v4().to_string()),
            &admin,
            None,
        )
        .await;
    assert_eq!(
        (unknown.status, code(&unknown).as_str()),
        (404, "not_found")
    );
    let not_bobs = app
        .call(
            Method::DELETE,
            &format!("{}/{key_id}", keys_of(&bob_id)),
            &admin,
            None,
        )
        .await;
    assert_eq!(not_bobs.status, 404, "the key is Ann's, not Bob's");
    assert_eq!(me(&app, &bearer(&key)).await.status, 200);

    let revoked = app
        .call(
            Method::DELETE,
            &format!("{}/{key_id}", keys_of(&ann_id)),
            &admin,
            None,
        )
        .await;
    assert_eq!(revoked.status, 204, "{}", revoked.text());
    assert_eq!(me(&app, &bearer(&key)).await.status, 401);
    assert_eq!(me(&app, &bearer(&other_key)).await.status, 200);
    let service = app
        .call(Method::GET, &keys_of(&ann_id), &bearer(SERVICE_TOKEN), None)
        .await;
    assert_eq!(service.status, 401, "no service token is configured here");
}

#[actix_web::test]
async fn changing_the_password_ends_the_other_sessions() {
    let app = TestApp::spawn_with_accounts(&[]).await;
    app.add_user("ann", Role::Member).await;
    let here = app.sign_in("ann").await;
    let elsewhere = app.sign_in("ann").await;
    let (_, key) = app.make_key(&here, "k").await;
    let new = "a much longer new password";

    let change = |current: &str, new: &str| json!({"current": current, "new": new});
    let short = app
        .call(
            Method::POST,
            "/api/auth/password",
            &cookie(&here),
            Some(change(PASSWORD, "short")),
        )
        .await;
    assert_eq!(
        (short.status, code(&short).as_str()),
        (400, "invalid_password")
    );
    let wrong = app
        .call(
            Method::POST,
            "/api/auth/password",
            &cookie(&here),
            Some(change("not it at all", new)),
        )
        .await;
    assert_eq!(
        (wrong.status, code(&wrong).as_str()),
        (401, "invalid_credentials")
    );

    let changed = app
        .call(
            Method::POST,
            "/api/auth/password",
            &cookie(&here),
            Some(change(PASSWORD, new)),
        )
        .await;
    assert_eq!(changed.status, 204, "{}", changed.text());
    assert_eq!(me(&app, &cookie(&here)).await.status, 200);
    assert_eq!(me(&app, &cookie(&elsewhere)).await.status, 401);
    assert_eq!(me(&app, &bearer(&key)).await.status, 200, "keys are kept");
    assert_eq!(app.login("ann", PASSWORD).await.status, 401);
    assert_eq!(app.login("ann", new).await.status, 200);
}

#[actix_web::test]
async fn a_key_revoked_or_a_user_disabled_on_one_instance_is_refused_on_the_other() {
    let a = TestApp::spawn_with_accounts(&[]).await;
    let b = a.spawn_sharing(&[("BOR_AUTH", "accounts")]).await;
    a.add_user("root", Role::Admin).await;
    let ann_id = a.add_user("ann", Role::Member).await;
    let admin = cookie(&a.sign_in("root").await);
    let ann = a.sign_in("ann").await;
    let (key_id, key) = a.make_key(&ann, "k").await;
    let (_, other_key) = a.make_key(&ann, "k2").await;
    // Instance B knows them (from NOTIFY, or a first look-up).
    assert_eq!(me(&b, &bearer(&key)).await.status, 200);
    assert_eq!(me(&b, &bearer(&other_key)).await.status, 200);
    assert_eq!(me(&b, &cookie(&ann)).await.status, 200);

    let revoked = a.revoke_key(&ann, &key_id).await;
    assert_eq!(revoked.status, 204);
    assert!(
        eventually(async || me(&b, &bearer(&key)).await.status == 401).await,
        "instance B refuses the revoked key"
    );
    assert_eq!(me(&b, &bearer(&other_key)).await.status, 200);

    let disabled = patch_user(&a, &admin, &ann_id, json!({"disabled": true})).await;
    assert_eq!(disabled.status, 200);
    assert!(
        eventually(async || me(&b, &cookie(&ann)).await.status == 401).await,
        "instance B refuses the disabled user's session"
    );
    assert_eq!(me(&b, &bearer(&other_key)).await.status, 401);

    let out = b.call(Method::POST, "/api/auth/logout", &admin, None).await;
    assert_eq!(out.status, 204);
    assert!(
        eventually(async || me(&a, &admin).await.status == 401).await,
        "a sign-out on B ends the session on A"
    );
}

#[actix_web::test]
async fn serving_with_nobody_to_sign_in_says_how_to_make_the_first_admin() {
    let app = TestApp::spawn_with_accounts(&[]).await;
    let hint = "make the first admin with `bor user add NAME --admin`";
    assert_eq!(log_lines_containing(hint).len(), 1);
    app.add_user("root", Role::Admin).await;
    let _second = app.spawn_sharing(&[("BOR_AUTH", "accounts")]).await;
    assert_eq!(
        log_lines_containing(hint).len(),
        1,
        "not once there is a user"
    );
}

#[actix_web::test]
async fn off_mode_is_the_local_admin_without_signing_in() {
    let app = TestApp::spawn().await;
    let reply = me(&app, &Credential::Nobody).await;
    assert_eq!(reply.status, 200);
    assert_eq!(reply.json()["user"]["username"], "local");
    assert_eq!(reply.json()["user"]["role"], "admin");
    assert_eq!(app.get("/", None).await.status, 200);
}

#[actix_web::test]
async fn sessions_and_keys_are_checked_without_the_database() {
    let app = TestApp::spawn_with_db_proxy(&[("BOR_AUTH", "accounts")]).await;
    app.add_user("ann", Role::Member).await;
    let session = app.sign_in("ann").await;
    let (_, key) = app.make_key(&session, "k").await;
    app.db_proxy.as_ref().unwrap().cut();
    // With the database out of reach, a request that needed it would be 503.
    assert_eq!(me(&app, &bearer(&key)).await.status, 200);
    assert_eq!(me(&app, &cookie(&session)).await.status, 200);
    let unknown = me(&app, &bearer(&format!("bor_{}", "c".repeat(64)))).await;
    assert_eq!(
        unknown.status, 503,
        "a key it has not heard of is looked up"
    );
    app.db_proxy.as_ref().unwrap().restore();
}

#[actix_web::test]
async fn a_person_changes_their_own_display_name_and_only_theirs() {
    let app = TestApp::spawn_with_accounts(&[("BOR_ADMIN_TOKEN", SERVICE_TOKEN)]).await;
    app.add_user("ann", Role::Member).await;
    app.add_user("bob", Role::Member).await;
    let ann = app.sign_in("ann").await;
    let bob = app.sign_in("bob").await;
    let (_, key) = app.make_key(&ann, "k").await;
    let rename = |name: &str| Some(json!({"display_name": name}));

    let renamed = app
        .call(
            Method::PATCH,
            "/api/auth/me",
            &cookie(&ann),
            rename("  Ann Lee "),
        )
        .await;
    assert_eq!(renamed.status, 200, "{}", renamed.text());
    assert_eq!(renamed.json()["user"]["display_name"], "Ann Lee");
    assert_eq!(renamed.json()["user"]["username"], "ann");
    assert_eq!(
        me(&app, &bearer(&key)).await.json()["user"]["display_name"],
        "Ann Lee"
    );
    assert_eq!(
        me(&app, &cookie(&bob)).await.json()["user"]["display_name"],
        "bob"
    );

    // By key too; a name out of bounds, an unknown field or another field is refused.
    let by_key = app
        .call(Method::PATCH, "/api/auth/me", &bearer(&key), rename("Ann"))
        .await;
    assert_eq!(by_key.status, 200);
    for refused in [
        json!({"display_name": " "}),
        json!({"display_name": "x".repeat(65)}),
        json!({"display_name": "Ann", "role": "admin"}),
        json!({}),
    ] {
        let reply = app
            .call(
                Method::PATCH,
                "/api/auth/me",
                &cookie(&ann),
                Some(refused.clone()),
            )
            .await;
        assert_eq!(reply.status, 400, "{refused}: {}", reply.text());
    }
    assert_eq!(
        me(&app, &cookie(&ann)).await.json()["user"]["role"],
        "member"
    );

    // Nobody, the service token and a cookie from another site change nothing.
    let nobody = app
        .call(
            Method::PATCH,
            "/api/auth/me",
            &Credential::Nobody,
            rename("X"),
        )
        .await;
    assert_eq!(nobody.status, 401);
    let service = app
        .call(
            Method::PATCH,
            "/api/auth/me",
            &bearer(SERVICE_TOKEN),
            rename("X"),
        )
        .await;
    assert_eq!(service.status, 401);
    let forged = Credential::CookieFrom(ann.clone(), "http://evil.example".to_owned());
    let cross_site = app
        .call(Method::PATCH, "/api/auth/me", &forged, rename("X"))
        .await;
    assert_eq!(
        (cross_site.status, code(&cross_site).as_str()),
        (403, "forbidden_origin")
    );
    assert_eq!(
        me(&app, &cookie(&ann)).await.json()["user"]["display_name"],
        "Ann"
    );
}
