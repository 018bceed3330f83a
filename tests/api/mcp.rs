//! `/mcp` (docs/MCP.md): the stateless Streamable HTTP transport, JSON-RPC's refusals,
//! the 401 that starts OAuth and its metadata, the three tools and their metrics, and
//! two instances answering one client's requests in turn. Grants on `/mcp` are walked
//! in `access_matrix.rs`.

use awc::http::Method;
use bor::db::users::Role;
use serde_json::{Value, json};

use crate::passages::{TOKEN, app_with_guide};
use crate::support::*;

fn request(id: i64, method: &str, params: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
}

fn initialize(version: &str) -> Value {
    request(
        1,
        "initialize",
        json!({"protocolVersion": version, "capabilities": {},
               "clientInfo": {"name": "test", "version": "1"}}),
    )
}

/// The structured result of a call that succeeded, after checking that its text is
/// the same JSON.
fn structured(result: &Value) -> Value {
    assert_eq!(result["isError"], false, "{result}");
    let text = result["content"][0]["text"].as_str().unwrap();
    assert_eq!(result["content"][0]["type"], "text");
    let parsed: Value = serde_json::from_str(text).unwrap();
    assert_eq!(
        parsed, result["structuredContent"],
        "text and structure agree"
    );
    parsed
}

/// The message of a call that failed as a tool (`isError`).
fn tool_error(result: &Value) -> String {
    assert_eq!(result["isError"], true, "{result}");
    assert!(result.get("structuredContent").is_none(), "{result}");
    result["content"][0]["text"].as_str().unwrap().to_owned()
}

#[actix_web::test]
async fn a_client_initializes_lists_the_tools_and_no_session_is_kept() {
    let app = TestApp::spawn().await;
    let nobody = Credential::Nobody;
    for version in ["2025-03-26", "2025-06-18", "2025-11-25"] {
        let reply = app.mcp(&nobody, initialize(version)).await;
        assert_eq!(reply.status, 200, "{}", reply.text());
        let answer = reply.json();
        assert_eq!(answer["jsonrpc"], "2.0");
        assert_eq!(answer["id"], 1);
        assert_eq!(answer["result"]["protocolVersion"], version);
        assert_eq!(answer["result"]["serverInfo"]["name"], "bor");
        assert_eq!(
            answer["result"]["capabilities"],
            json!({"tools": {"listChanged": false}})
        );
        assert!(reply.headers.get("mcp-session-id").is_none(), "stateless");
    }
    let other = app.mcp(&nobody, initialize("2024-01-01")).await.json();
    assert_eq!(other["result"]["protocolVersion"], "2025-11-25");

    let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    let reply = app.mcp(&nobody, initialized).await;
    assert_eq!((reply.status, reply.body.len()), (202, 0));

    // Any session id a client sends is read by nobody.
    let sent = TestApp::client()
        .post(format!("{}/mcp", app.address))
        .insert_header(("Mcp-Session-Id", "made-up"))
        .insert_header(("MCP-Protocol-Version", "2025-06-18"))
        .send_json(&request(9, "ping", json!({})))
        .await
        .unwrap();
    let reply = Reply::read(sent).await;
    assert_eq!(reply.status, 200, "{}", reply.text());
    assert_eq!(reply.json()["result"], json!({}));
    let listed = app
        .mcp(&nobody, request(2, "tools/list", json!({})))
        .await
        .json();
    let tools = listed["result"]["tools"].as_array().unwrap();
    let names: Vec<&str> = tools.iter().filter_map(|t| t["name"].as_str()).collect();
    assert_eq!(names, ["search", "fetch", "list_collections"]);
    let search = &tools[0];
    assert_eq!(search["inputSchema"]["required"], json!(["query"]));
    assert_eq!(search["inputSchema"]["properties"]["top_k"]["maximum"], 50);
    assert_eq!(search["inputSchema"]["properties"]["top_k"]["default"], 8);
    assert_eq!(
        search["outputSchema"]["properties"]["results"]["items"]["required"],
        json!(["id", "title", "url", "snippet", "collection", "score"])
    );
    assert!(
        tools
            .iter()
            .all(|t| t["annotations"]["readOnlyHint"] == true)
    );
    let ping = app.mcp(&nobody, request(3, "ping", json!({}))).await.json();
    assert_eq!(ping, json!({"jsonrpc": "2.0", "id": 3, "result": {}}));

    for method in ["get", "delete"] {
        let reply = app.send(method, "/mcp", &[]).await;
        assert_eq!(reply.status, 405, "{method}");
        assert_eq!(reply.headers.get("allow").unwrap(), "POST");
    }
}

/// A body that is no request bor can answer: content type, body, headers, and the
/// status, JSON-RPC error code and id it gets.
type Garbage<'a> = (&'a str, Vec<u8>, &'a [(&'a str, &'a str)], u16, i64, Value);

