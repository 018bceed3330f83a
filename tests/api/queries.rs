//! A query string that does not read as its route's parameters is refused in the JSON
//! error shape on every route, never with actix-web's `text/plain`.

use crate::openapi::ROUTES;
use crate::support::*;

/// Every parameter a route reads, each given twice, and a byte that is not UTF-8.
const REPEATED: &str = "limit=5&limit=6&q=a&q=b&format=json&format=markdown\
    &before=2026-01-01T00:00:00Z&before=2026-01-02T00:00:00Z&before_id=x&before_id=y";

#[actix_web::test]
async fn every_route_refuses_an_unreadable_query_in_the_json_shape() {
    let app = TestApp::spawn().await;
    for query in [REPEATED, "q=%FF%FE&limit=%FF"] {
        for &(method, _, path) in ROUTES {
            // The sign-in round trip and the OAuth consent answer pages a browser shows,
            // never JSON.
            if path.starts_with("/api/auth/oidc/") || path == "/oauth/authorize" {
                continue;
            }
            let reply = app.send(method, &format!("{path}?{query}"), &[]).await;
            assert!(
                reply.status < 500,
                "{method} {path}?{query}: {}",
                reply.status
            );
            if reply.status < 400 {
                continue;
            }
            let content_type = reply.headers.get("content-type").unwrap();
            assert_eq!(content_type, "application/json", "{method} {path}?{query}");
            let error = &reply.json()["error"];
            if path.starts_with("/oauth/") {
                // RFC 6749's shape: `error` is the code.
                assert!(error.is_string(), "{method} {path}?{query}: {error}");
                continue;
            }
            if path == "/mcp" {
                // JSON-RPC's shape: a numeric code.
                assert!(error["code"].is_i64(), "{method} {path}?{query}: {error}");
                continue;
            }
            assert!(
                error["code"].as_str().is_some_and(|code| !code.is_empty()),
                "{method} {path}?{query}: {error}"
            );
            if path.starts_with("/v1/") {
                assert!(error["type"].is_string(), "the OpenAI shape: {error}");
            }
        }
    }
}

#[actix_web::test]
async fn a_parameter_given_twice_is_invalid_json() {
    let app = TestApp::spawn().await;
    let response = app.chat("Hello?").await;
    let conversation = response.last().data["conversation_id"].as_str().unwrap();
    app.wait_for_rows(1).await;
    for path in [
        "/api/conversations?limit=5&limit=6".to_owned(),
        "/api/conversations?q=a&q=b".to_owned(),
        format!("/api/conversations/{conversation}/export?format=json&format=json"),
    ] {
        let reply = app.get(&path, None).await;
        assert_eq!(reply.status, 400, "{path}");
        assert_eq!(reply.json()["error"]["code"], "invalid_json", "{path}");
        let message = reply.json()["error"]["message"]
            .as_str()
            .unwrap()
            .to_owned();
        assert!(message.contains("duplicate field"), "{path}: {message}");
    }
    let once = app
        .get(
            &format!("/api/conversations/{conversation}/export?format=json"),
            None,
        )
        .await;
    assert_eq!(once.status, 200, "a parameter given once is read");
}
