//! bor as the OAuth authorization server of its `/mcp` (docs/MCP.md, "OAuth"): the
//! metadata, registration, the consent page, the code exchange and refresh, and every
//! refusal with its RFC 6749 / 7591 / 8707 code.

use awc::http::Method;
use bor::db::users::Role;
use serde_json::{Value, json};

use crate::support::*;

/// Where two instances of one bor are reached (their tokens are for its `/mcp`).
const PUBLIC: &str = "http://bor.test";

fn ping() -> Value {
    json!({"jsonrpc": "2.0", "id": 1, "method": "ping"})
}

fn error_of(reply: &Reply) -> String {
    reply.json()["error"]
        .as_str()
        .unwrap_or_default()
        .to_owned()
}

#[actix_web::test]
async fn the_metadata_name_every_endpoint_and_bor_as_the_authorization_server() {
    let app = TestApp::spawn_with_accounts(&[]).await;
    let metadata = app
        .get("/.well-known/oauth-authorization-server", None)
        .await;
    assert_eq!(metadata.status, 200, "{}", metadata.text());
    let at = |path: &str| format!("{}{path}", app.address);
    assert_eq!(
        metadata.json(),
        json!({
            "issuer": app.address,
            "authorization_endpoint": at("/oauth/authorize"),
            "token_endpoint": at("/oauth/token"),
            "registration_endpoint": at("/oauth/register"),
            "revocation_endpoint": at("/oauth/revoke"),
            "response_types_supported": ["code"],
            "grant_types_supported": ["authorization_code", "refresh_token"],
            "code_challenge_methods_supported": ["S256"],
            "token_endpoint_auth_methods_supported": ["none", "client_secret_post", "client_secret_basic"],
            "revocation_endpoint_auth_methods_supported": ["none", "client_secret_post", "client_secret_basic"],
        })
    );
    let resource = app.get("/.well-known/oauth-protected-resource", None).await;
    assert_eq!(
        resource.json()["authorization_servers"],
        json!([app.address])
    );
}

#[actix_web::test]
async fn clients_register_with_safe_redirect_uris_and_a_secret_kept_as_its_hash() {
    let app = TestApp::spawn_with_accounts(&[]).await;
    let public = app
        .oauth_register(&json!({
            "client_name": "Editor",
            "redirect_uris": ["http://localhost:6274/callback", "https://claude.ai/api/mcp/auth_callback"],
            "token_endpoint_auth_method": "none",
            "grant_types": ["authorization_code", "refresh_token"],
            "response_types": ["code"],
            "scope": "anything else is read by nobody",
        }))
        .await;
    assert_eq!(public.status, 201, "{}", public.text());
    let public = public.json();
    assert_eq!(public["token_endpoint_auth_method"], "none");
    assert!(public.get("client_secret").is_none(), "{public}");

    let confidential = app
        .oauth_register(&json!({"redirect_uris": [REDIRECT_URI]}))
        .await;
    assert_eq!(confidential.status, 201, "{}", confidential.text());
    let confidential = confidential.json();
    assert_eq!(
        confidential["token_endpoint_auth_method"],
        "client_secret_basic"
    );
    assert_eq!(confidential["client_secret_expires_at"], 0);
    let secret = confidential["client_secret"].as_str().unwrap();
    assert!(secret.starts_with("bor_ocs_"), "{secret}");
    let stored: Vec<(String, Option<String>)> = {
        use bor::db::schema::oauth_clients::dsl::*;
        use diesel::prelude::*;
        use diesel_async::RunQueryDsl;
        let mut conn = app.pool.get().await.unwrap();
        oauth_clients
            .select((id, secret_sha256))
            .load(&mut conn)
            .await
            .unwrap()
    };
    let kept = stored
        .iter()
        .find(|(client, _)| client == confidential["client_id"].as_str().unwrap())
        .and_then(|(_, hash)| hash.clone())
        .unwrap();
    assert_eq!(kept, bor::auth::secret::sha256_hex(secret));

    let many: Vec<String> = (0..21)
        .map(|n| format!("https://app.example/{n}"))
        .collect();
    for (body, code) in [
        (
            json!({"redirect_uris": ["http://app.example/callback"]}),
            "invalid_redirect_uri",
        ),
        (
            json!({"redirect_uris": ["https://app.example/cb#part"]}),
            "invalid_redirect_uri",
        ),
        (
            json!({"redirect_uris": ["javascript:alert(1)"]}),
            "invalid_redirect_uri",
        ),
        (json!({"redirect_uris": []}), "invalid_redirect_uri"),
        (json!({"redirect_uris": many}), "invalid_redirect_uri"),
        (json!({"client_name": "x"}), "invalid_client_metadata"),
        (
            json!({"redirect_uris": [REDIRECT_URI], "token_endpoint_auth_method": "private_key_jwt"}),
            "invalid_client_metadata",
        ),
        (
            json!({"redirect_uris": [REDIRECT_URI], "grant_types": ["client_credentials"]}),
            "invalid_client_metadata",
        ),
        (
            json!({"redirect_uris": [REDIRECT_URI], "client_name": "n".repeat(101)}),
            "invalid_client_metadata",
        ),
        (json!(["not an object"]), "invalid_client_metadata"),
    ] {
        let reply = app.oauth_register(&body).await;
        assert_eq!(reply.status, 400, "{body}: {}", reply.text());
        assert_eq!(error_of(&reply), code, "{body}");
    }
    let huge = json!({"redirect_uris": [REDIRECT_URI], "client_name": "x".repeat(20_000)});
    let reply = app.oauth_register(&huge).await;
    assert_eq!(reply.status, 413, "{}", reply.text());
    assert_eq!(error_of(&reply), "invalid_client_metadata");
}