#[actix_web::test]
async fn garbage_gets_json_rpc_errors_and_never_a_server_error() {
    let app = TestApp::spawn().await;
    let post = async |content_type: &str, body: Vec<u8>, headers: &[(&str, &str)]| {
        let mut sent = TestApp::client()
            .post(format!("{}/mcp", app.address))
            .insert_header(("Content-Type", content_type));
        for &header in headers {
            sent = sent.insert_header(header);
        }
        Reply::read(sent.send_body(body).await.unwrap()).await
    };
    let cases: [Garbage; 8] = [
        (
            "application/json",
            b"{not json".to_vec(),
            &[],
            400,
            -32700,
            Value::Null,
        ),
        (
            "application/json",
            br#"[{"jsonrpc":"2.0","id":1,"method":"ping"}]"#.to_vec(),
            &[],
            400,
            -32600,
            Value::Null,
        ),
        (
            "application/json",
            br#"{"jsonrpc":"2.0","id":4}"#.to_vec(),
            &[],
            400,
            -32600,
            json!(4),
        ),
        (
            "application/json",
            br#"{"jsonrpc":"2.0","id":5,"method":"resources/list"}"#.to_vec(),
            &[],
            200,
            -32601,
            json!(5),
        ),
        (
            "application/json",
            br#"{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"chat"}}"#.to_vec(),
            &[],
            200,
            -32602,
            json!(6),
        ),
        (
            "application/json",
            br#"{"jsonrpc":"2.0","id":7,"method":"initialize","params":{}}"#.to_vec(),
            &[],
            200,
            -32602,
            json!(7),
        ),
        ("text/plain", b"{}".to_vec(), &[], 415, -32600, Value::Null),
        (
            "application/json",
            br#"{"jsonrpc":"2.0","id":8,"method":"ping"}"#.to_vec(),
            &[("MCP-Protocol-Version", "1999-01-01")],
            400,
            -32600,
            Value::Null,
        ),
    ];
    for (content_type, body, headers, status, code, id) in cases {
        let shown = String::from_utf8_lossy(&body).into_owned();
        let reply = post(content_type, body, headers).await;
        assert_eq!(reply.status, status, "{shown}: {}", reply.text());
        let answer = reply.json();
        assert_eq!(answer["jsonrpc"], "2.0", "{shown}");
        assert_eq!(answer["error"]["code"], code, "{shown}: {answer}");
        assert_eq!(answer["id"], id, "{shown}");
        assert!(answer["error"]["message"].is_string());
    }
    let too_large = vec![b' '; 256 * 1024 + 1];
    let reply = post("application/json", too_large, &[]).await;
    assert_eq!(reply.status, 413);
    assert_eq!(reply.json()["error"]["code"], -32600);
    let with_nul = br#"{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"search","arguments":{"query":"a\u0000b"}}}"#;
    let reply = post("application/json", with_nul.to_vec(), &[]).await;
    assert_eq!(reply.status, 400);
    assert_eq!(reply.json()["error"]["code"], -32600);
}

