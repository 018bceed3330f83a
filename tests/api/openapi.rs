//! `GET /api/openapi.json` describes every route the service answers, and only those.

use std::collections::BTreeSet;

use serde_json::{Value, json};

use crate::support::*;

/// Every route of the service: method, path as described, and a path to request it.
pub const ROUTES: &[(&str, &str, &str)] = &[
    ("get", "/", "/"),
    ("get", "/admin", "/admin"),
    ("get", "/admin/{section}", "/admin/people"),
    ("get", "/account", "/account"),
    ("get", "/documents", "/documents"),
    ("get", "/static/{path}", "/static/index.html"),
    ("get", "/api/health", "/api/health"),
    ("get", "/api/admin/health", "/api/admin/health"),
    ("post", "/api/chat", "/api/chat"),
    (
        "get",
        "/api/turns/{turn_id}/events",
        "/api/turns/00000000-0000-0000-0000-000000000000/events",
    ),
    (
        "post",
        "/api/turns/{turn_id}/stop",
        "/api/turns/00000000-0000-0000-0000-000000000000/stop",
    ),
    ("post", "/api/search", "/api/search"),
    ("get", "/api/conversations", "/api/conversations"),
    (
        "get",
        "/api/conversations/{id}",
        "/api/conversations/00000000-0000-0000-0000-000000000000",
    ),
    (
        "patch",
        "/api/conversations/{id}",
        "/api/conversations/00000000-0000-0000-0000-000000000000",
    ),
    (
        "delete",
        "/api/conversations/{id}",
        "/api/conversations/00000000-0000-0000-0000-000000000000",
    ),
    (
        "get",
        "/api/conversations/{id}/export",
        "/api/conversations/00000000-0000-0000-0000-000000000000/export",
    ),
    ("get", "/v1/models", "/v1/models"),
    ("get", "/v1/models/{model}", "/v1/models/bor"),
    ("post", "/v1/chat/completions", "/v1/chat/completions"),
    ("get", "/api/documents", "/api/documents"),
    ("get", "/api/documents/{id}", "/api/documents/1"),
    ("post", "/api/documents", "/api/documents"),
    ("delete", "/api/documents/{id}", "/api/documents/1"),
    ("get", "/documents/{id}", "/documents/1"),
    ("post", "/api/admin/documents", "/api/admin/documents"),
    ("get", "/api/admin/documents", "/api/admin/documents"),
    ("get", "/api/collections", "/api/collections"),
    ("get", "/api/admin/collections", "/api/admin/collections"),
    ("post", "/api/admin/collections", "/api/admin/collections"),
    (
        "patch",
        "/api/admin/collections/{name}",
        "/api/admin/collections/nosuch",
    ),
    (
        "delete",
        "/api/admin/collections/{name}",
        "/api/admin/collections/nosuch",
    ),
    (
        "put",
        "/api/admin/collections/{name}/grants",
        "/api/admin/collections/nosuch/grants",
    ),
    ("get", "/api/admin/groups", "/api/admin/groups"),
    ("post", "/api/admin/groups", "/api/admin/groups"),
    (
        "delete",
        "/api/admin/groups/{name}",
        "/api/admin/groups/nosuch",
    ),
    (
        "put",
        "/api/admin/groups/{name}/members",
        "/api/admin/groups/nosuch/members",
    ),
    (
        "post",
        "/api/admin/documents/url",
        "/api/admin/documents/url",
    ),
    (
        "get",
        "/api/admin/watched-files",
        "/api/admin/watched-files",
    ),
    (
        "delete",
        "/api/admin/documents/{id}",
        "/api/admin/documents/1",
    ),
    ("post", "/api/admin/reindex", "/api/admin/reindex"),
    ("post", "/mcp", "/mcp"),
    (
        "get",
        "/.well-known/oauth-protected-resource",
        "/.well-known/oauth-protected-resource",
    ),
    (
        "get",
        "/.well-known/oauth-protected-resource/mcp",
        "/.well-known/oauth-protected-resource/mcp",
    ),
    (
        "get",
        "/.well-known/oauth-authorization-server",
        "/.well-known/oauth-authorization-server",
    ),
    ("post", "/oauth/register", "/oauth/register"),
    ("get", "/oauth/authorize", "/oauth/authorize"),
    ("post", "/oauth/authorize", "/oauth/authorize"),
    ("post", "/oauth/token", "/oauth/token"),
    ("post", "/oauth/revoke", "/oauth/revoke"),
    ("get", "/metrics", "/metrics"),
    ("get", "/api/openapi.json", "/api/openapi.json"),
    ("get", "/login", "/login"),
    ("post", "/api/auth/login", "/api/auth/login"),
    ("post", "/api/auth/logout", "/api/auth/logout"),
    ("get", "/api/auth/me", "/api/auth/me"),
    ("patch", "/api/auth/me", "/api/auth/me"),
    ("post", "/api/auth/password", "/api/auth/password"),
    ("get", "/api/auth/providers", "/api/auth/providers"),
    ("get", "/api/auth/oidc/start", "/api/auth/oidc/start"),
    ("get", "/api/auth/oidc/callback", "/api/auth/oidc/callback"),
    ("get", "/api/keys", "/api/keys"),
    ("post", "/api/keys", "/api/keys"),
    (
        "delete",
        "/api/keys/{id}",
        "/api/keys/00000000-0000-0000-0000-000000000000",
    ),
    ("get", "/api/admin/users", "/api/admin/users"),
    ("post", "/api/admin/users", "/api/admin/users"),
    (
        "patch",
        "/api/admin/users/{id}",
        "/api/admin/users/00000000-0000-0000-0000-000000000000",
    ),
    (
        "delete",
        "/api/admin/users/{id}",
        "/api/admin/users/00000000-0000-0000-0000-000000000000",
    ),
    (
        "get",
        "/api/admin/users/{id}/keys",
        "/api/admin/users/00000000-0000-0000-0000-000000000000/keys",
    ),
    (
        "delete",
        "/api/admin/users/{id}/keys/{key_id}",
        "/api/admin/users/00000000-0000-0000-0000-000000000000/keys/00000000-0000-0000-0000-000000000000",
    ),
    (
        "put",
        "/api/turns/{turn_id}/feedback",
        "/api/turns/00000000-0000-0000-0000-000000000000/feedback",
    ),
    (
        "delete",
        "/api/turns/{turn_id}/feedback",
        "/api/turns/00000000-0000-0000-0000-000000000000/feedback",
    ),
    ("get", "/api/admin/feedback", "/api/admin/feedback"),
    ("get", "/api/admin/audit", "/api/admin/audit"),
    ("get", "/api/admin/limits", "/api/admin/limits"),
    ("post", "/api/admin/limits", "/api/admin/limits"),
    ("delete", "/api/admin/limits/{id}", "/api/admin/limits/1"),
    ("get", "/api/admin/usage", "/api/admin/usage"),
    ("get", "/api/usage", "/api/usage"),
    (
        "post",
        "/api/admin/feedback/{turn_id}/search",
        "/api/admin/feedback/00000000-0000-0000-0000-000000000000/search",
    ),
    (
        "put",
        "/api/admin/feedback/{turn_id}/expected",
        "/api/admin/feedback/00000000-0000-0000-0000-000000000000/expected",
    ),
    (
        "get",
        "/api/admin/eval/feedback",
        "/api/admin/eval/feedback",
    ),
    (
        "post",
        "/api/admin/eval/feedback",
        "/api/admin/eval/feedback",
    ),
];

