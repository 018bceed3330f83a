//! Nothing unreadable leaks, by any path (docs/PROTOCOL.md, "Collections"): every read
//! path, walked for a member without a grant on `hr`, a member who reads it through a
//! group, a member who writes it, and an admin. Where the caller cannot read, the answer
//! is compared with the answer about something that does not exist: the same status and
//! the same body, only the name or the id differing.

use awc::http::Method;
use bor::db::users::Role;
use serde_json::{Value, json};

use crate::support::*;

const HR_TEXT: &str = "The salary band review happens every March for the whole staff.";
const HANDBOOK_TEXT: &str = "Descale the office kettle once a month with citric acid.";

/// One person of the matrix: how they sign in, and whether they may read `hr`.
struct Person {
    name: &'static str,
    who: Credential,
    reads_hr: bool,
    writes_hr: bool,
}

async fn call(
    app: &TestApp,
    who: &Credential,
    method: Method,
    path: &str,
    body: Option<Value>,
) -> Reply {
    app.call(method, path, who, body).await
}

/// (status, body) with `secret` replaced by `absent`, to compare a refusal of something
/// unreadable with the refusal of something that does not exist.
fn as_if(reply: &Reply, secret: &str, absent: &str) -> (u16, String) {
    (reply.status, reply.text().replace(secret, absent))
}

fn plain(reply: &Reply) -> (u16, String) {
    (reply.status, reply.text())
}

/// The ids of the documents listed, cited or found in `value` under `key`.
fn document_ids(items: &Value, key: &str) -> Vec<i64> {
    items
        .as_array()
        .map(|items| items.iter().filter_map(|item| item[key].as_i64()).collect())
        .unwrap_or_default()
}

/// A chat turn as `who`; the `done` frame's data and the last chat request the mock got.
async fn ask(app: &TestApp, who: &Credential, body: Value) -> (Value, Value) {
    let reply = call(app, who, Method::POST, "/api/chat", Some(body)).await;
    assert_eq!(reply.status, 200, "{}", reply.text());
    let text = reply.text();
    let done = done_frame(&text).unwrap_or_else(|| panic!("a done frame in {text}"));
    let request = app
        .mock
        .chat_requests()
        .last()
        .cloned()
        .expect("the mock was asked");
    (done, request)
}

/// The data of the stream's `done` frame.
fn done_frame(stream: &str) -> Option<Value> {
    let mut lines = stream.lines();
    while let Some(line) = lines.next() {
        if line == "event: done" {
            let data = lines.next()?.strip_prefix("data: ")?;
            return serde_json::from_str(data).ok();
        }
    }
    None
}

/// The content of the tool message the model got back.
fn tool_result(request: &Value) -> String {
    request["messages"]
        .as_array()
        .and_then(|messages| messages.iter().rev().find(|m| m["role"] == "tool"))
        .and_then(|message| message["content"].as_str())
        .unwrap_or_else(|| panic!("a tool result in {request}"))
        .to_owned()
}

/// `tools/call` of `tool` as `who`, the whole reply; the request's id holds no digit,
/// so that a reply can be compared with another after replacing an id in it.
async fn mcp_call(app: &TestApp, who: &Credential, tool: &str, arguments: Value) -> Reply {
    let message = json!({"jsonrpc": "2.0", "id": "matrix", "method": "tools/call",
                         "params": {"name": tool, "arguments": arguments}});
    let reply = app.mcp(who, message).await;
    assert_eq!(reply.status, 200, "{tool}: {}", reply.text());
    reply
}

/// `/mcp`'s tools as `who` (`name` says who and how they sign in): hr, its passages
/// and its search results iff `reads`; else every refusal about hr or its passage
/// `hr_chunk` reads as the one about a collection or passage that does not exist.
async fn mcp_shows_what_may_be_read(
    app: &TestApp,
    who: &Credential,
    name: &str,
    reads: bool,
    hr_chunk: &str,
) {
    let listed = app.mcp_tool(who, "list_collections", json!({})).await;
    let names: Vec<&str> = listed["structuredContent"]["collections"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|c| c["name"].as_str())
        .collect();
    assert_eq!(
        names.contains(&"hr"),
        reads,
        "{name}: list_collections {names:?}"
    );
    assert!(names.contains(&"default"), "{name}");

    let collections_found = |result: &Value| -> Vec<String> {
        result["structuredContent"]["results"]
            .as_array()
            .map(|results| {
                results
                    .iter()
                    .filter_map(|r| r["collection"].as_str().map(str::to_owned))
                    .collect()
            })
            .unwrap_or_default()
    };
    let searched = app.mcp_tool(who, "search", json!({"query": HR_TEXT})).await;
    assert_eq!(
        collections_found(&searched).contains(&"hr".to_owned()),
        reads,
        "{name}: search {searched}"
    );
    let named = mcp_call(
        app,
        who,
        "search",
        json!({"query": HR_TEXT, "collections": ["hr"]}),
    )
    .await;
    let named_absent = mcp_call(
        app,
        who,
        "search",
        json!({"query": HR_TEXT, "collections": ["nosuch"]}),
    )
    .await;
    assert_eq!(named_absent.json()["result"]["isError"], true, "{name}");
    if reads {
        assert_eq!(collections_found(&named.json()["result"]), ["hr"], "{name}");
    } else {
        assert_eq!(
            as_if(&named, "hr", "nosuch"),
            plain(&named_absent),
            "{name}: search in hr"
        );
    }

    let absent_chunk = (hr_chunk.parse::<i64>().unwrap() + 1000).to_string();
    let fetched = mcp_call(app, who, "fetch", json!({"id": hr_chunk})).await;
    let fetched_absent = mcp_call(app, who, "fetch", json!({"id": absent_chunk})).await;
    assert_eq!(fetched_absent.json()["result"]["isError"], true, "{name}");
    if reads {
        let text = fetched.json()["result"]["structuredContent"]["text"].clone();
        assert_eq!(text, HR_TEXT, "{name}: fetch");
    } else {
        assert_eq!(
            as_if(&fetched, hr_chunk, &absent_chunk),
            plain(&fetched_absent),
            "{name}: fetch"
        );
    }
}