#[actix_web::test]
async fn the_consent_page_names_the_client_and_what_it_may_read_and_refusals_go_where_they_should()
{
    let app = TestApp::spawn_with_accounts(&[]).await;
    app.add_user("ann", Role::Member).await;
    let cookie = app.sign_in("ann").await;
    let registered = app
        .oauth_register(&json!({
            "client_name": "<b>Editor</b>",
            "redirect_uris": [REDIRECT_URI],
            "token_endpoint_auth_method": "none",
        }))
        .await
        .json();
    let client = OAuthClient {
        id: registered["client_id"].as_str().unwrap().to_owned(),
        secret: None,
    };
    let pairs = app.authorization_request(&client, &[]).await;

    // Not signed in: to the login page, and back here after it.
    let reply = app.oauth_authorize(None, &pairs).await;
    assert_eq!(reply.status, 302);
    let location = reply.headers.get("location").unwrap().to_str().unwrap();
    assert!(
        location.starts_with("/login?next=%2Foauth%2Fauthorize%3F"),
        "{location}"
    );

    let page = app.oauth_authorize(Some(&cookie), &pairs).await;
    assert_eq!(page.status, 200, "{}", page.text());
    let html = page.text();
    assert!(
        html.contains("&lt;b&gt;Editor&lt;/b&gt;"),
        "escaped: {html}"
    );
    assert!(!html.contains("<b>Editor"), "{html}");
    assert!(html.contains("<li>default</li>"), "{html}");
    let policy = page
        .headers
        .get("content-security-policy")
        .unwrap()
        .to_str()
        .unwrap();
    assert!(
        policy.contains("form-action 'self' http://127.0.0.1:33418"),
        "{policy}"
    );

    // An unknown client or a redirect URI it did not register: a page, no redirect.
    for changes in [
        vec![("client_id", "no-such-client")],
        vec![("redirect_uri", "https://evil.example/callback")],
    ] {
        let reply = app
            .oauth_authorize(
                Some(&cookie),
                &app.authorization_request(&client, &changes).await,
            )
            .await;
        assert_eq!(reply.status, 400, "{changes:?}");
        assert!(reply.headers.get("location").is_none(), "{changes:?}");
        assert!(reply.text().contains("id=\"refusal\""), "{changes:?}");
    }
    // Other faults go back to the client, with its state.
    for (changes, code) in [
        (vec![("code_challenge", "")], "invalid_request"),
        (vec![("code_challenge_method", "plain")], "invalid_request"),
        (
            vec![("response_type", "token")],
            "unsupported_response_type",
        ),
        (
            vec![("resource", "https://other.example/mcp")],
            "invalid_target",
        ),
    ] {
        let reply = app
            .oauth_authorize(
                Some(&cookie),
                &app.authorization_request(&client, &changes).await,
            )
            .await;
        assert_eq!(reply.status, 302, "{changes:?}: {}", reply.text());
        assert!(
            reply
                .headers
                .get("location")
                .unwrap()
                .to_str()
                .unwrap()
                .starts_with(REDIRECT_URI),
            "{changes:?}"
        );
        assert_eq!(
            location_param(&reply, "error").as_deref(),
            Some(code),
            "{changes:?}"
        );
        assert_eq!(location_param(&reply, "state").as_deref(), Some("state-42"));
    }

    let denied = app
        .oauth_consent(&cookie, &app.address, &pairs, "deny")
        .await;
    assert_eq!(denied.status, 302);
    assert_eq!(
        location_param(&denied, "error").as_deref(),
        Some("access_denied")
    );
    assert_eq!(location_param(&denied, "code"), None);
    let forged = app
        .oauth_consent(&cookie, "http://evil.example", &pairs, "allow")
        .await;
    assert_eq!(forged.status, 403, "{}", forged.text());
    assert_eq!(forged.json()["error"]["code"], "forbidden_origin");
    let allowed = app
        .oauth_consent(&cookie, &app.address, &pairs, "allow")
        .await;
    assert_eq!(allowed.status, 302);
    assert!(location_param(&allowed, "code").is_some());
}