async fn description(app: &TestApp) -> Value {
    let reply = app.get("/api/openapi.json", None).await;
    assert_eq!(reply.status, 200);
    reply.json()
}

/// Whether a route (not the fallback for unknown paths) answered.
async fn is_routed(app: &TestApp, method: &str, path: &str) -> bool {
    let reply = app.send(method, path, &[]).await;
    let fallback = reply.status == 404 && reply.text().contains("no such route");
    reply.status != 405 && !fallback
}

#[actix_web::test]
async fn the_description_lists_exactly_the_routes_the_service_answers() {
    let app = TestApp::spawn().await;
    let description = description(&app).await;
    assert!(description["openapi"].as_str().unwrap().starts_with("3."));
    assert_eq!(description["info"]["version"], env!("CARGO_PKG_VERSION"));

    let described: BTreeSet<(String, String)> = description["paths"]
        .as_object()
        .unwrap()
        .iter()
        .flat_map(|(path, item)| {
            item.as_object()
                .unwrap()
                .keys()
                .filter(|key| ["get", "post", "put", "patch", "delete"].contains(&key.as_str()))
                .map(move |method| (method.clone(), path.clone()))
        })
        .collect();
    let expected: BTreeSet<(String, String)> = ROUTES
        .iter()
        .map(|(method, path, _)| ((*method).to_owned(), (*path).to_owned()))
        .collect();
    assert_eq!(described, expected);

    for (method, _, path) in ROUTES {
        assert!(is_routed(&app, method, path).await, "{method} {path}");
    }
    assert!(
        !is_routed(&app, "get", "/api/no-such-route").await,
        "unknown paths fall through"
    );
}

