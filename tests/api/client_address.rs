//! The client's address behind a proxy (`BOR_TRUSTED_PROXIES`, docs/DEPLOY.md): from a
//! trusted proxy, `X-Forwarded-For`'s rightmost untrusted address is the client for the
//! sign-in limiter, the audit trail and the request log; from any other peer the header
//! is not read; from a trusted proxy it may come only once.

use awc::http::Method;
use bor::db::users::Role;
use serde_json::Value;

use crate::support::*;

/// `POST /api/auth/login` from the local address `from`, with `forwarded_for` as
/// `X-Forwarded-For` lines (each appended).
async fn login_via(
    app: &TestApp,
    from: &str,
    forwarded_for: &[&str],
    username: &str,
    password: &str,
) -> Reply {
    let connector = awc::Connector::new().local_address(from.parse().expect("an address"));
    let client = awc::Client::builder().connector(connector).finish();
    let mut request = client.post(format!("{}/api/auth/login", app.address));
    for value in forwarded_for {
        request = request.append_header(("X-Forwarded-For", *value));
    }
    let response = request
        .send_json(&serde_json::json!({"username": username, "password": password}))
        .await
        .expect("the request is sent");
    Reply::read(response).await
}

/// The addresses of the audit trail's entries of `action`, newest first.
async fn audited_addresses(app: &TestApp, admin: &Credential, action: &str) -> Vec<String> {
    let page = app
        .call(
            Method::GET,
            &format!("/api/admin/audit?action={action}"),
            admin,
            None,
        )
        .await;
    assert_eq!(page.status, 200, "{}", page.text());
    page.json()["entries"]
        .as_array()
        .expect("entries")
        .iter()
        .map(|entry| entry["address"].as_str().unwrap_or_default().to_owned())
        .collect()
}

fn code(reply: &Reply) -> String {
    reply.json()["error"]["code"]
        .as_str()
        .map(str::to_owned)
        .unwrap_or_else(|| panic!("no error code in {}", reply.text()))
}

#[actix_web::test]
async fn a_trusted_proxy_names_the_client_for_the_limiter_the_audit_trail_and_the_log() {
    let app = TestApp::spawn_with_accounts(&[("BOR_TRUSTED_PROXIES", "127.0.0.1/32")]).await;
    app.add_user("root", Role::Admin).await;
    app.add_user("ann", Role::Member).await;
    let admin = Credential::Cookie(app.sign_in("root").await);

    // The client wrote 192.0.2.1 itself; the proxy appended the address it saw.
    let spoofer = "192.0.2.1, 203.0.113.7";
    for n in 0..5 {
        let failed = login_via(
            &app,
            "127.0.0.1",
            &[spoofer],
            &format!("nobody{n}"),
            "wrong",
        )
        .await;
        assert_eq!(failed.status, 401, "{}", failed.text());
    }
    let limited = login_via(&app, "127.0.0.1", &[spoofer], "ann", PASSWORD).await;
    assert_eq!(limited.status, 429, "{}", limited.text());
    assert_eq!(code(&limited), "too_many_attempts");

    // Another client through the same proxy is not held back by the first one's failures.
    let other = login_via(&app, "127.0.0.1", &["198.51.100.20"], "ann", PASSWORD).await;
    assert_eq!(other.status, 200, "{}", other.text());

    assert_eq!(
        audited_addresses(&app, &admin, "sign_in_failed").await,
        vec!["203.0.113.7"; 5]
    );
    assert_eq!(
        audited_addresses(&app, &admin, "signed_in").await,
        ["198.51.100.20", "127.0.0.1"],
        "ann through the proxy, then root without it"
    );
    assert!(
        log_lines_containing("203.0.113.7")
            .iter()
            .any(|line| line.contains("request answered")),
        "the request log names the client"
    );
}

#[actix_web::test]
async fn x_forwarded_for_from_an_untrusted_peer_is_ignored() {
    let app = TestApp::spawn_with_accounts(&[("BOR_TRUSTED_PROXIES", "127.0.0.1/32")]).await;
    app.add_user("root", Role::Admin).await;
    app.add_user("ann", Role::Member).await;
    let admin = Credential::Cookie(app.sign_in("root").await);

    // 127.0.0.2 is no proxy: each new address it claims is still 127.0.0.2.
    for n in 0..5 {
        let claimed = format!("203.0.113.{n}");
        let failed = login_via(
            &app,
            "127.0.0.2",
            &[&claimed],
            &format!("nobody{n}"),
            "wrong",
        )
        .await;
        assert_eq!(failed.status, 401, "{}", failed.text());
    }
    let limited = login_via(&app, "127.0.0.2", &["203.0.113.99"], "ann", PASSWORD).await;
    assert_eq!(limited.status, 429, "{}", limited.text());
    // Twice from an untrusted peer is not refused: the header is not read at all.
    let twice = login_via(
        &app,
        "127.0.0.3",
        &["203.0.113.1", "203.0.113.2"],
        "ann",
        PASSWORD,
    )
    .await;
    assert_eq!(twice.status, 200, "{}", twice.text());

    let failed: Vec<Value> = audited_addresses(&app, &admin, "sign_in_failed")
        .await
        .into_iter()
        .map(Value::from)
        .collect();
    assert_eq!(failed, vec![Value::from("127.0.0.2"); 5]);
    assert_eq!(
        audited_addresses(&app, &admin, "signed_in").await,
        ["127.0.0.3", "127.0.0.1"]
    );
}

#[actix_web::test]
async fn x_forwarded_for_twice_from_a_trusted_proxy_is_refused() {
    let app = TestApp::spawn_with_accounts(&[("BOR_TRUSTED_PROXIES", "127.0.0.1/32")]).await;
    app.add_user("ann", Role::Member).await;
    let twice = login_via(
        &app,
        "127.0.0.1",
        &["203.0.113.1", "198.51.100.2"],
        "ann",
        PASSWORD,
    )
    .await;
    assert_eq!(twice.status, 400, "{}", twice.text());
    assert_eq!(code(&twice), "repeated_header");
    assert_eq!(
        log_lines_containing("X-Forwarded-For more than once").len(),
        1,
        "the refusal is logged"
    );
    let once = login_via(
        &app,
        "127.0.0.1",
        &["203.0.113.1, 198.51.100.2"],
        "ann",
        PASSWORD,
    )
    .await;
    assert_eq!(once.status, 200, "{}", once.text());
}
