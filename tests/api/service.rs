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