#[actix_web::test]
async fn a_code_is_exchanged_once_by_its_client_with_its_verifier_for_bors_mcp() {
    let app = TestApp::spawn_with_accounts(&[]).await;
    app.add_user("ann", Role::Member).await;
    let cookie = app.sign_in("ann").await;
    let client = app.oauth_client("Editor").await;
    let other = app.oauth_client("Other").await;
    let resource = format!("{}/mcp", app.address);
    let exchange = |code: String, changes: Vec<(&'static str, String)>| {
        let app = &app;
        let client = &client;
        let resource = resource.clone();
        async move {
            let mut form: Vec<(&str, String)> = vec![
                ("grant_type", "authorization_code".to_owned()),
                ("code", code),
                ("redirect_uri", REDIRECT_URI.to_owned()),
                ("code_verifier", VERIFIER.to_owned()),
                ("client_id", client.id.clone()),
                ("resource", resource),
            ];
            for (name, value) in changes {
                form.retain(|(known, _)| *known != name);
                if !value.is_empty() {
                    form.push((name, value));
                }
            }
            let form: Vec<(&str, &str)> = form.iter().map(|(n, v)| (*n, v.as_str())).collect();
            app.oauth_token(&form, None).await
        }
    };
    for (changes, status, error) in [
        (
            vec![("code_verifier", "x".repeat(43))],
            400,
            "invalid_grant",
        ),
        (
            vec![("redirect_uri", "http://127.0.0.1:33418/other".to_owned())],
            400,
            "invalid_grant",
        ),
        (vec![("client_id", other.id.clone())], 400, "invalid_grant"),
        (
            vec![("resource", "https://other.example/mcp".to_owned())],
            400,
            "invalid_target",
        ),
        (
            vec![("client_id", "no-such-client".to_owned())],
            401,
            "invalid_client",
        ),
        (
            vec![("code_verifier", String::new())],
            400,
            "invalid_request",
        ),
        (
            vec![("grant_type", "password".to_owned())],
            400,
            "unsupported_grant_type",
        ),
    ] {
        let code = app.oauth_code(&cookie, &client).await;
        let reply = exchange(code, changes.clone()).await;
        assert_eq!(reply.status, status, "{changes:?}: {}", reply.text());
        assert_eq!(error_of(&reply), error, "{changes:?}");
        assert_eq!(reply.headers.get("cache-control").unwrap(), "no-store");
    }

    let code = app.oauth_code(&cookie, &client).await;
    let tokens = exchange(code.clone(), vec![]).await;
    assert_eq!(tokens.status, 200, "{}", tokens.text());
    let tokens = tokens.json();
    assert_eq!(tokens["token_type"], "Bearer");
    assert_eq!(tokens["expires_in"], 3600);
    assert!(
        tokens["access_token"]
            .as_str()
            .unwrap()
            .starts_with("bor_oat_")
    );
    assert!(
        tokens["refresh_token"]
            .as_str()
            .unwrap()
            .starts_with("bor_ort_")
    );
    let access = Credential::Bearer(tokens["access_token"].as_str().unwrap().to_owned());
    assert_eq!(app.mcp(&access, ping()).await.status, 200);
    let reused = exchange(code, vec![]).await;
    assert_eq!(reused.status, 400);
    assert_eq!(error_of(&reused), "invalid_grant", "a code is used once");
    assert_eq!(
        app.mcp(&access, ping()).await.status,
        401,
        "and what it gave is revoked: the code may have been stolen"
    );

    // A code past its 60 seconds.
    let code = app.oauth_code(&cookie, &client).await;
    {
        use bor::db::schema::oauth_codes::dsl::*;
        use diesel::prelude::*;
        use diesel_async::RunQueryDsl;
        let mut conn = app.pool.get().await.unwrap();
        diesel::update(oauth_codes)
            .set(expires_at.eq(chrono::Utc::now() - chrono::TimeDelta::seconds(1)))
            .execute(&mut conn)
            .await
            .unwrap();
    }
    let expired = exchange(code, vec![]).await;
    assert_eq!(error_of(&expired), "invalid_grant", "{}", expired.text());

    // A confidential client proves itself by its secret, in Basic or in the body.
    let registered = app
        .oauth_register(&json!({"client_name": "Server", "redirect_uris": [REDIRECT_URI]}))
        .await
        .json();
    let secret_client = OAuthClient {
        id: registered["client_id"].as_str().unwrap().to_owned(),
        secret: registered["client_secret"].as_str().map(str::to_owned),
    };
    let secret = secret_client.secret.clone().unwrap();
    for (basic, in_body, status) in [
        (Some(secret.as_str()), None, 200),
        (None, Some(secret.as_str()), 200),
        (Some("bor_ocs_wrong"), None, 401),
        (None, None, 401),
    ] {
        let code = app.oauth_code(&cookie, &secret_client).await;
        let mut form = vec![
            ("grant_type", "authorization_code"),
            ("code", code.as_str()),
            ("redirect_uri", REDIRECT_URI),
            ("code_verifier", VERIFIER),
        ];
        if basic.is_none() {
            form.push(("client_id", &secret_client.id));
        }
        if let Some(secret) = in_body {
            form.push(("client_secret", secret));
        }
        let reply = app
            .oauth_token(
                &form,
                basic.map(|secret| (secret_client.id.as_str(), secret)),
            )
            .await;
        assert_eq!(
            reply.status,
            status,
            "{basic:?} {in_body:?}: {}",
            reply.text()
        );
        if status == 401 {
            assert_eq!(error_of(&reply), "invalid_client");
        }
    }
}

