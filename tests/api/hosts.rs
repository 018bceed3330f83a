//! Only hosts bor is reached by are answered (docs/PROTOCOL.md, "Hosts"): a page on
//! another site that reaches bor through a name of its own (DNS rebinding) gets 421
//! `misdirected_host` on every route and starts nothing.

use serde_json::json;

use crate::support::*;

/// A page, the data a rebinding page would read or drive, and what monitors read.
const ROUTES: &[(&str, &str)] = &[
    ("get", "/"),
    ("get", "/api/conversations"),
    ("get", "/api/documents"),
    ("get", "/v1/models"),
    ("post", "/api/chat"),
    ("post", "/v1/chat/completions"),
    ("get", "/metrics"),
    ("get", "/api/health"),
    ("get", "/api/no-such-route"),
];

fn port(app: &TestApp) -> &str {
    app.address
        .rsplit(':')
        .next()
        .expect("the address has a port")
}

#[actix_web::test]
async fn foreign_hosts_are_refused_on_every_route() {
    let app = TestApp::spawn().await;
    let port = port(&app);
    let foreign = [
        format!("attacker.example:{port}"),
        "attacker.example".to_owned(),
        format!("localhost.attacker.example:{port}"),
        format!("127.0.0.1.nip.io:{port}"),
    ];
    for host in &foreign {
        for &(method, path) in ROUTES {
            let reply = app.send(method, path, &[("Host", host)]).await;
            assert_eq!(reply.status, 421, "{method} {path} for {host}");
            assert_eq!(
                reply.headers.get("content-type").unwrap(),
                "application/json",
                "{method} {path}"
            );
            let error = &reply.json()["error"];
            assert_eq!(error["code"], "misdirected_host", "{method} {path}");
            assert!(
                error["message"]
                    .as_str()
                    .unwrap()
                    .contains("BOR_ALLOWED_HOSTS"),
                "the message names the fix: {error}"
            );
            if path.starts_with("/v1/") {
                assert_eq!(error["type"], "invalid_request_error", "the OpenAI shape");
            }
        }
    }
    assert!(app.mock.requests().is_empty(), "no refused turn started");
    let listed = app.get("/api/conversations", None).await;
    assert_eq!(
        listed.json(),
        json!([]),
        "no refused turn left a conversation"
    );
    assert!(
        !log_lines_containing("attacker.example").is_empty(),
        "a refusal is logged with its host"
    );
}

#[actix_web::test]
async fn ip_addresses_and_localhost_are_answered() {
    let app = TestApp::spawn().await;
    let port = port(&app);
    for host in [
        format!("127.0.0.1:{port}"),
        format!("localhost:{port}"),
        format!("LocalHost.:{port}"),
        format!("bor.localhost:{port}"),
        format!("[::1]:{port}"),
        format!("192.168.1.5:{port}"),
        "127.0.0.1".to_owned(),
    ] {
        for (method, path) in [
            ("get", "/"),
            ("get", "/api/conversations"),
            ("get", "/api/documents"),
            ("get", "/v1/models"),
            ("get", "/metrics"),
            ("get", "/api/health"),
        ] {
            let reply = app.send(method, path, &[("Host", &host)]).await;
            assert_eq!(reply.status, 200, "{method} {path} for {host}");
        }
    }
    let response = app.chat("Hello?").await;
    assert_eq!(response.last().event, "done", "the test client's own host");
}

#[actix_web::test]
async fn the_public_url_and_the_allowed_names_are_answered() {
    let app = TestApp::spawn_with(&[
        ("BOR_PUBLIC_URL", "https://Bor.Example.org/chat/"),
        ("BOR_ALLOWED_HOSTS", "host.docker.internal,*.corp.example"),
    ])
    .await;
    for host in [
        "bor.example.org",
        "bor.example.org:443",
        "host.docker.internal:8000",
        "chat.corp.example",
    ] {
        for (method, path) in [
            ("get", "/"),
            ("get", "/api/conversations"),
            ("get", "/api/documents"),
            ("get", "/v1/models"),
        ] {
            let reply = app.send(method, path, &[("Host", host)]).await;
            assert_eq!(reply.status, 200, "{method} {path} for {host}");
        }
    }
    let asked = app
        .send("post", "/api/chat", &[("Host", "bor.example.org")])
        .await;
    assert_eq!(asked.status, 400, "past the host check: the body is read");
    assert_eq!(asked.json()["error"]["code"], "invalid_json");
    let refused = app
        .send("get", "/api/documents", &[("Host", "corp.example")])
        .await;
    assert_eq!(refused.status, 421);
}

#[actix_web::test]
async fn a_star_answers_any_host() {
    let app = TestApp::spawn_with(&[("BOR_ALLOWED_HOSTS", "*")]).await;
    let reply = app
        .send("get", "/api/documents", &[("Host", "anything.example")])
        .await;
    assert_eq!(reply.status, 200);
}

#[actix_web::test]
async fn a_bor_bound_beyond_loopback_without_names_says_how_to_accept_one() {
    let app = TestApp::spawn_with_accounts(&[("BOR_BIND", "0.0.0.0:0")]).await;
    let warned = log_lines_containing("set BOR_PUBLIC_URL to the address people use");
    assert_eq!(warned.len(), 1, "{warned:?}");
    assert!(warned[0].contains("0.0.0.0"), "{warned:?}");
    let reply = app.get("/api/health", None).await;
    assert_eq!(reply.status, 200, "an IP address is still answered");
}

#[actix_web::test]
async fn a_bor_bound_beyond_loopback_with_its_public_url_says_nothing() {
    let _app = TestApp::spawn_with_accounts(&[
        ("BOR_BIND", "0.0.0.0:0"),
        ("BOR_PUBLIC_URL", "https://bor.example.org"),
    ])
    .await;
    assert!(log_lines_containing("set BOR_PUBLIC_URL to the address people use").is_empty());
}

/// The status line of the answer to `request`, written as is.
async fn raw_status(app: &TestApp, request: &str) -> String {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let address = app.address.trim_start_matches("http://");
    let mut stream = tokio::net::TcpStream::connect(address).await.unwrap();
    stream.write_all(request.as_bytes()).await.unwrap();
    let mut answer = Vec::new();
    stream.read_to_end(&mut answer).await.unwrap();
    let answer = String::from_utf8_lossy(&answer).into_owned();
    answer.lines().next().unwrap_or_default().to_owned()
}

#[actix_web::test]
async fn a_request_without_host_is_answered_and_an_absolute_target_is_checked() {
    let app = TestApp::spawn().await;
    let without_host = raw_status(&app, "GET /api/health HTTP/1.0\r\n\r\n").await;
    assert!(without_host.contains(" 200 "), "{without_host}");
    let absolute = raw_status(
        &app,
        "GET http://attacker.example/api/documents HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n",
    )
    .await;
    assert!(absolute.contains(" 421 "), "{absolute}");
}
