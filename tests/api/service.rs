//! Liveness, static pages and unknown routes.

use serde_json::Value;

use crate::support::*;

#[actix_web::test]
async fn health_is_ok_with_the_version() {
    let app = TestApp::spawn().await;
    let mut response = TestApp::client()
        .get(format!("{}/api/health", app.address))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    let body: Value = response.json().await.unwrap();
    assert_eq!(body["status"], "ok");
    assert_eq!(body["version"], env!("CARGO_PKG_VERSION"));
    assert!(
        app.mock.requests().is_empty(),
        "liveness touches no dependency"
    );
}

#[actix_web::test]
async fn the_chat_page_is_served_and_unknown_routes_are_json_404s() {
    let app = TestApp::spawn().await;
    let mut page = TestApp::client()
        .get(format!("{}/", app.address))
        .send()
        .await
        .unwrap();
    assert_eq!(page.status(), 200);
    assert!(
        page.headers()
            .get("content-type")
            .and_then(|v| v.to_str().ok())
            .is_some_and(|v| v.starts_with("text/html"))
    );
    let html = page.body().await.unwrap();
    assert!(String::from_utf8_lossy(&html).contains("<html"));

    let mut missing = TestApp::client()
        .get(format!("{}/no/such/page", app.address))
        .send()
        .await
        .unwrap();
    assert_eq!(missing.status(), 404);
    let body: Value = missing.json().await.unwrap();
    assert_eq!(body["error"]["code"], "not_found");
}

#[actix_web::test]
async fn pages_cannot_be_framed_and_no_answer_is_sniffed() {
    let app = TestApp::spawn().await;
    for page in ["/", "/admin"] {
        let reply = app.get(page, None).await;
        assert_eq!(reply.status, 200, "{page}");
        let policy = reply.headers.get("content-security-policy").unwrap();
        assert!(
            policy.to_str().unwrap().contains("frame-ancestors 'none'"),
            "{page}: {policy:?}"
        );
        assert_eq!(reply.headers.get("x-frame-options").unwrap(), "DENY");
        assert_eq!(reply.headers.get("referrer-policy").unwrap(), "no-referrer");
    }
    for path in [
        "/api/health",
        "/api/documents",
        "/no/such/route",
        "/static/app.js",
    ] {
        let reply = app.get(path, None).await;
        assert_eq!(
            reply.headers.get("x-content-type-options").unwrap(),
            "nosniff",
            "{path}"
        );
        assert_eq!(reply.headers.get("referrer-policy").unwrap(), "no-referrer");
    }
}

#[actix_web::test]
async fn head_answers_as_get_does_without_a_body() {
    let app = TestApp::spawn().await;
    for path in ["/", "/admin", "/api/health"] {
        let mut response = TestApp::client()
            .head(format!("{}{path}", app.address))
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), 200, "{path}");
        let body = response.body().await.unwrap();
        assert!(body.is_empty(), "{path}: {} bytes", body.len());
    }
}

#[actix_web::test]
async fn the_bearer_scheme_is_matched_in_any_case() {
    let app = TestApp::spawn_with(&[("BOR_ADMIN_TOKEN", "s3cret")]).await;
    for scheme in ["Bearer", "bearer", "BEARER"] {
        let status = TestApp::client()
            .get(format!("{}/api/admin/health", app.address))
            .insert_header(("Authorization", format!("{scheme} s3cret")))
            .send()
            .await
            .unwrap()
            .status();
        assert_eq!(status, 200, "{scheme}");
    }
}
