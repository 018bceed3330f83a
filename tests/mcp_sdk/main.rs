//! bor's `/mcp` through a client nobody here wrote: the official MCP Python SDK (from
//! PyPI, in the virtual environment `make test-mcp-sdk` prepares), connecting over
//! Streamable HTTP with an API key or through bor's whole OAuth flow (the person's
//! sign-in and consent done over HTTP with a cookie, as a browser would), with bor on
//! port 0, the mock LLM and a fresh PostgreSQL database. The SDK side prints what it
//! made of each answer; these tests check that, and that a person sees through it only
//! what they may read.

#![expect(
    clippy::unwrap_used,
    reason = "a test stops at the first unexpected value"
)]

use std::path::Path;

use awc::http::Method;
use bor::db::users::Role;
use bor_test_support::{Credential, PASSWORD, TestApp, node_scenario, python_scenario};
use serde_json::{Value, json};

const HR_TEXT: &str = "The salary band review happens every March for the whole staff.";
const HANDBOOK_TEXT: &str = "Descale the office kettle once a month with citric acid.";

/// The official SDKs that drive `/mcp` here.
#[derive(Debug, Clone, Copy)]
enum Sdk {
    /// `mcp` from PyPI: `client.py`.
    Python,
    /// `@modelcontextprotocol/sdk` from npm: `client.mjs`.
    TypeScript,
}

const SDKS: [Sdk; 2] = [Sdk::Python, Sdk::TypeScript];

/// Runs one scenario of `sdk`'s client against `app` with `key` and returns what it
/// printed.
async fn sdk(sdk: Sdk, app: &TestApp, scenario: &str, key: &str) -> Value {
    let folder = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/mcp_sdk");
    let args = [app.address.as_str(), scenario, key];
    match sdk {
        Sdk::Python => {
            python_scenario("BOR_TEST_MCP_PYTHON", &folder.join("client.py"), &args).await
        }
        Sdk::TypeScript => node_scenario(&folder.join("client.mjs"), &args).await,
    }
}

/// An app with accounts, `hr` read by `reader` only, a document in `hr` and one in
/// `default`; an API key for `outsider` and one for `reader`.
async fn app_with_hr() -> (TestApp, String, String) {
    let app = TestApp::spawn_with_accounts(&[]).await;
    app.add_user("admin", Role::Admin).await;
    app.add_user("outsider", Role::Member).await;
    app.add_user("reader", Role::Member).await;
    let admin = Credential::Cookie(app.sign_in("admin").await);
    let steps = [
        (
            Method::POST,
            "/api/admin/collections",
            json!({"name": "hr", "description": "People matters"}),
        ),
        (
            Method::PUT,
            "/api/admin/collections/hr/grants",
            json!([{"user": "reader", "access": "read"}]),
        ),
        (
            Method::POST,
            "/api/admin/documents",
            json!({"title": "Salary bands", "content": HR_TEXT, "collection": "hr"}),
        ),
        (
            Method::POST,
            "/api/admin/documents",
            json!({"title": "Kettle handbook", "content": HANDBOOK_TEXT}),
        ),
    ];
    for (method, path, body) in steps {
        let reply = app.call(method, path, &admin, Some(body)).await;
        assert!(
            [200, 201].contains(&reply.status),
            "{path}: {}",
            reply.text()
        );
    }
    let outsider = app.sign_in("outsider").await;
    let reader = app.sign_in("reader").await;
    let (_, outsider_key) = app.make_key(&outsider, "agent").await;
    let (_, reader_key) = app.make_key(&reader, "agent").await;
    (app, outsider_key, reader_key)
}

fn collections_of(result: &Value) -> Vec<&str> {
    result["structuredContent"]["results"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|r| r["collection"].as_str())
        .collect()
}

#[actix_web::test]
async fn each_sdk_connects_with_a_key_lists_and_calls_every_tool() {
    let (app, _, reader_key) = app_with_hr().await;
    for which in SDKS {
        connects_lists_and_calls(which, &app, &reader_key).await;
    }
}

