//! Typed helpers for the documents API.

use serde_json::Value;

use super::TestApp;

/// A status and the JSON body (`Null` when there is none).
#[derive(Debug)]
pub struct JsonResponse {
    pub status: u16,
    pub json: Value,
}

impl JsonResponse {
    pub fn error_code(&self) -> &str {
        self.json["error"]["code"].as_str().unwrap_or("")
    }
}

impl TestApp {
    async fn admin_request(
        &self,
        method: awc::http::Method,
        path: &str,
        token: Option<&str>,
        body: Option<(&str, Vec<u8>)>,
    ) -> JsonResponse {
        let mut request = TestApp::client().request(method, format!("{}{path}", self.address));
        if let Some(token) = token {
            request = request.insert_header(("Authorization", format!("Bearer {token}")));
        }
        let mut response = match body {
            Some((content_type, bytes)) => request
                .insert_header(("Content-Type", content_type))
                .send_body(bytes)
                .await
                .expect("the request is sent"),
            None => request.send().await.expect("the request is sent"),
        };
        let bytes = response
            .body()
            .limit(16 * 1024 * 1024)
            .await
            .expect("the body is read");
        JsonResponse {
            status: response.status().as_u16(),
            json: serde_json::from_slice(&bytes).unwrap_or(Value::Null),
        }
    }

    /// `POST /api/admin/documents` with a JSON body.
    pub async fn post_document(&self, token: Option<&str>, body: &Value) -> JsonResponse {
        self.post_document_raw(token, "application/json", body.to_string().into_bytes())
            .await
    }

    pub async fn post_document_raw(
        &self,
        token: Option<&str>,
        content_type: &str,
        body: Vec<u8>,
    ) -> JsonResponse {
        self.admin_request(
            awc::http::Method::POST,
            "/api/admin/documents",
            token,
            Some((content_type, body)),
        )
        .await
    }

    /// `POST /api/search` with this body as JSON.
    pub async fn search(&self, body: &Value) -> JsonResponse {
        let body = ("application/json", body.to_string().into_bytes());
        self.admin_request(awc::http::Method::POST, "/api/search", None, Some(body))
            .await
    }

    /// `POST /api/admin/documents/url` with a JSON body (`{"url","crawl"?}`).
    pub async fn post_url(&self, token: Option<&str>, body: &Value) -> JsonResponse {
        let body = Some(("application/json", body.to_string().into_bytes()));
        self.admin_request(
            awc::http::Method::POST,
            "/api/admin/documents/url",
            token,
            body,
        )
        .await
    }

    /// `DELETE /api/admin/documents/{id}`.
    pub async fn delete_document(&self, token: Option<&str>, id: &str) -> JsonResponse {
        self.admin_request(
            awc::http::Method::DELETE,
            &format!("/api/admin/documents/{id}"),
            token,
            None,
        )
        .await
    }

    /// `POST /api/admin/reindex`.
    pub async fn reindex(&self, token: Option<&str>) -> JsonResponse {
        self.admin_request(awc::http::Method::POST, "/api/admin/reindex", token, None)
            .await
    }

    /// `GET /api/documents`.
    pub async fn documents(&self) -> Value {
        let response = self
            .admin_request(awc::http::Method::GET, "/api/documents", None, None)
            .await;
        assert_eq!(response.status, 200, "{:?}", response.json);
        response.json
    }
}