#[actix_web::test]
async fn every_read_path_shows_each_role_what_it_may_read_and_nothing_else() {
    let app = TestApp::spawn_with_accounts(&[]).await;
    app.add_user("admin", Role::Admin).await;
    for member in ["outsider", "reader", "writer"] {
        app.add_user(member, Role::Member).await;
    }
    let admin = Credential::Cookie(app.sign_in("admin").await);
    let made = call(
        &app,
        &admin,
        Method::POST,
        "/api/admin/collections",
        Some(json!({"name": "hr"})),
    )
    .await;
    assert_eq!(made.status, 201, "{}", made.text());
    let staff = call(
        &app,
        &admin,
        Method::POST,
        "/api/admin/groups",
        Some(json!({"name": "staff"})),
    )
    .await;
    assert_eq!(staff.status, 201, "{}", staff.text());
    let members = call(
        &app,
        &admin,
        Method::PUT,
        "/api/admin/groups/staff/members",
        Some(json!(["reader"])),
    )
    .await;
    assert_eq!(members.status, 200, "{}", members.text());
    let grants =
        json!([{"group": "staff", "access": "read"}, {"user": "writer", "access": "write"}]);
    let granted = call(
        &app,
        &admin,
        Method::PUT,
        "/api/admin/collections/hr/grants",
        Some(grants),
    )
    .await;
    assert_eq!(granted.status, 200, "{}", granted.text());

    let stored = call(
        &app,
        &admin,
        Method::POST,
        "/api/admin/documents",
        Some(json!({"title": "Salary bands", "content": HR_TEXT, "collection": "hr"})),
    )
    .await;
    assert_eq!(stored.status, 201, "{}", stored.text());
    let hr_doc = stored.json()["id"].as_i64().expect("an id");
    let stored = call(
        &app,
        &admin,
        Method::POST,
        "/api/admin/documents",
        Some(json!({"title": "Kettle handbook", "content": HANDBOOK_TEXT})),
    )
    .await;
    assert_eq!(stored.status, 201, "{}", stored.text());
    let handbook_doc = stored.json()["id"].as_i64().expect("an id");
    let absent_doc = hr_doc + handbook_doc + 1000;

    let people = [
        Person {
            name: "outsider",
            who: Credential::Cookie(app.sign_in("outsider").await),
            reads_hr: false,
            writes_hr: false,
        },
        Person {
            name: "reader",
            who: Credential::Cookie(app.sign_in("reader").await),
            reads_hr: true,
            writes_hr: false,
        },
        Person {
            name: "writer",
            who: Credential::Cookie(app.sign_in("writer").await),
            reads_hr: true,
            writes_hr: true,
        },
        Person {
            name: "admin",
            who: admin.clone(),
            reads_hr: true,
            writes_hr: true,
        },
    ];
    let (hr_id, absent_id) = (hr_doc.to_string(), absent_doc.to_string());
    let in_hr = app
        .mcp_tool(
            &admin,
            "search",
            json!({"query": HR_TEXT, "collections": ["hr"]}),
        )
        .await;
    let hr_chunk = in_hr["structuredContent"]["results"][0]["id"]
        .as_str()
        .expect("the admin finds hr's passage")
        .to_owned();

    for person in &people {
        let (who, name, reads) = (&person.who, person.name, person.reads_hr);

        // GET /api/collections: hr, with the person's access.
        let listed = call(&app, who, Method::GET, "/api/collections", None)
            .await
            .json();
        let hr = listed["collections"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["name"] == "hr")
            .cloned();
        assert_eq!(hr.is_some(), reads, "{name}: /api/collections {listed}");
        if let Some(hr) = hr {
            let access = if person.writes_hr { "write" } else { "read" };
            assert_eq!(hr["access"], access, "{name}");
        }

        // GET /api/documents, whole and by collection.
        let listed = call(&app, who, Method::GET, "/api/documents", None)
            .await
            .json();
        let ids = document_ids(&listed, "id");
        assert_eq!(
            ids.contains(&hr_doc),
            reads,
            "{name}: /api/documents {listed}"
        );
        assert!(ids.contains(&handbook_doc), "{name}: default is everyone's");
        let by_hr = call(&app, who, Method::GET, "/api/documents?collection=hr", None).await;
        let by_absent = call(
            &app,
            who,
            Method::GET,
            "/api/documents?collection=nosuch",
            None,
        )
        .await;
        if reads {
            assert_eq!(document_ids(&by_hr.json(), "id"), [hr_doc], "{name}");
        } else {
            assert_eq!(
                as_if(&by_hr, "hr", "nosuch"),
                plain(&by_absent),
                "{name}: ?collection=hr"
            );
        }

        // GET /api/documents/{id}: the passages.
        let passages = call(
            &app,
            who,
            Method::GET,
            &format!("/api/documents/{hr_id}"),
            None,
        )
        .await;
        let absent = call(
            &app,
            who,
            Method::GET,
            &format!("/api/documents/{absent_id}"),
            None,
        )
        .await;
        if reads {
            assert_eq!(passages.status, 200, "{name}");
            assert_eq!(passages.json()["chunks"][0]["text"], HR_TEXT);
        } else {
            assert_eq!(
                as_if(&passages, &hr_id, &absent_id),
                plain(&absent),
                "{name}: passages"
            );
        }

        // POST /api/search, over everything readable and naming hr.
        let searched = call(
            &app,
            who,
            Method::POST,
            "/api/search",
            Some(json!({"query": HR_TEXT})),
        )
        .await;
        assert_eq!(searched.status, 200, "{name}: {}", searched.text());
        let found = document_ids(&searched.json()["results"], "document_id");
        assert_eq!(found.contains(&hr_doc), reads, "{name}: search {found:?}");
        let named = call(
            &app,
            who,
            Method::POST,
            "/api/search",
            Some(json!({"query": HR_TEXT, "collections": ["hr"]})),
        )
        .await;
        let named_absent = call(
            &app,
            who,
            Method::POST,
            "/api/search",
            Some(json!({"query": HR_TEXT, "collections": ["nosuch"]})),
        )
        .await;
        if reads {
            assert_eq!(
                document_ids(&named.json()["results"], "document_id"),
                [hr_doc],
                "{name}"
            );
        } else {
            assert_eq!(
                as_if(&named, "hr", "nosuch"),
                plain(&named_absent),
                "{name}: search in hr"
            );
        }

        // POST /api/chat: the turn's retrieval and its sources.
        let (done, request) = ask(&app, who, json!({"message": HR_TEXT})).await;
        let cited = document_ids(&done["sources"], "document_id");
        assert_eq!(cited.contains(&hr_doc), reads, "{name}: sources {cited:?}");
        let prompt = request["messages"][0]["content"]
            .as_str()
            .unwrap_or_default();
        assert_eq!(
            prompt.contains("salary band"),
            reads,
            "{name}: the model's context"
        );
        let chat_hr = call(
            &app,
            who,
            Method::POST,
            "/api/chat",
            Some(json!({"message": "q", "collections": ["hr"]})),
        )
        .await;
        let chat_absent = call(
            &app,
            who,
            Method::POST,
            "/api/chat",
            Some(json!({"message": "q", "collections": ["nosuch"]})),
        )
        .await;
        if !reads {
            assert_eq!(
                as_if(&chat_hr, "hr", "nosuch"),
                plain(&chat_absent),
                "{name}: chat in hr"
            );
        } else {
            assert_eq!(chat_hr.status, 200, "{name}");
        }

        // The three document tools, in turns grounded on the handbook everyone reads.
        let read_tool = |id: &str| {
            directed(
                HANDBOOK_TEXT,
                json!({"tool_calls": [{"name": "read_document", "arguments": {"document_id": id.parse::<i64>().unwrap()}}], "reply": "Done."}),
            )
        };
        let (_, request) = ask(&app, who, json!({"message": read_tool(&hr_id)})).await;
        let read_hr = tool_result(&request);
        let (_, request) = ask(&app, who, json!({"message": read_tool(&absent_id)})).await;
        let read_absent = tool_result(&request);
        if reads {
            assert!(read_hr.contains("salary band"), "{name}: {read_hr}");
        } else {
            assert_eq!(
                read_hr.replace(&hr_id, &absent_id),
                read_absent,
                "{name}: read_document"
            );
        }
        let list_tool = directed(
            HANDBOOK_TEXT,
            json!({"tool_calls": [{"name": "list_documents", "arguments": {}}], "reply": "Done."}),
        );
        let (_, request) = ask(&app, who, json!({"message": list_tool})).await;
        let listed = tool_result(&request);
        assert_eq!(
            listed.contains("Salary bands"),
            reads,
            "{name}: list_documents {listed}"
        );
        assert!(listed.contains("Kettle handbook"), "{name}: {listed}");
        let search_tool = directed(
            HANDBOOK_TEXT,
            json!({"tool_calls": [{"name": "search_documents", "arguments": {"query": HR_TEXT}}], "reply": "Done."}),
        );
        let (_, request) = ask(&app, who, json!({"message": search_tool})).await;
        let searched = tool_result(&request);
        assert_eq!(
            searched.contains("salary band"),
            reads,
            "{name}: search_documents {searched}"
        );

        // /v1: the models listed, one model, and a completion scoped to hr.
        let models = call(&app, who, Method::GET, "/v1/models", None)
            .await
            .json();
        let model_ids: Vec<&str> = models["data"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|m| m["id"].as_str())
            .collect();
        assert_eq!(
            model_ids.contains(&"bor/hr"),
            reads,
            "{name}: {model_ids:?}"
        );
        let model = call(&app, who, Method::GET, "/v1/models/bor/hr", None).await;
        let model_absent = call(&app, who, Method::GET, "/v1/models/bor/nosuch", None).await;
        let completion = |model: &str| json!({"model": model, "messages": [{"role": "user", "content": HR_TEXT}]});
        let completed = call(
            &app,
            who,
            Method::POST,
            "/v1/chat/completions",
            Some(completion("bor/hr")),
        )
        .await;
        let completed_absent = call(
            &app,
            who,
            Method::POST,
            "/v1/chat/completions",
            Some(completion("bor/nosuch")),
        )
        .await;
        if reads {
            assert_eq!(model.json()["id"], "bor/hr", "{name}");
            assert_eq!(completed.status, 200, "{name}: {}", completed.text());
            assert_eq!(
                document_ids(&completed.json()["bor"]["sources"], "document_id"),
                [hr_doc],
                "{name}"
            );
        } else {
            assert_eq!(
                as_if(&model, "hr", "nosuch"),
                plain(&model_absent),
                "{name}: /v1/models/bor/hr"
            );
            assert_eq!(
                as_if(&completed, "hr", "nosuch"),
                plain(&completed_absent),
                "{name}: bor/hr"
            );
        }
        let completed = call(
            &app,
            who,
            Method::POST,
            "/v1/chat/completions",
            Some(completion("bor")),
        )
        .await;
        let cited = document_ids(&completed.json()["bor"]["sources"], "document_id");
        assert_eq!(cited.contains(&hr_doc), reads, "{name}: /v1 bor {cited:?}");

        // /mcp, by the session cookie, by an API key of the person's and by an OAuth
        // access token they allowed.
        let Credential::Cookie(cookie) = who else {
            panic!("{name} signs in with a cookie");
        };
        let (_, key) = app.make_key(cookie, "agent").await;
        let (_, tokens) = app.oauth_tokens(cookie, "agent").await;
        let token = tokens["access_token"].as_str().unwrap().to_owned();
        for (kind, credential) in [
            ("cookie", who.clone()),
            ("key", Credential::Bearer(key)),
            ("OAuth token", Credential::Bearer(token)),
        ] {
            let name = format!("{name} by {kind}");
            mcp_shows_what_may_be_read(&app, &credential, &name, reads, &hr_chunk).await;
        }
    }
}