#[actix_web::test]
async fn the_chat_stream_and_its_frames_are_described() {
    let app = TestApp::spawn().await;
    let description = description(&app).await;
    let chat = &description["paths"]["/api/chat"]["post"];
    assert_eq!(
        chat["responses"]["200"]["content"]["text/event-stream"]["schema"]["$ref"],
        "#/components/schemas/Frame"
    );
    for status in ["400", "413", "415", "503"] {
        assert_eq!(
            chat["responses"][status]["content"]["application/json"]["schema"]["$ref"],
            "#/components/schemas/ErrorBody",
            "{status}"
        );
    }
    let schemas = &description["components"]["schemas"];
    let titles: Vec<&str> = schemas["Frame"]["oneOf"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|variant| variant["title"].as_str())
        .collect();
    assert_eq!(
        titles,
        [
            "retry",
            "thinking",
            "tool (start)",
            "tool (end)",
            "delta",
            "done",
            "error"
        ]
    );
    assert_eq!(
        schemas["DoneFrame"]["required"],
        json!([
            "turn_id",
            "path",
            "rounds",
            "retries",
            "scaffold_stripped",
            "recovered",
            "query",
            "sources"
        ])
    );
    assert_eq!(
        schemas["ErrorCode"]["enum"],
        json!([
            "llm_unavailable",
            "llm_interrupted",
            "llm_rejected",
            "malformed_reply",
            "internal"
        ])
    );
    let admin = &description["paths"]["/api/admin/health"]["get"];
    assert_eq!(admin["security"], json!([{"admin_token": []}]));
    assert_eq!(
        description["components"]["securitySchemes"]["admin_token"]["scheme"],
        "bearer"
    );
}

#[actix_web::test]
async fn the_openai_routes_and_their_shapes_are_described() {
    let app = TestApp::spawn().await;
    let description = description(&app).await;
    let completions = &description["paths"]["/v1/chat/completions"]["post"];
    let ok = &completions["responses"]["200"]["content"];
    assert_eq!(
        ok["application/json"]["schema"]["$ref"],
        "#/components/schemas/ChatCompletion"
    );
    assert_eq!(
        ok["text/event-stream"]["schema"]["$ref"],
        "#/components/schemas/ChatCompletionChunk"
    );
    for status in ["400", "404", "413", "415", "500", "502", "503"] {
        assert_eq!(
            completions["responses"][status]["content"]["application/json"]["schema"]["$ref"],
            "#/components/schemas/OpenAiErrorBody",
            "{status}"
        );
    }
    let schemas = &description["components"]["schemas"];
    assert_eq!(
        schemas["BorExtension"]["required"],
        json!(["turn_id", "path", "sources"])
    );
    assert_eq!(
        description["paths"]["/v1/models"]["get"]["responses"]["200"]["content"]["application/json"]
            ["schema"]["$ref"],
        "#/components/schemas/ModelList"
    );
}

#[actix_web::test]
async fn every_admin_route_lists_the_same_refusals_of_the_door() {
    let app = TestApp::spawn().await;
    let description = description(&app).await;
    let admin_operations: Vec<(&String, &Value)> = description["paths"]
        .as_object()
        .unwrap()
        .iter()
        .filter(|(path, _)| path.starts_with("/api/admin/"))
        .flat_map(|(_, item)| item.as_object().unwrap().iter())
        .filter(|(method, _)| ["get", "post", "put", "patch", "delete"].contains(&method.as_str()))
        .collect();
    assert!(admin_operations.len() > 20, "{}", admin_operations.len());
    let first = &admin_operations[0].1["responses"];
    for (_, operation) in &admin_operations {
        for status in ["401", "403"] {
            let refusal = &operation["responses"][status];
            assert_eq!(refusal, &first[status], "{operation}");
            assert_eq!(
                refusal["content"]["application/json"]["schema"]["$ref"],
                "#/components/schemas/ErrorBody"
            );
        }
    }
    let forbidden = first["403"]["description"].as_str().unwrap();
    for code in ["`forbidden`", "`admin_disabled`", "`forbidden_origin`"] {
        assert!(forbidden.contains(code), "{forbidden}");
    }
}

#[actix_web::test]
async fn pinning_and_archiving_conversations_are_described() {
    let app = TestApp::spawn().await;
    let description = description(&app).await;
    let schemas = &description["components"]["schemas"];
    let change = &description["paths"]["/api/conversations/{id}"]["patch"];
    let body = &change["requestBody"]["content"]["application/json"]["schema"]["$ref"];
    let name = body
        .as_str()
        .unwrap()
        .trim_start_matches("#/components/schemas/");
    let fields: BTreeSet<&str> = schemas[name]["properties"]
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    assert_eq!(fields, BTreeSet::from(["title", "pinned", "archived"]));
    let summary = &schemas["ConversationSummary"];
    for flag in ["pinned", "archived"] {
        assert_eq!(summary["properties"][flag]["type"], "boolean", "{flag}");
    }
    let list = &description["paths"]["/api/conversations"]["get"];
    let parameters: Vec<&str> = list["parameters"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|parameter| parameter["name"].as_str())
        .collect();
    assert!(
        parameters.contains(&"archived") && parameters.contains(&"pinned"),
        "{parameters:?}"
    );
}