#[actix_web::test]
async fn a_token_acts_for_its_person_on_mcp_only_until_it_expires_or_is_revoked() {
    let app = TestApp::spawn_with_accounts(&[("BOR_PUBLIC_URL", PUBLIC)]).await;
    app.add_user("ann", Role::Member).await;
    let cookie = app.sign_in("ann").await;
    let (client, tokens) = app.oauth_tokens(&cookie, "Editor").await;
    let access = Credential::Bearer(tokens["access_token"].as_str().unwrap().to_owned());

    let reply = app.mcp(&access, ping()).await;
    assert_eq!(reply.status, 200, "{}", reply.text());
    let listed = app.mcp_tool(&access, "list_collections", json!({})).await;
    assert!(
        listed["structuredContent"]["collections"]
            .to_string()
            .contains("default")
    );
    for (method, path) in [
        (Method::GET, "/api/collections"),
        (Method::GET, "/api/keys"),
        (Method::GET, "/api/auth/me"),
        (Method::GET, "/v1/models"),
    ] {
        let reply = app.call(method, path, &access, None).await;
        assert_eq!(reply.status, 401, "{path}: {}", reply.text());
    }
    // Another resource: an instance that serves another `/mcp` on the same database.
    let elsewhere = app
        .spawn_sharing(&[
            ("BOR_AUTH", "accounts"),
            ("BOR_PUBLIC_URL", "http://other.test"),
        ])
        .await;
    let reply = elsewhere.mcp(&access, ping()).await;
    assert_eq!(
        reply.status,
        401,
        "a token for another resource: {}",
        reply.text()
    );
    let same = app
        .spawn_sharing(&[("BOR_AUTH", "accounts"), ("BOR_PUBLIC_URL", PUBLIC)])
        .await;
    assert_eq!(
        same.mcp(&access, ping()).await.status,
        200,
        "another instance of the same"
    );

    // Revoked by its client (RFC 7009).
    let revoked = app
        .oauth_form(
            "/oauth/revoke",
            &[
                ("token", tokens["access_token"].as_str().unwrap()),
                ("client_id", &client.id),
            ],
            None,
        )
        .await;
    assert_eq!(revoked.status, 200, "{}", revoked.text());
    assert_eq!(app.mcp(&access, ping()).await.status, 401);
    let unknown = app
        .oauth_form(
            "/oauth/revoke",
            &[("token", "bor_oat_nothing"), ("client_id", &client.id)],
            None,
        )
        .await;
    assert_eq!(unknown.status, 200, "an unknown token is no error");

    // Expired: an instance that reads it from the database refuses it.
    let (_, tokens) = app.oauth_tokens(&cookie, "Later").await;
    {
        use bor::db::schema::oauth_access_tokens::dsl::*;
        use diesel::prelude::*;
        use diesel_async::RunQueryDsl;
        let mut conn = app.pool.get().await.unwrap();
        diesel::update(oauth_access_tokens)
            .set(expires_at.eq(chrono::Utc::now() - chrono::TimeDelta::seconds(1)))
            .execute(&mut conn)
            .await
            .unwrap();
    }
    let other = app
        .spawn_sharing(&[("BOR_AUTH", "accounts"), ("BOR_PUBLIC_URL", PUBLIC)])
        .await;
    let expired = Credential::Bearer(tokens["access_token"].as_str().unwrap().to_owned());
    let reply = other.mcp(&expired, ping()).await;
    assert_eq!(reply.status, 401, "an expired token: {}", reply.text());
    assert!(reply.headers.get("www-authenticate").is_some());
}