async fn connects_lists_and_calls(which: Sdk, app: &TestApp, reader_key: &str) {
    let seen = sdk(which, app, "tools", reader_key).await;
    assert_eq!(seen["protocol_version"], "2025-11-25", "{which:?}: {seen}");
    assert_eq!(seen["server"]["name"], "bor");
    let names: Vec<&str> = seen["tools"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|t| t["name"].as_str())
        .collect();
    assert_eq!(names, ["search", "fetch", "list_collections"]);

    let searched = &seen["search"];
    assert_eq!(searched["isError"], false, "{which:?}: {searched}");
    let best = &searched["structuredContent"]["results"][0];
    assert_eq!(best["title"], "Salary bands", "{searched}");
    assert_eq!(best["collection"], "hr");
    let url = best["url"].as_str().unwrap();
    assert!(
        url.starts_with(&format!("{}/documents/", app.address)),
        "{url}"
    );
    // The text is the same JSON (numbers aside: JavaScript writes a score of 0.0 as 0).
    let text: Value =
        serde_json::from_str(searched["content"][0]["text"].as_str().unwrap()).unwrap();
    let ids = |results: &Value| -> Vec<String> {
        results["results"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| format!("{} {}", r["id"], r["url"]))
            .collect()
    };
    assert_eq!(ids(&text), ids(&searched["structuredContent"]), "{which:?}");

    let fetched = &seen["fetch"];
    assert_eq!(fetched["structuredContent"]["text"], HR_TEXT, "{fetched}");
    assert_eq!(fetched["structuredContent"]["url"], best["url"]);
    let listed: Vec<&str> = seen["list_collections"]["structuredContent"]["collections"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|c| c["name"].as_str())
        .collect();
    assert_eq!(listed, ["default", "hr"]);
    assert_eq!(collections_of(&seen["search_in_hr"]), ["hr"]);
}

#[actix_web::test]
async fn through_each_sdk_a_member_without_a_grant_sees_nothing_of_hr() {
    let (app, outsider_key, _) = app_with_hr().await;
    for which in SDKS {
        sees_nothing_of_hr(which, &app, &outsider_key).await;
    }
}

async fn sees_nothing_of_hr(which: Sdk, app: &TestApp, outsider_key: &str) {
    let seen = sdk(which, app, "tools", outsider_key).await;
    let found = collections_of(&seen["search"]);
    assert!(!found.contains(&"hr"), "{which:?}: {}", seen["search"]);
    assert!(found.contains(&"default"), "{}", seen["search"]);
    assert!(!seen.to_string().contains("salary band"), "{seen}");
    let listed = seen["list_collections"]["structuredContent"]["collections"].clone();
    assert_eq!(
        listed,
        json!([{"name": "default", "description": "Documents imported without a collection", "documents": 1}])
    );
    let in_hr = &seen["search_in_hr"];
    assert_eq!(in_hr["isError"], true, "{in_hr}");
    assert_eq!(
        in_hr["content"][0]["text"],
        "there is no collection `hr` you can read; list_collections names the collections you can read"
    );
}

#[actix_web::test]
async fn each_sdk_without_a_valid_key_is_refused() {
    let (app, _, _) = app_with_hr().await;
    for (which, refusal) in [(Sdk::Python, "MCPError"), (Sdk::TypeScript, "unauthorized")] {
        for key in ["", "bor_not-a-key"] {
            let seen = sdk(which, &app, "refused", key).await;
            assert_eq!(seen["refused"], true, "{which:?} {key:?}: {seen}");
            // bor answered with its 401 (the Python SDK reports it as a protocol
            // error); the connection itself did not fail.
            let error = seen["error"].as_str().unwrap();
            assert!(error.contains(refusal), "{which:?} {key:?}: {seen}");
        }
    }
}

#[actix_web::test]
async fn each_sdk_goes_through_the_whole_oauth_flow_and_refreshes() {
    for which in SDKS {
        // A database of its own for each: the revoked grant is checked at the end.
        let (app, _, _) = app_with_hr().await;
        oauth_flow(which, &app).await;
    }
}

async fn oauth_flow(which: Sdk, app: &TestApp) {
    let credentials = format!("reader:{PASSWORD}");
    let seen = sdk(which, app, "oauth", &credentials).await;
    let page = seen["consent_page"].as_str().unwrap();
    assert!(page.contains("SDK test client"), "{page}");
    assert!(
        page.contains("<li>hr</li>"),
        "the reader's collections: {page}"
    );
    let listed: Vec<&str> = seen["list_collections"]["structuredContent"]["collections"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|c| c["name"].as_str())
        .collect();
    assert_eq!(listed, ["default", "hr"], "{which:?} as the reader: {seen}");
    assert_eq!(seen["refreshed"], true, "{which:?}: {seen}");
    assert!(
        collections_of(&seen["search"]).contains(&"hr"),
        "{}",
        seen["search"]
    );
    assert!(
        seen["first_access"]
            .as_str()
            .unwrap()
            .starts_with("bor_oat_")
    );
    assert_eq!(seen["replayed"]["status"], 400, "{seen}");
    assert_eq!(seen["replayed"]["body"]["error"], "invalid_grant");
    assert_eq!(
        seen["after_replay"], 401,
        "{which:?}: the family is revoked: {seen}"
    );

    let reader = Credential::Cookie(app.sign_in("reader").await);
    let keys = app
        .call(Method::GET, "/api/keys", &reader, None)
        .await
        .json();
    assert!(
        !keys.to_string().contains("SDK test client"),
        "the revoked grant is gone: {keys}"
    );
}