#[actix_web::test]
async fn mcp_needs_a_key_or_a_session_and_refuses_other_sites_pages() {
    const SERVICE_TOKEN: &str = "service-token-of-the-matrix-0123456789";
    let app = TestApp::spawn_with_accounts(&[("BOR_ADMIN_TOKEN", SERVICE_TOKEN)]).await;
    app.add_user("ann", Role::Member).await;
    let cookie = app.sign_in("ann").await;
    let (key_id, key) = app.make_key(&cookie, "agent").await;
    let ping = json!({"jsonrpc": "2.0", "id": 1, "method": "ping"});
    let revoked = app.revoke_key(&cookie, &key_id).await;
    assert_eq!(revoked.status, 204, "{}", revoked.text());

    let challenge = format!(
        "Bearer resource_metadata=\"{}/.well-known/oauth-protected-resource\"",
        app.address
    );
    for (name, who) in [
        ("nobody", Credential::Nobody),
        (
            "the service token",
            Credential::Bearer(SERVICE_TOKEN.to_owned()),
        ),
        ("a revoked key", Credential::Bearer(key)),
        (
            "a made-up key",
            Credential::Bearer("bor_0123456789".to_owned()),
        ),
    ] {
        let reply = app.mcp(&who, ping.clone()).await;
        assert_eq!(reply.status, 401, "{name}: {}", reply.text());
        assert_eq!(reply.json()["error"]["code"], "unauthorized", "{name}");
        assert_eq!(
            reply.headers.get("www-authenticate").unwrap(),
            challenge.as_str(),
            "{name}"
        );
    }
    let cross_site = Credential::CookieFrom(cookie.clone(), "http://evil.example".to_owned());
    let reply = app.mcp(&cross_site, ping.clone()).await;
    assert_eq!(reply.status, 403, "{}", reply.text());
    assert_eq!(reply.json()["error"]["code"], "forbidden_origin");
    let reply = app
        .mcp(&Credential::Cookie(cookie.clone()), ping.clone())
        .await;
    assert_eq!(reply.status, 200, "{}", reply.text());

    // A web page of another site (a browser-based MCP client) comes with a key or a
    // token it holds itself; CORS lets it read the answer, never with a cookie.
    let (_, key) = app.make_key(&cookie, "page").await;
    let from_page = |credential: Option<&str>| {
        let request = TestApp::client()
            .post(format!("{}/mcp", app.address))
            .insert_header(("Origin", "http://inspector.example"));
        let request = match credential {
            Some(credential) => request.bearer_auth(credential),
            None => request,
        };
        async { Reply::read(request.send_json(&ping).await.unwrap()).await }
    };
    let reply = from_page(Some(&key)).await;
    assert_eq!(reply.status, 200, "{}", reply.text());
    assert_eq!(
        reply.headers.get("access-control-allow-origin").unwrap(),
        "*"
    );
    assert!(
        reply
            .headers
            .get("access-control-allow-credentials")
            .is_none()
    );
    let reply = from_page(None).await;
    assert_eq!(
        reply.status,
        401,
        "told how to get a token: {}",
        reply.text()
    );
    assert!(reply.headers.get("www-authenticate").is_some());
    assert!(
        reply
            .headers
            .get("access-control-expose-headers")
            .unwrap()
            .to_str()
            .unwrap()
            .contains("WWW-Authenticate")
    );
    let preflight = TestApp::client()
        .request(Method::OPTIONS, format!("{}/mcp", app.address))
        .insert_header(("Origin", "http://inspector.example"))
        .insert_header(("Access-Control-Request-Method", "POST"))
        .insert_header((
            "Access-Control-Request-Headers",
            "authorization, content-type",
        ))
        .send()
        .await
        .unwrap();
    let preflight = Reply::read(preflight).await;
    assert_eq!(preflight.status, 204);
    assert_eq!(
        preflight
            .headers
            .get("access-control-allow-origin")
            .unwrap(),
        "*"
    );
    let allowed = preflight
        .headers
        .get("access-control-allow-headers")
        .unwrap()
        .to_str()
        .unwrap();
    assert!(allowed.contains("Authorization"), "{allowed}");
    let reply = app.mcp(&Credential::Bearer(key), ping.clone()).await;
    assert_eq!(
        reply.status,
        200,
        "a program sends no Origin: {}",
        reply.text()
    );
    // No preflight lets a page of another site into the cookie-authenticated API.
    let api_preflight = TestApp::client()
        .request(Method::OPTIONS, format!("{}/api/keys", app.address))
        .insert_header(("Origin", "http://inspector.example"))
        .insert_header(("Access-Control-Request-Method", "POST"))
        .send()
        .await
        .unwrap();
    assert!(
        api_preflight
            .headers()
            .get("access-control-allow-origin")
            .is_none()
    );

    // With BOR_AUTH=off every request is the admin: a page of another site gets nothing
    // (DNS rebinding), whatever it sends.
    let open = TestApp::spawn().await;
    let from_page = TestApp::client()
        .post(format!("{}/mcp", open.address))
        .insert_header(("Origin", "http://evil.example"))
        .send_json(&ping)
        .await
        .unwrap();
    let reply = Reply::read(from_page).await;
    assert_eq!(reply.status, 403, "{}", reply.text());
    assert_eq!(reply.json()["error"]["code"], "forbidden_origin");
}