#[actix_web::test]
async fn refresh_tokens_rotate_and_one_used_twice_revokes_its_whole_family() {
    let app = TestApp::spawn_with_accounts(&[]).await;
    app.add_user("ann", Role::Member).await;
    let cookie = app.sign_in("ann").await;
    let (client, first) = app.oauth_tokens(&cookie, "Editor").await;
    let refresh = |token: String| {
        let app = &app;
        let client = &client;
        async move {
            app.oauth_token(
                &[
                    ("grant_type", "refresh_token"),
                    ("refresh_token", &token),
                    ("client_id", &client.id),
                ],
                None,
            )
            .await
        }
    };
    let first_refresh = first["refresh_token"].as_str().unwrap().to_owned();
    let second = refresh(first_refresh.clone()).await;
    assert_eq!(second.status, 200, "{}", second.text());
    let second = second.json();
    assert_ne!(second["access_token"], first["access_token"]);
    assert_ne!(second["refresh_token"], first["refresh_token"]);
    let second_access = Credential::Bearer(second["access_token"].as_str().unwrap().to_owned());
    assert_eq!(app.mcp(&second_access, ping()).await.status, 200);

    let other = app.oauth_client("Other").await;
    let stolen = app
        .oauth_token(
            &[
                ("grant_type", "refresh_token"),
                ("refresh_token", second["refresh_token"].as_str().unwrap()),
                ("client_id", &other.id),
            ],
            None,
        )
        .await;
    assert_eq!(
        error_of(&stolen),
        "invalid_grant",
        "another client's refresh token"
    );

    // The first refresh token again: a replay. Every token of the grant stops.
    let replayed = refresh(first_refresh).await;
    assert_eq!(replayed.status, 400);
    assert_eq!(error_of(&replayed), "invalid_grant");
    assert_eq!(app.mcp(&second_access, ping()).await.status, 401);
    let after = refresh(second["refresh_token"].as_str().unwrap().to_owned()).await;
    assert_eq!(error_of(&after), "invalid_grant", "the family is revoked");

    let rows: Vec<(String, serde_json::Value)> = {
        use bor::db::schema::audit_log::dsl::*;
        use diesel::prelude::*;
        use diesel_async::RunQueryDsl;
        let mut conn = app.pool.get().await.unwrap();
        audit_log
            .select((action, details))
            .load(&mut conn)
            .await
            .unwrap()
    };
    let actions: Vec<&str> = rows.iter().map(|(action, _)| action.as_str()).collect();
    for expected in [
        "oauth_client_registered",
        "oauth_grant_allowed",
        "oauth_tokens_issued",
        "oauth_refresh_reused",
    ] {
        assert!(actions.contains(&expected), "{expected} in {actions:?}");
    }
    let trail = format!("{rows:?}");
    for secret in [
        &first["access_token"],
        &first["refresh_token"],
        &second["refresh_token"],
    ] {
        assert!(
            !trail.contains(secret.as_str().unwrap()),
            "no token in the trail"
        );
    }
}