#[actix_web::test]
async fn search_finds_passages_with_their_page_and_fetch_reads_one_with_its_neighbours() {
    let (app, id) = app_with_guide().await;
    let local = Credential::Nobody;
    let result = app
        .mcp_tool(
            &local,
            "search",
            json!({"query": "Run the installer and restart the shell", "top_k": 2}),
        )
        .await;
    let results = structured(&result)["results"].as_array().unwrap().clone();
    assert_eq!(results.len(), 2);
    let best = &results[0];
    assert_eq!(best["title"], "Guide");
    assert_eq!(best["collection"], "default");
    assert_eq!(
        best["snippet"], "Install Run the installer and restart the shell.",
        "plain text"
    );
    assert!(best["score"].as_f64().unwrap() > 0.5, "{best}");
    let chunk_id = best["id"].as_str().unwrap();
    assert_eq!(
        best["url"],
        format!("{}/documents/{id}#chunk-{chunk_id}", app.address)
    );
    let page = app
        .get(
            best["url"]
                .as_str()
                .unwrap()
                .trim_start_matches(&app.address),
            None,
        )
        .await;
    assert_eq!(page.status, 200, "the passage page opens");

    // The same search as `/api/search` finds the same passages in the same order.
    let api = app
        .search(&json!({"query": "Run the installer and restart the shell", "top_k": 2}))
        .await;
    let api_ids: Vec<String> = api.json["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["chunk_id"].to_string())
        .collect();
    let mcp_ids: Vec<String> = results
        .iter()
        .map(|r| r["id"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(mcp_ids, api_ids);

    let passage = structured(&app.mcp_tool(&local, "fetch", json!({"id": chunk_id})).await);
    assert_eq!(passage["id"], chunk_id);
    assert_eq!(passage["title"], "Guide");
    assert_eq!(passage["url"], best["url"]);
    let text = passage["text"].as_str().unwrap();
    assert!(
        text.contains("An introduction")
            && text.contains("Run the installer")
            && text.contains("Type bor"),
        "the passage and both neighbours: {text}"
    );
    let metadata = &passage["metadata"];
    assert_eq!(metadata["document_id"], id);
    assert_eq!(metadata["collection"], "default");
    assert_eq!(metadata["heading"], "Guide › Install");
    assert_eq!(metadata["passages"].as_array().unwrap().len(), 3);
    let by_number = app
        .mcp_tool(
            &local,
            "fetch",
            json!({"id": chunk_id.parse::<i64>().unwrap()}),
        )
        .await;
    assert_eq!(structured(&by_number)["id"], chunk_id);

    for absent in ["999999", "not-an-id"] {
        let refused = app.mcp_tool(&local, "fetch", json!({"id": absent})).await;
        assert_eq!(
            tool_error(&refused),
            format!("there is no passage `{absent}` you can read")
        );
    }
    let listed = structured(&app.mcp_tool(&local, "list_collections", json!({})).await);
    assert_eq!(
        listed,
        json!({"collections": [{"name": "default", "description": "Documents imported without a collection", "documents": 1}]})
    );
}

#[actix_web::test]
async fn arguments_that_do_not_fit_and_unknown_collections_are_tool_errors() {
    let (app, _) = app_with_guide().await;
    let local = Credential::Nobody;
    let made = app
        .call(
            Method::POST,
            "/api/admin/collections",
            &Credential::Bearer(TOKEN.to_owned()),
            Some(json!({"name": "handbook", "description": "How we work"})),
        )
        .await;
    assert_eq!(made.status, 201, "{}", made.text());

    let refusals = [
        (json!({}), "the arguments do not fit: missing field `query`"),
        (json!({"query": "  "}), "`query` is empty"),
        (
            json!({"query": "x".repeat(8001)}),
            "`query` is longer than 8000 characters",
        ),
        (
            json!({"query": "x", "top_k": 0}),
            "`top_k` must be from 1 to 50",
        ),
        (
            json!({"query": "x", "top_k": 51}),
            "`top_k` must be from 1 to 50",
        ),
        (
            json!({"query": "x", "collections": ["handbok"]}),
            "there is no collection `handbok` you can read; did you mean `handbook`?",
        ),
        (
            json!({"query": "x", "collections": ["default", "zzzzzz"]}),
            "there is no collection `zzzzzz` you can read; list_collections names the collections you can read",
        ),
    ];
    for (arguments, message) in refusals {
        let result = app.mcp_tool(&local, "search", arguments.clone()).await;
        assert_eq!(tool_error(&result), message, "{arguments}");
    }
    let scoped = app
        .mcp_tool(
            &local,
            "search",
            json!({"query": "installer", "collections": ["handbook"]}),
        )
        .await;
    assert_eq!(structured(&scoped)["results"], json!([]), "never wider");

    let listed = structured(&app.mcp_tool(&local, "list_collections", json!({})).await);
    assert_eq!(
        listed["collections"][1],
        json!({"name": "handbook", "description": "How we work", "documents": 0})
    );
}

#[actix_web::test]
async fn without_a_key_the_answer_points_at_the_protected_resource_metadata() {
    let app = TestApp::spawn_with_accounts(&[]).await;
    let reply = app.mcp(&Credential::Nobody, initialize("2025-06-18")).await;
    assert_eq!(reply.status, 401, "{}", reply.text());
    let metadata_url = format!("{}/.well-known/oauth-protected-resource", app.address);
    assert_eq!(
        reply.headers.get("www-authenticate").unwrap(),
        &format!("Bearer resource_metadata=\"{metadata_url}\"")
    );
    assert_eq!(reply.json()["error"]["code"], "unauthorized");
    let revoked = app
        .mcp(
            &Credential::Bearer("bor_not-a-key".to_owned()),
            initialize("2025-06-18"),
        )
        .await;
    assert_eq!(revoked.status, 401);
    assert!(revoked.headers.get("www-authenticate").is_some());

    for path in [
        "/.well-known/oauth-protected-resource",
        "/.well-known/oauth-protected-resource/mcp",
    ] {
        let metadata = app.get(path, None).await;
        assert_eq!(metadata.status, 200, "{path}");
        assert_eq!(
            metadata.json(),
            json!({
                "resource": format!("{}/mcp", app.address),
                "authorization_servers": [app.address],
                "bearer_methods_supported": ["header"],
                "resource_name": "bor",
            }),
            "{path}"
        );
    }

    app.add_user("ann", Role::Member).await;
    let cookie = app.sign_in("ann").await;
    let (_, key) = app.make_key(&cookie, "editor").await;
    let reply = app
        .mcp(&Credential::Bearer(key), initialize("2025-06-18"))
        .await;
    assert_eq!(reply.status, 200, "{}", reply.text());

    let public = TestApp::spawn_with_accounts(&[("BOR_PUBLIC_URL", "https://bor.example")]).await;
    let reply = public
        .mcp(&Credential::Nobody, initialize("2025-06-18"))
        .await;
    assert_eq!(
        reply.headers.get("www-authenticate").unwrap(),
        "Bearer resource_metadata=\"https://bor.example/.well-known/oauth-protected-resource\""
    );
    let metadata = public
        .get("/.well-known/oauth-protected-resource", None)
        .await
        .json();
    assert_eq!(metadata["resource"], "https://bor.example/mcp");
    assert_eq!(
        metadata["authorization_servers"],
        json!(["https://bor.example"])
    );
}

#[actix_web::test]
async fn every_tool_call_is_counted_by_tool_and_outcome_and_timed() {
    let (app, _) = app_with_guide().await;
    let local = Credential::Nobody;
    app.mcp_tool(&local, "search", json!({"query": "installer"}))
        .await;
    app.mcp_tool(&local, "fetch", json!({"id": "nosuch"})).await;
    let scrape = app.get("/metrics", None).await.text();
    let value = |tool: &str, outcome: &str| -> f64 {
        scrape
            .lines()
            .find(|line| {
                line.starts_with("bor_mcp_calls_total{")
                    && line.contains(&format!("tool=\"{tool}\""))
                    && line.contains(&format!("outcome=\"{outcome}\""))
            })
            .and_then(|line| line.rsplit(' ').next()?.parse().ok())
            .unwrap_or(0.0)
    };
    assert!(value("search", "ok") >= 1.0, "{scrape}");
    assert!(value("fetch", "tool_error") >= 1.0, "{scrape}");
    assert!(
        scrape
            .lines()
            .any(|line| line.starts_with("bor_mcp_call_duration_seconds_count{tool=\"search\"}")),
        "the latency histogram"
    );
}

#[actix_web::test]
async fn two_instances_answer_one_clients_requests_in_turn() {
    let a = TestApp::spawn_with_accounts(&[]).await;
    let b = a.spawn_sharing(&[("BOR_AUTH", "accounts")]).await;
    a.add_user("ann", Role::Member).await;
    let cookie = a.sign_in("ann").await;
    let (_, key) = a.make_key(&cookie, "agent").await;
    let (document_id, _) = a
        .insert_document("Tides", "The tides follow the moon twice a day.")
        .await;
    assert!(
        eventually(async || b.indexed_chunks(document_id) == 1).await,
        "instance B has the document"
    );
    let ann = Credential::Bearer(key);
    // The key made on A is known to B once B's cache hears of it.
    assert!(
        eventually(async || b.mcp(&ann, request(0, "ping", json!({}))).await.status == 200).await
    );
    let steps = [
        initialize("2025-06-18"),
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        request(2, "tools/list", json!({})),
        request(
            3,
            "tools/call",
            json!({"name": "search", "arguments": {"query": "What do the tides follow?"}}),
        ),
        request(
            4,
            "tools/call",
            json!({"name": "list_collections", "arguments": {}}),
        ),
    ];
    let mut found = None;
    for (turn, step) in steps.iter().enumerate() {
        let instance = if turn % 2 == 0 { &a } else { &b };
        let reply = instance.mcp(&ann, step.clone()).await;
        assert!(
            [200, 202].contains(&reply.status),
            "{step}: {}",
            reply.text()
        );
        if step["method"] == "tools/call" && step["params"]["name"] == "search" {
            found = reply.json()["result"]["structuredContent"]["results"][0]["id"]
                .as_str()
                .map(str::to_owned);
        }
    }
    let chunk_id = found.expect("the search found the passage");
    for instance in [&b, &a] {
        let passage = instance
            .mcp_tool(&ann, "fetch", json!({"id": chunk_id}))
            .await;
        assert_eq!(structured(&passage)["metadata"]["document_id"], document_id);
    }
}

#[actix_web::test]
async fn a_dependency_that_is_down_is_a_tool_error_not_a_server_error() {
    // Nothing listens on the discard port: embedding the query fails at once.
    let app = TestApp::spawn_with(&[("BOR_LLM_BASE_URL", "http://127.0.0.1:9/v1")]).await;
    let result = app
        .mcp_tool(&Credential::Nobody, "search", json!({"query": "tides"}))
        .await;
    assert_eq!(
        tool_error(&result),
        "A service bor depends on is unavailable — please try again in a moment."
    );
    let listed = app
        .mcp_tool(&Credential::Nobody, "list_collections", json!({}))
        .await;
    assert_eq!(structured(&listed)["collections"][0]["name"], "default");
}