#[actix_web::test]
async fn the_oauth_routes_answer_every_caller_alike_and_a_token_opens_mcp_only() {
    const SERVICE_TOKEN: &str = "service-token-of-the-matrix-0123456789";
    let app = TestApp::spawn_with_accounts(&[("BOR_ADMIN_TOKEN", SERVICE_TOKEN)]).await;
    app.add_user("ann", Role::Member).await;
    app.add_user("bob", Role::Member).await;
    app.add_user("admin", Role::Admin).await;
    let ann_cookie = app.sign_in("ann").await;
    let bob_cookie = app.sign_in("bob").await;
    let admin_cookie = app.sign_in("admin").await;
    let (_, ann_key) = app.make_key(&ann_cookie, "ann's").await;
    let (_, ann_tokens) = app.oauth_tokens(&ann_cookie, "Editor").await;
    let (_, admin_tokens) = app.oauth_tokens(&admin_cookie, "Editor").await;
    let token =
        |tokens: &Value| Credential::Bearer(tokens["access_token"].as_str().unwrap().to_owned());
    let client = app.oauth_client("Matrix").await;
    let pairs = app.authorization_request(&client, &[]).await;
    let query = url::form_urlencoded::Serializer::new(String::new())
        .extend_pairs(&pairs)
        .finish();
    let authorize = format!("/oauth/authorize?{query}");

    // (who, sees the consent page)
    let everyone = [
        ("nobody", Credential::Nobody, false),
        (
            "a member's session",
            Credential::Cookie(ann_cookie.clone()),
            true,
        ),
        (
            "an admin's session",
            Credential::Cookie(admin_cookie.clone()),
            true,
        ),
        ("a member's key", Credential::Bearer(ann_key), true),
        (
            "the service token",
            Credential::Bearer(SERVICE_TOKEN.to_owned()),
            false,
        ),
        ("a member's OAuth token", token(&ann_tokens), false),
        ("an admin's OAuth token", token(&admin_tokens), false),
    ];
    for (name, who, consents) in &everyone {
        for path in [
            "/.well-known/oauth-authorization-server",
            "/.well-known/oauth-protected-resource",
            "/.well-known/oauth-protected-resource/mcp",
        ] {
            let reply = call(&app, who, Method::GET, path, None).await;
            assert_eq!(reply.status, 200, "{name}: {path}");
        }
        let registered = call(
            &app,
            who,
            Method::POST,
            "/oauth/register",
            Some(json!({"redirect_uris": ["https://app.example/cb"], "token_endpoint_auth_method": "none"})),
        )
        .await;
        assert_eq!(registered.status, 201, "{name}: {}", registered.text());
        // The token endpoints read the client's proof, never a person's credential.
        for path in ["/oauth/token", "/oauth/revoke"] {
            let reply = call(&app, who, Method::POST, path, Some(json!({}))).await;
            assert_eq!(reply.status, 400, "{name}: {path}: {}", reply.text());
            assert_eq!(reply.json()["error"], "invalid_request", "{name}: {path}");
        }
        let page = call(&app, who, Method::GET, &authorize, None).await;
        if *consents {
            assert_eq!(page.status, 200, "{name}: {}", page.text());
            assert!(page.text().contains("consent-form"), "{name}");
        } else {
            assert_eq!(page.status, 302, "{name}: {}", page.text());
            let location = page.headers.get("location").unwrap().to_str().unwrap();
            assert!(location.starts_with("/login?next="), "{name}: {location}");
        }
    }

    // An OAuth token is no credential anywhere but /mcp, an admin's neither.
    for (name, who) in [
        ("a member's", token(&ann_tokens)),
        ("an admin's", token(&admin_tokens)),
    ] {
        for (method, path) in [
            (Method::GET, "/api/collections"),
            (Method::GET, "/api/conversations"),
            (Method::GET, "/api/admin/users"),
            (Method::POST, "/api/keys"),
            (Method::GET, "/v1/models"),
        ] {
            let reply = call(&app, &who, method, path, Some(json!({"name": "x"}))).await;
            assert_eq!(reply.status, 401, "{name} token: {path}: {}", reply.text());
        }
        let pinged = app
            .mcp(&who, json!({"jsonrpc": "2.0", "id": 1, "method": "ping"}))
            .await;
        assert_eq!(pinged.status, 200, "{name} token on /mcp");
    }

    // Another person's grant is as absent as one that does not exist.
    let listed = call(
        &app,
        &Credential::Cookie(ann_cookie.clone()),
        Method::GET,
        "/api/keys",
        None,
    )
    .await
    .json();
    let grant = listed["keys"]
        .as_array()
        .unwrap()
        .iter()
        .find(|key| key["kind"] == "oauth")
        .unwrap()["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let absent = "00000000-0000-0000-0000-00000000dcba";
    let bob = Credential::Cookie(bob_cookie);
    let revoked = call(
        &app,
        &bob,
        Method::DELETE,
        &format!("/api/keys/{grant}"),
        None,
    )
    .await;
    let revoked_absent = call(
        &app,
        &bob,
        Method::DELETE,
        &format!("/api/keys/{absent}"),
        None,
    )
    .await;
    assert_eq!(as_if(&revoked, &grant, absent), plain(&revoked_absent));
    assert_eq!(revoked.status, 404);
    let still = app
        .mcp(
            &token(&ann_tokens),
            json!({"jsonrpc": "2.0", "id": 1, "method": "ping"}),
        )
        .await;
    assert_eq!(still.status, 200, "ann's grant stands");

    // The consent is a change by cookie: from bor's own pages only.
    let forged = app
        .oauth_consent(&ann_cookie, "http://evil.example", &pairs, "allow")
        .await;
    assert_eq!(forged.status, 403);
    assert_eq!(forged.json()["error"]["code"], "forbidden_origin");
}

#[actix_web::test]
async fn adding_and_deleting_needs_write_and_an_unreadable_collection_is_absent() {
    let app = TestApp::spawn_with_accounts(&[]).await;
    app.add_user("admin", Role::Admin).await;
    for member in ["outsider", "reader", "writer"] {
        app.add_user(member, Role::Member).await;
    }
    let admin = Credential::Cookie(app.sign_in("admin").await);
    call(
        &app,
        &admin,
        Method::POST,
        "/api/admin/collections",
        Some(json!({"name": "hr"})),
    )
    .await;
    let grants =
        json!([{"user": "reader", "access": "read"}, {"user": "writer", "access": "write"}]);
    let granted = call(
        &app,
        &admin,
        Method::PUT,
        "/api/admin/collections/hr/grants",
        Some(grants),
    )
    .await;
    assert_eq!(granted.status, 200, "{}", granted.text());
    let people = [
        (
            "outsider",
            Credential::Cookie(app.sign_in("outsider").await),
        ),
        ("reader", Credential::Cookie(app.sign_in("reader").await)),
        ("writer", Credential::Cookie(app.sign_in("writer").await)),
        ("admin", admin.clone()),
    ];
    for (at, (name, who)) in people.iter().enumerate() {
        let body = |collection: &str| json!({"title": format!("Note {at}"), "content": format!("note {at} of {name}"), "collection": collection});
        let added = call(&app, who, Method::POST, "/api/documents", Some(body("hr"))).await;
        let added_absent = call(
            &app,
            who,
            Method::POST,
            "/api/documents",
            Some(body("nosuch")),
        )
        .await;
        assert_eq!(added_absent.status, 404, "{name}");
        match *name {
            "outsider" => assert_eq!(
                as_if(&added, "hr", "nosuch"),
                plain(&added_absent),
                "{name}"
            ),
            "reader" => {
                assert_eq!(added.status, 403, "{name}: {}", added.text());
                assert_eq!(added.json()["error"]["code"], "forbidden");
            }
            _ => assert_eq!(added.status, 201, "{name}: {}", added.text()),
        }
        // Everyone may read `default`, but only admins write it.
        let to_default = call(
            &app,
            who,
            Method::POST,
            "/api/documents",
            Some(json!({"title": "d", "content": format!("default {at}")})),
        )
        .await;
        assert_eq!(
            to_default.status,
            if *name == "admin" { 201 } else { 403 },
            "{name}: {}",
            to_default.text()
        );
    }

    // A document in hr, deleted by each in turn: refused but for the writer and admin.
    let stored = call(
        &app,
        &admin,
        Method::POST,
        "/api/documents",
        Some(json!({"title": "Secret", "content": "hr only", "collection": "hr"})),
    )
    .await;
    let secret = stored.json()["id"].as_i64().expect("an id").to_string();
    let absent = "987654321";
    for (name, who) in &people[..2] {
        let deleted = call(
            &app,
            who,
            Method::DELETE,
            &format!("/api/documents/{secret}"),
            None,
        )
        .await;
        if *name == "outsider" {
            let deleted_absent = call(
                &app,
                who,
                Method::DELETE,
                &format!("/api/documents/{absent}"),
                None,
            )
            .await;
            assert_eq!(
                as_if(&deleted, &secret, absent),
                plain(&deleted_absent),
                "{name}"
            );
        } else {
            assert_eq!(deleted.status, 403, "{name}: {}", deleted.text());
        }
    }
    let deleted = call(
        &app,
        &people[2].1,
        Method::DELETE,
        &format!("/api/documents/{secret}"),
        None,
    )
    .await;
    assert_eq!(deleted.status, 204, "the writer: {}", deleted.text());
    // The member's own admin route stays closed.
    let admin_route = call(
        &app,
        &people[2].1,
        Method::POST,
        "/api/admin/documents",
        Some(json!({"title": "t", "content": "c", "collection": "hr"})),
    )
    .await;
    assert_eq!(admin_route.status, 403);
}

/// Another person's keys (`/api/admin/users/{id}/keys`), for every kind of caller: only
/// an admin (session, key or the service token) lists and revokes them; everyone else is
/// refused as about a person or a key that does not exist.
#[actix_web::test]
async fn only_admins_list_and_revoke_anothers_keys_and_refusals_do_not_tell_who_exists() {
    const SERVICE_TOKEN: &str = "service-token-of-the-matrix-0123456789";
    let app = TestApp::spawn_with_accounts(&[("BOR_ADMIN_TOKEN", SERVICE_TOKEN)]).await;
    let ann = app.add_user("ann", Role::Member).await;
    app.add_user("bob", Role::Member).await;
    app.add_user("admin", Role::Admin).await;
    let (ann_cookie, bob_cookie, admin_cookie) = (
        app.sign_in("ann").await,
        app.sign_in("bob").await,
        app.sign_in("admin").await,
    );
    let (bob_key_id, bob_key) = app.make_key(&bob_cookie, "bob's").await;
    let (_, admin_key) = app.make_key(&admin_cookie, "admin's").await;
    let absent_user = "00000000-0000-0000-0000-00000000abcd";
    let absent_key = "00000000-0000-0000-0000-00000000dcba";

    let refused = [
        ("nobody", Credential::Nobody),
        ("ann's session", Credential::Cookie(ann_cookie.clone())),
        ("bob's session", Credential::Cookie(bob_cookie)),
        ("bob's key", Credential::Bearer(bob_key.clone())),
    ];
    for (name, who) in &refused {
        let (ann_key_id, _) = app.make_key(&ann_cookie, "ann's").await;
        let listed = call(
            &app,
            who,
            Method::GET,
            &format!("/api/admin/users/{ann}/keys"),
            None,
        )
        .await;
        let listed_absent = call(
            &app,
            who,
            Method::GET,
            &format!("/api/admin/users/{absent_user}/keys"),
            None,
        )
        .await;
        assert!(
            [401, 403].contains(&listed.status),
            "{name}: {}",
            listed.text()
        );
        assert_eq!(
            as_if(&listed, &ann, absent_user),
            plain(&listed_absent),
            "{name}"
        );
        let revoke = |user: &str, key: &str| format!("/api/admin/users/{user}/keys/{key}");
        let revoked = call(&app, who, Method::DELETE, &revoke(&ann, &ann_key_id), None).await;
        let revoked_absent = call(
            &app,
            who,
            Method::DELETE,
            &revoke(absent_user, absent_key),
            None,
        )
        .await;
        assert!(
            [401, 403].contains(&revoked.status),
            "{name}: {}",
            revoked.text()
        );
        let as_if_absent = revoked
            .text()
            .replace(&ann, absent_user)
            .replace(&ann_key_id, absent_key);
        assert_eq!(
            (revoked.status, as_if_absent),
            plain(&revoked_absent),
            "{name}"
        );
        let still = call(
            &app,
            &Credential::Cookie(ann_cookie.clone()),
            Method::GET,
            "/api/keys",
            None,
        )
        .await;
        assert!(
            still.text().contains(&ann_key_id),
            "{name}: ann's key is kept"
        );
    }

    // An admin's session sent from another site may read (a GET changes nothing) but
    // not revoke.
    let (ann_key_id, _) = app.make_key(&ann_cookie, "ann's").await;
    let cross_site = Credential::CookieFrom(admin_cookie.clone(), "http://evil.example".to_owned());
    let revoked = call(
        &app,
        &cross_site,
        Method::DELETE,
        &format!("/api/admin/users/{ann}/keys/{ann_key_id}"),
        None,
    )
    .await;
    assert_eq!(revoked.status, 403, "{}", revoked.text());
    assert_eq!(revoked.json()["error"]["code"], "forbidden_origin");
    let still = call(
        &app,
        &Credential::Cookie(ann_cookie.clone()),
        Method::GET,
        "/api/keys",
        None,
    )
    .await;
    assert!(still.text().contains(&ann_key_id), "ann's key is kept");

    let admins = [
        ("an admin's session", Credential::Cookie(admin_cookie)),
        ("an admin's key", Credential::Bearer(admin_key)),
        (
            "the service token",
            Credential::Bearer(SERVICE_TOKEN.to_owned()),
        ),
    ];
    for (name, who) in &admins {
        let (ann_key_id, _) = app.make_key(&ann_cookie, "ann's").await;
        let listed = call(
            &app,
            who,
            Method::GET,
            &format!("/api/admin/users/{ann}/keys"),
            None,
        )
        .await;
        assert_eq!(listed.status, 200, "{name}: {}", listed.text());
        assert!(listed.text().contains(&ann_key_id), "{name}");
        assert!(
            !listed.text().contains(&bob_key_id),
            "{name}: ann's keys only"
        );
        let absent = call(
            &app,
            who,
            Method::GET,
            &format!("/api/admin/users/{absent_user}/keys"),
            None,
        )
        .await;
        assert_eq!(absent.status, 404, "{name}");
        // Bob's key named under ann is no key of hers: the answer about an absent key.
        let crossed = call(
            &app,
            who,
            Method::DELETE,
            &format!("/api/admin/users/{ann}/keys/{bob_key_id}"),
            None,
        )
        .await;
        let missing = call(
            &app,
            who,
            Method::DELETE,
            &format!("/api/admin/users/{ann}/keys/{absent_key}"),
            None,
        )
        .await;
        assert_eq!(missing.status, 404, "{name}");
        assert_eq!(
            as_if(&crossed, &bob_key_id, absent_key),
            plain(&missing),
            "{name}"
        );
        let revoked = call(
            &app,
            who,
            Method::DELETE,
            &format!("/api/admin/users/{ann}/keys/{ann_key_id}"),
            None,
        )
        .await;
        assert_eq!(revoked.status, 204, "{name}: {}", revoked.text());
        let still = call(
            &app,
            &Credential::Cookie(ann_cookie.clone()),
            Method::GET,
            "/api/keys",
            None,
        )
        .await;
        assert!(!still.text().contains(&ann_key_id), "{name}: revoked");
    }
    let bobs = call(
        &app,
        &Credential::Bearer(bob_key),
        Method::GET,
        "/api/keys",
        None,
    )
    .await;
    assert_eq!(bobs.status, 200, "bob's key was never revoked");
}

/// Feedback's routes for every kind of caller: a turn's rating by its asker only (by
/// session or key; anyone else is told of a turn that does not exist), the review
/// queue and the evaluation set by admins only (session, key, service token), a
/// cross-site admin cookie reading but changing nothing.
#[actix_web::test]
async fn a_rating_is_the_askers_and_the_review_is_the_admins() {
    const SERVICE_TOKEN: &str = "service-token-of-the-feedback-matrix-42";
    let app = TestApp::spawn_with_accounts(&[("BOR_ADMIN_TOKEN", SERVICE_TOKEN)]).await;
    app.add_user("ann", Role::Member).await;
    app.add_user("bob", Role::Member).await;
    app.add_user("admin", Role::Admin).await;
    let (ann_cookie, bob_cookie, admin_cookie) = (
        app.sign_in("ann").await,
        app.sign_in("bob").await,
        app.sign_in("admin").await,
    );
    let (_, ann_key) = app.make_key(&ann_cookie, "ann's").await;
    let (_, bob_key) = app.make_key(&bob_cookie, "bob's").await;
    let (_, admin_key) = app.make_key(&admin_cookie, "admin's").await;
    let ann = Credential::Cookie(ann_cookie.clone());
    let (done, _) = ask(&app, &ann, json!({"message": "Where is the descaler?"})).await;
    let turn = done["turn_id"].as_str().expect("a turn id").to_owned();
    let absent = "00000000-0000-0000-0000-00000000beef";
    let rating = || Some(json!({"rating": "down", "reason": "missing_source"}));
    let rate_path = |id: &str| format!("/api/turns/{id}/feedback");

    // The asker, by session and by key.
    for who in [ann.clone(), Credential::Bearer(ann_key)] {
        let rated = call(&app, &who, Method::PUT, &rate_path(&turn), rating()).await;
        assert_eq!(rated.status, 200, "{}", rated.text());
    }
    // Everyone else: as about a turn that does not exist (or not signed in at all).
    let others = [
        ("nobody", Credential::Nobody),
        ("bob's session", Credential::Cookie(bob_cookie)),
        ("bob's key", Credential::Bearer(bob_key)),
        (
            "an admin's session",
            Credential::Cookie(admin_cookie.clone()),
        ),
        ("an admin's key", Credential::Bearer(admin_key.clone())),
        (
            "the service token",
            Credential::Bearer(SERVICE_TOKEN.to_owned()),
        ),
    ];
    for (name, who) in &others {
        for method in [Method::PUT, Method::DELETE] {
            let body = (method == Method::PUT).then(rating).flatten();
            let theirs = call(&app, who, method.clone(), &rate_path(&turn), body.clone()).await;
            let missing = call(&app, who, method.clone(), &rate_path(absent), body).await;
            assert!(
                [401, 404].contains(&theirs.status),
                "{name} {method}: {}",
                theirs.text()
            );
            assert_eq!(
                as_if(&theirs, &turn, absent),
                plain(&missing),
                "{name} {method}"
            );
        }
    }
    let kept = call(&app, &ann, Method::GET, "/api/conversations", None).await;
    assert_eq!(kept.status, 200);

    // The admin routes: admins by every way in; members, nobody and a cross-site cookie
    // refused before anything is read or changed.
    let admin_routes = |id: &str| {
        [
            (Method::GET, "/api/admin/feedback".to_owned(), None),
            (
                Method::POST,
                format!("/api/admin/feedback/{id}/search"),
                Some(json!({"query": "descaler"})),
            ),
            (
                Method::PUT,
                format!("/api/admin/feedback/{id}/expected"),
                Some(json!({"chunk_ids": []})),
            ),
            (Method::GET, "/api/admin/eval/feedback".to_owned(), None),
            (Method::POST, "/api/admin/eval/feedback".to_owned(), None),
        ]
    };
    let refused = [
        ("nobody", Credential::Nobody, 401),
        ("ann's session", ann.clone(), 403),
        (
            "a cross-site admin cookie",
            Credential::CookieFrom(admin_cookie.clone(), "http://evil.example".to_owned()),
            403,
        ),
    ];
    for (name, who, status) in &refused {
        for (method, path, body) in admin_routes(&turn) {
            if name.starts_with("a cross-site") && method == Method::GET {
                continue;
            }
            let reply = call(&app, who, method.clone(), &path, body).await;
            assert_eq!(
                reply.status,
                *status,
                "{name} {method} {path}: {}",
                reply.text()
            );
        }
    }
    let cross_site = Credential::CookieFrom(admin_cookie.clone(), "http://evil.example".to_owned());
    let read = call(&app, &cross_site, Method::GET, "/api/admin/feedback", None).await;
    assert_eq!(read.status, 200, "a GET changes nothing: {}", read.text());
    let admins = [
        ("an admin's session", Credential::Cookie(admin_cookie)),
        ("an admin's key", Credential::Bearer(admin_key)),
        (
            "the service token",
            Credential::Bearer(SERVICE_TOKEN.to_owned()),
        ),
    ];
    for (name, who) in &admins {
        for (method, path, body) in admin_routes(&turn) {
            let reply = call(&app, who, method.clone(), &path, body).await;
            assert_eq!(
                reply.status,
                200,
                "{name} {method} {path}: {}",
                reply.text()
            );
        }
        // A turn nobody rated is absent to the review, as one that does not exist.
        let (unrated, _) = ask(&app, &ann, json!({"message": "And the kettle?"})).await;
        let unrated = unrated["turn_id"].as_str().expect("a turn id").to_owned();
        for (method, path, body) in admin_routes(&unrated)
            .into_iter()
            .filter(|(_, path, _)| path.contains(&unrated))
        {
            let reply = call(&app, who, method.clone(), &path, body.clone()).await;
            let missing = call(&app, who, method, &path.replace(&unrated, absent), body).await;
            assert_eq!(reply.status, 404, "{name} {path}");
            assert_eq!(
                as_if(&reply, &unrated, absent),
                plain(&missing),
                "{name} {path}"
            );
        }
    }
}

/// Starts a turn as the holder of `key` and leaves its response at once (the turn goes
/// on); its id. `token_delay_ms` paces the answer.
async fn start_turn_and_leave(app: &TestApp, key: &str, token_delay_ms: u64) -> String {
    let question = directed(
        "Tell me a story",
        json!({"reply": "once upon a time there was a story", "token_delay_ms": token_delay_ms}),
    );
    let response = TestApp::client()
        .post(format!("{}/api/chat", app.address))
        .bearer_auth(key)
        .insert_header(("Content-Type", "application/json"))
        .send_body(json!({ "message": question }).to_string())
        .await
        .unwrap_or_else(|e| panic!("chat request: {e}"));
    assert_eq!(response.status(), 200);
    turn_id_of(response.headers())
}

/// Everyone but the turn's owner gets, for its events and its stop, the answer about a
/// turn that does not exist.
async fn only_the_owner_sees_the_turn(
    app: &TestApp,
    strangers: &[(&str, Credential)],
    turn_id: &str,
) {
    let absent_turn = "00000000-0000-0000-0000-0000000000aa";
    for (name, who) in strangers {
        for (method, route) in [(Method::GET, "events"), (Method::POST, "stop")] {
            let path = |id: &str| format!("/api/turns/{id}/{route}");
            let theirs = call(app, who, method.clone(), &path(turn_id), None).await;
            let absent = call(app, who, method.clone(), &path(absent_turn), None).await;
            assert!(
                [401, 404].contains(&theirs.status),
                "{name} {route}: {}",
                theirs.text()
            );
            assert_eq!(
                as_if(&theirs, turn_id, absent_turn),
                plain(&absent),
                "{name} {route}"
            );
        }
    }
}

/// The asker of the turns of a matrix, `ann` (her session cookie and her key), and
/// everyone else: nobody, another member and an admin by session and by key, and the
/// service token `service_token`.
async fn ann_and_strangers(
    app: &TestApp,
    service_token: &str,
) -> (String, String, [(&'static str, Credential); 6]) {
    for (name, role) in [
        ("ann", Role::Member),
        ("bob", Role::Member),
        ("admin", Role::Admin),
    ] {
        app.add_user(name, role).await;
    }
    let (ann_cookie, bob_cookie, admin_cookie) = (
        app.sign_in("ann").await,
        app.sign_in("bob").await,
        app.sign_in("admin").await,
    );
    let (_, ann_key) = app.make_key(&ann_cookie, "ann's").await;
    let (_, bob_key) = app.make_key(&bob_cookie, "bob's").await;
    let (_, admin_key) = app.make_key(&admin_cookie, "admin's").await;
    let strangers = [
        ("nobody", Credential::Nobody),
        ("bob's session", Credential::Cookie(bob_cookie)),
        ("bob's key", Credential::Bearer(bob_key)),
        ("an admin's session", Credential::Cookie(admin_cookie)),
        ("an admin's key", Credential::Bearer(admin_key)),
        (
            "the service token",
            Credential::Bearer(service_token.to_owned()),
        ),
    ];
    (ann_cookie, ann_key, strangers)
}

#[actix_web::test]
async fn a_turn_is_followed_and_stopped_by_its_owner_only() {
    const SERVICE_TOKEN: &str = "service-token-of-the-matrix-0123456789";
    let app = TestApp::spawn_with_accounts(&[("BOR_ADMIN_TOKEN", SERVICE_TOKEN)]).await;
    let (ann_cookie, ann_key, strangers) = ann_and_strangers(&app, SERVICE_TOKEN).await;

    let turn_id = start_turn_and_leave(&app, &ann_key, 200).await;
    only_the_owner_sees_the_turn(&app, &strangers, &turn_id).await;
    let stop = format!("/api/turns/{turn_id}/stop");
    let events = format!("/api/turns/{turn_id}/events");
    // A stop sent with the owner's cookie from another site is refused.
    let cross_site = Credential::CookieFrom(ann_cookie.clone(), "http://evil.example".to_owned());
    let refused = call(&app, &cross_site, Method::POST, &stop, None).await;
    assert_eq!(refused.status, 403, "{}", refused.text());
    assert_eq!(refused.json()["error"]["code"], "forbidden_origin");

    let stopped = call(
        &app,
        &Credential::Cookie(ann_cookie.clone()),
        Method::POST,
        &stop,
        None,
    )
    .await;
    assert_eq!(stopped.status, 204, "{}", stopped.text());
    for who in [
        Credential::Bearer(ann_key.clone()),
        Credential::Cookie(ann_cookie.clone()),
        cross_site,
    ] {
        let read = call(&app, &who, Method::GET, &events, None).await;
        assert_eq!(read.status, 200, "{}", read.text());
        let done = done_frame(&read.text()).unwrap_or_else(|| panic!("{}", read.text()));
        assert_eq!(done["stopped"], true);
    }
    // Ended, it is still nobody else's.
    only_the_owner_sees_the_turn(&app, &strangers, &turn_id).await;
}

#[actix_web::test]
async fn a_stored_turn_is_read_again_by_its_owner_only() {
    let app = TestApp::spawn_with_accounts(&[("BOR_TURN_REPLAY_SECONDS", "0")]).await;
    for (name, role) in [
        ("ann", Role::Member),
        ("bob", Role::Member),
        ("admin", Role::Admin),
    ] {
        app.add_user(name, role).await;
    }
    let ann_cookie = app.sign_in("ann").await;
    let (_, ann_key) = app.make_key(&ann_cookie, "ann's").await;
    let strangers = [
        ("nobody", Credential::Nobody),
        (
            "bob's session",
            Credential::Cookie(app.sign_in("bob").await),
        ),
        (
            "an admin's session",
            Credential::Cookie(app.sign_in("admin").await),
        ),
    ];
    let turn_id = start_turn_and_leave(&app, &ann_key, 0).await;
    app.wait_for_rows(1).await;
    let events = format!("/api/turns/{turn_id}/events");
    let mut from_the_row = None;
    // The row is written, and the hub lets the ended turn go at once.
    assert!(
        eventually(async || {
            let read = call(
                &app,
                &Credential::Bearer(ann_key.clone()),
                Method::GET,
                &events,
                None,
            )
            .await;
            let text = read.text();
            let is_row = text.starts_with("id: 1\n") || text.contains("\nid: 1\n");
            let answered = read.status == 200 && text.matches("event: ").count() == 2;
            if answered && is_row {
                from_the_row = Some(text);
            }
            from_the_row.is_some()
        })
        .await,
        "the owner reads the stored answer"
    );
    let text = from_the_row.unwrap_or_default();
    assert!(
        text.contains("once upon a time there was a story"),
        "{text}"
    );
    only_the_owner_sees_the_turn(&app, &strangers, &turn_id).await;
}

/// Limits and everyone's usage are the admins'; each person reads their own usage.
/// A member's refusal is the same whether the limit asked about exists or not.
#[actix_web::test]
async fn limits_and_usage_are_for_admins_and_each_person_reads_their_own() {
    let app = TestApp::spawn_with_accounts(&[]).await;
    app.add_user("admin", Role::Admin).await;
    app.add_user("member", Role::Member).await;
    let admin_cookie = app.sign_in("admin").await;
    let admin = Credential::Cookie(admin_cookie.clone());
    let member_cookie = app.sign_in("member").await;
    let (_, member_key) = app.make_key(&member_cookie, "script").await;
    let (_, admin_key) = app.make_key(&admin_cookie, "admin script").await;
    let set = call(
        &app,
        &admin,
        Method::POST,
        "/api/admin/limits",
        Some(json!({"user": "member", "turns_per_day": 50})),
    )
    .await;
    assert_eq!(set.status, 201, "{}", set.text());
    let existing = set.json()["id"].as_i64().unwrap();
    let absent = existing + 1000;
    let body = || Some(json!({"everyone": true, "turns_per_day": 100}));

    let refused_as_member = [
        Credential::Cookie(member_cookie.clone()),
        Credential::Bearer(member_key.clone()),
    ];
    for who in &refused_as_member {
        for (method, path, body) in [
            (Method::GET, "/api/admin/limits".to_owned(), None),
            (Method::POST, "/api/admin/limits".to_owned(), body()),
            (Method::GET, "/api/admin/usage".to_owned(), None),
        ] {
            let reply = call(&app, who, method.clone(), &path, body).await;
            assert_eq!(
                reply.status,
                403,
                "{method} {path} as a member: {}",
                reply.text()
            );
        }
        let of_existing = call(
            &app,
            who,
            Method::DELETE,
            &format!("/api/admin/limits/{existing}"),
            None,
        )
        .await;
        let of_absent = call(
            &app,
            who,
            Method::DELETE,
            &format!("/api/admin/limits/{absent}"),
            None,
        )
        .await;
        assert_eq!(of_existing.status, 403);
        assert_eq!(plain(&of_existing), plain(&of_absent));
        assert_eq!(
            call(&app, who, Method::GET, "/api/usage", None)
                .await
                .status,
            200
        );
    }
    for (method, path) in [
        (Method::GET, "/api/admin/limits"),
        (Method::POST, "/api/admin/limits"),
        (Method::DELETE, "/api/admin/limits/1"),
        (Method::GET, "/api/admin/usage"),
        (Method::GET, "/api/usage"),
    ] {
        let reply = call(&app, &Credential::Nobody, method.clone(), path, body()).await;
        assert_eq!(reply.status, 401, "{method} {path} signed out");
    }
    let elsewhere = Credential::CookieFrom(admin_cookie.clone(), "http://evil.example".to_owned());
    for (method, path) in [
        (Method::POST, "/api/admin/limits".to_owned()),
        (Method::DELETE, format!("/api/admin/limits/{existing}")),
    ] {
        let reply = call(&app, &elsewhere, method.clone(), &path, body()).await;
        assert_eq!(reply.status, 403, "{method} {path} from another site");
        assert_eq!(reply.json()["error"]["code"], "forbidden_origin");
    }

    for who in [admin.clone(), Credential::Bearer(admin_key)] {
        assert_eq!(
            call(&app, &who, Method::GET, "/api/admin/limits", None)
                .await
                .status,
            200
        );
        assert_eq!(
            call(&app, &who, Method::GET, "/api/admin/usage", None)
                .await
                .status,
            200
        );
        assert_eq!(
            call(&app, &who, Method::GET, "/api/usage", None)
                .await
                .status,
            200
        );
        assert_eq!(
            call(&app, &who, Method::POST, "/api/admin/limits", body())
                .await
                .status,
            201
        );
    }
    let gone = call(
        &app,
        &admin,
        Method::DELETE,
        &format!("/api/admin/limits/{existing}"),
        None,
    )
    .await;
    assert_eq!(gone.status, 204);
    let again = call(
        &app,
        &admin,
        Method::DELETE,
        &format!("/api/admin/limits/{existing}"),
        None,
    )
    .await;
    assert_eq!(again.status, 404);
}

#[actix_web::test]
async fn the_admin_document_list_and_sections_are_for_admins_and_a_refusal_names_nothing() {
    let app = TestApp::spawn_with_accounts(&[]).await;
    app.add_user("admin", Role::Admin).await;
    app.add_user("member", Role::Member).await;
    let admin_cookie = app.sign_in("admin").await;
    let admin = Credential::Cookie(admin_cookie.clone());
    let member_cookie = app.sign_in("member").await;
    let (_, member_key) = app.make_key(&member_cookie, "script").await;
    let (_, admin_key) = app.make_key(&admin_cookie, "admin script").await;
    let made = call(
        &app,
        &admin,
        Method::POST,
        "/api/admin/collections",
        Some(json!({"name": "hr"})),
    )
    .await;
    assert_eq!(made.status, 201, "{}", made.text());
    let stored = call(
        &app,
        &admin,
        Method::POST,
        "/api/admin/documents",
        Some(json!({"title": "Salary bands", "content": HR_TEXT, "collection": "hr"})),
    )
    .await;
    assert_eq!(stored.status, 201, "{}", stored.text());

    for who in [
        Credential::Cookie(member_cookie.clone()),
        Credential::Bearer(member_key.clone()),
    ] {
        let whole = call(&app, &who, Method::GET, "/api/admin/documents", None).await;
        assert_eq!(whole.status, 403, "{}", whole.text());
        assert_eq!(whole.json()["error"]["code"], "forbidden");
        let of_hr = call(
            &app,
            &who,
            Method::GET,
            "/api/admin/documents?collection=hr",
            None,
        )
        .await;
        let of_absent = call(
            &app,
            &who,
            Method::GET,
            "/api/admin/documents?collection=nosuch",
            None,
        )
        .await;
        assert_eq!(
            plain(&of_hr),
            plain(&of_absent),
            "hr is not told from an absent one"
        );
        assert!(!of_hr.text().contains("Salary"), "{}", of_hr.text());
    }
    let signed_out = call(
        &app,
        &Credential::Nobody,
        Method::GET,
        "/api/admin/documents",
        None,
    )
    .await;
    assert_eq!(signed_out.status, 401);

    for who in [admin.clone(), Credential::Bearer(admin_key)] {
        let listed = call(
            &app,
            &who,
            Method::GET,
            "/api/admin/documents?collection=hr",
            None,
        )
        .await;
        assert_eq!(listed.status, 200, "{}", listed.text());
        assert_eq!(listed.json()["documents"][0]["title"], "Salary bands");
    }

    // The sections are the admin page for an admin; a member gets the same page (which
    // tells them it is not theirs); an address that is no section is the missing page.
    let page = call(&app, &admin, Method::GET, "/admin", None).await.text();
    for section in ["people", "documents", "audit"] {
        let path = format!("/admin/{section}");
        for who in [&admin, &Credential::Cookie(member_cookie.clone())] {
            let reply = call(&app, who, Method::GET, &path, None).await;
            assert_eq!(reply.status, 200, "{path}");
            assert_eq!(reply.text(), page, "{path} is the admin page");
        }
        let out = call(&app, &Credential::Nobody, Method::GET, &path, None).await;
        assert_eq!(out.status, 302, "{path} signed out");
    }
    let missing = call(&app, &admin, Method::GET, "/admin/nosuch", None).await;
    assert_eq!(missing.status, 404);
    assert!(missing.text().contains("<html"), "a page, not JSON");
}

/// A turn is asked again (`version_of` on `POST /api/chat`) by its asker only, by
/// session or key; anyone else, and anyone naming a turn that is still running but not
/// theirs, is told of a turn that does not exist.
#[actix_web::test]
async fn a_turn_is_asked_again_by_its_asker_only() {
    const SERVICE_TOKEN: &str = "service-token-of-the-version-matrix-7";
    let app = TestApp::spawn_with_accounts(&[("BOR_ADMIN_TOKEN", SERVICE_TOKEN)]).await;
    let (ann_cookie, ann_key, strangers) = ann_and_strangers(&app, SERVICE_TOKEN).await;
    let ann = Credential::Cookie(ann_cookie);
    let (done, _) = ask(&app, &ann, json!({"message": "Where is the descaler?"})).await;
    let turn = done["turn_id"].as_str().expect("a turn id").to_owned();
    let absent = "00000000-0000-0000-0000-00000000cafe";
    let again = |id: &str| Some(json!({"message": "Where is the descaler?", "version_of": id}));
    // Slow enough to be running still when the last of the refusals below is asked.
    let running = start_turn_and_leave(&app, &ann_key, 2_000).await;
    for (name, who) in &strangers {
        let missing = call(&app, who, Method::POST, "/api/chat", again(absent)).await;
        for theirs in [&turn, &running] {
            let reply = call(&app, who, Method::POST, "/api/chat", again(theirs)).await;
            assert!(
                [401, 404].contains(&reply.status),
                "{name}: {}",
                reply.text()
            );
            assert_eq!(as_if(&reply, theirs, absent), plain(&missing), "{name}");
        }
    }
    let busy = call(&app, &ann, Method::POST, "/api/chat", again(&running)).await;
    assert_eq!(busy.status, 409, "{}", busy.text());

    // The asker, by session and by key: each a version of the same turn.
    let ann_by_key = Credential::Bearer(ann_key);
    let mut conversation = String::new();
    for who in [&ann, &ann_by_key] {
        let (version, _) = ask(&app, who, again(&turn).unwrap_or_default()).await;
        assert_eq!(version["conversation_id"], done["conversation_id"]);
        conversation = version["conversation_id"]
            .as_str()
            .unwrap_or_default()
            .to_owned();
    }
    // Both versions' rows are written (they follow their streams' ends).
    let written = eventually(async || {
        let rows = app.query_log().await;
        rows.iter().filter(|row| row.version_of.is_some()).count() == 2
    })
    .await;
    assert!(written, "the versions' rows");
    let loaded = call(
        &app,
        &ann,
        Method::GET,
        &format!("/api/conversations/{conversation}"),
        None,
    )
    .await;
    let turns = loaded.json()["turns"].clone();
    assert_eq!(turns.as_array().map(Vec::len), Some(1), "{turns}");
    assert_eq!(turns[0]["versions"].as_array().map(Vec::len), Some(3));
}