#[actix_web::test]
async fn grants_are_listed_beside_the_keys_and_end_with_a_revoke_or_a_disable() {
    let app = TestApp::spawn_with_accounts(&[("BOR_PUBLIC_URL", PUBLIC)]).await;
    app.add_user("admin", Role::Admin).await;
    let ann_id = app.add_user("ann", Role::Member).await;
    // Signed in by cookie on the page of the public address.
    let admin = Credential::CookieFrom(app.sign_in("admin").await, PUBLIC.to_owned());
    let cookie = app.sign_in("ann").await;
    let ann = Credential::CookieFrom(cookie.clone(), PUBLIC.to_owned());
    let made = app
        .call(
            Method::POST,
            "/api/keys",
            &ann,
            Some(json!({"name": "script"})),
        )
        .await;
    assert_eq!(made.status, 201, "{}", made.text());
    let (_, tokens) = app.oauth_tokens(&cookie, "Editor").await;
    let access = Credential::Bearer(tokens["access_token"].as_str().unwrap().to_owned());
    assert_eq!(app.mcp(&access, ping()).await.status, 200);

    let listed = app.call(Method::GET, "/api/keys", &ann, None).await.json();
    let keys = listed["keys"].as_array().unwrap();
    assert_eq!(keys.len(), 2, "{listed}");
    let grant = keys.iter().find(|key| key["kind"] == "oauth").unwrap();
    assert_eq!(grant["name"], "Editor");
    assert!(
        keys.iter()
            .any(|key| key["kind"] == "api_key" && key["name"] == "script")
    );
    let by_admin = app
        .call(
            Method::GET,
            &format!("/api/admin/users/{ann_id}/keys"),
            &admin,
            None,
        )
        .await
        .json();
    assert_eq!(by_admin["keys"].as_array().unwrap().len(), 2, "{by_admin}");

    let path = format!("/api/keys/{}", grant["id"].as_str().unwrap());
    assert_eq!(
        app.call(Method::DELETE, &path, &ann, None).await.status,
        204
    );
    assert_eq!(
        app.mcp(&access, ping()).await.status,
        401,
        "revoked at once"
    );
    assert_eq!(
        app.call(Method::DELETE, &path, &ann, None).await.status,
        404
    );

    // The admin revokes another grant of ann's; then a disable ends a third for good.
    let (_, tokens) = app.oauth_tokens(&cookie, "Second").await;
    let access = Credential::Bearer(tokens["access_token"].as_str().unwrap().to_owned());
    let listed = app.call(Method::GET, "/api/keys", &ann, None).await.json();
    let grant_id = listed["keys"]
        .as_array()
        .unwrap()
        .iter()
        .find(|key| key["kind"] == "oauth")
        .unwrap()["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let path = format!("/api/admin/users/{ann_id}/keys/{grant_id}");
    assert_eq!(
        app.call(Method::DELETE, &path, &admin, None).await.status,
        204
    );
    assert_eq!(app.mcp(&access, ping()).await.status, 401);

    let (_, tokens) = app.oauth_tokens(&cookie, "Third").await;
    let access = Credential::Bearer(tokens["access_token"].as_str().unwrap().to_owned());
    let other_instance = app
        .spawn_sharing(&[("BOR_AUTH", "accounts"), ("BOR_PUBLIC_URL", PUBLIC)])
        .await;
    assert_eq!(other_instance.mcp(&access, ping()).await.status, 200);
    let disabled = app
        .call(
            Method::PATCH,
            &format!("/api/admin/users/{ann_id}"),
            &admin,
            Some(json!({"disabled": true})),
        )
        .await;
    assert_eq!(disabled.status, 200, "{}", disabled.text());
    assert_eq!(
        app.mcp(&access, ping()).await.status,
        401,
        "a disabled person's token"
    );
    assert!(
        eventually(async || other_instance.mcp(&access, ping()).await.status == 401).await,
        "and on every instance"
    );
    let enabled = app
        .call(
            Method::PATCH,
            &format!("/api/admin/users/{ann_id}"),
            &admin,
            Some(json!({"disabled": false})),
        )
        .await;
    assert_eq!(enabled.status, 200);
    assert_eq!(
        app.mcp(&access, ping()).await.status,
        401,
        "revoked for good"
    );
    let refreshed = app
        .oauth_token(
            &[
                ("grant_type", "refresh_token"),
                ("refresh_token", tokens["refresh_token"].as_str().unwrap()),
            ],
            None,
        )
        .await;
    assert!(refreshed.status >= 400, "{}", refreshed.text());
}
