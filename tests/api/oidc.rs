//! OpenID Connect sign-in against a real provider (`oidc-provider`, run by Node.js from
//! tests/oidc/provider.mjs) and, for the tokens it never mints, a stand-in issuer
//! (tests/oidc/fake-issuer.mjs): the sign-in that lands at `next` with a session, the
//! groups and the admin group, and every refusal — a clear page, nobody signed in.

use awc::http::Method;
use bor::db::schema::{group_members, groups, sessions, users};
use diesel::prelude::*;
use diesel_async::RunQueryDsl;
use serde_json::json;
use uuid::Uuid;

use crate::support::oidc::{CookieJar, NodeProvider, location};
use crate::support::{Reply, TestApp};

const CALLBACK: &str = "/api/auth/oidc/callback";

/// bor with accounts on, signing in with the provider at `issuer`.
async fn app_with_provider(issuer: &str, extra: &[(&str, &str)]) -> TestApp {
    let mut vars = vec![
        ("BOR_OIDC_ISSUER", issuer),
        ("BOR_OIDC_CLIENT_ID", "bor"),
        ("BOR_OIDC_CLIENT_SECRET", "bor-test-secret"),
        ("BOR_OIDC_SCOPES", "openid profile email groups"),
    ];
    vars.extend_from_slice(extra);
    TestApp::spawn_with_accounts(&vars).await
}

/// Starts a sign-in coming back to `next`: the provider's authorization URL.
async fn start(app: &TestApp, browser: &mut CookieJar, next: &str) -> String {
    let next: String = url::form_urlencoded::byte_serialize(next.as_bytes()).collect();
    let url = format!("{}/api/auth/oidc/start?next={next}", app.address);
    let reply = browser.get(&url).await;
    assert_eq!(reply.status, 302, "{}", reply.text());
    assert!(browser.cookie(&app.address, "bor_oidc").is_some());
    location(&reply, &url)
}

/// Walks the real provider from its authorization URL through its own pages (the login
/// form as `login`, and the consent form if it shows one) up to the redirect back to
/// bor: the callback URL.
async fn through_the_provider(
    app: &TestApp,
    browser: &mut CookieJar,
    mut url: String,
    login: &str,
) -> String {
    for _ in 0..12 {
        let reply = browser.get(&url).await;
        if (300..400).contains(&reply.status) {
            url = location(&reply, &url);
        } else {
            let page = reply.text();
            let attribute = |name: &str| {
                page.split(&format!("{name}=\""))
                    .nth(1)
                    .and_then(|rest| rest.split('"').next())
                    .map(str::to_owned)
            };
            let action = attribute("action").unwrap_or_else(|| panic!("a form: {page}"));
            let prompt = page
                .split("name=\"prompt\" value=\"")
                .nth(1)
                .and_then(|rest| rest.split('"').next())
                .unwrap_or_else(|| panic!("a prompt: {page}"))
                .to_owned();
            let form: Vec<(&str, &str)> = if prompt == "login" {
                vec![("prompt", "login"), ("login", login), ("password", "any")]
            } else {
                vec![("prompt", prompt.as_str())]
            };
            let action = location_from(&url, &action);
            let posted = browser.request(Method::POST, &action, Some(&form)).await;
            assert!((300..400).contains(&posted.status), "{}", posted.text());
            url = location(&posted, &action);
        }
        if url.starts_with(&format!("{}{CALLBACK}", app.address)) {
            return url;
        }
    }
    panic!("the provider never sent the browser back to bor");
}

/// `target` (a form's action) made absolute against the page at `base`.
fn location_from(base: &str, target: &str) -> String {
    if target.starts_with("http://") || target.starts_with("https://") {
        return target.to_owned();
    }
    let site: Vec<&str> = base.splitn(4, '/').take(3).collect();
    format!("{}{target}", site.join("/"))
}

/// The whole sign-in as `login`: the callback's answer.
async fn sign_in(app: &TestApp, browser: &mut CookieJar, login: &str, next: &str) -> Reply {
    let authorize = start(app, browser, next).await;
    let callback = through_the_provider(app, browser, authorize, login).await;
    browser.get(&callback).await
}

async fn session_rows(app: &TestApp) -> i64 {
    let mut conn = app.pool.get().await.unwrap();
    sessions::table.count().get_result(&mut conn).await.unwrap()
}

async fn groups_of(app: &TestApp, username: &str) -> Vec<String> {
    let mut conn = app.pool.get().await.unwrap();
    let mut names: Vec<String> = group_members::table
        .inner_join(groups::table)
        .inner_join(users::table)
        .filter(users::username.eq(username))
        .select(groups::name)
        .load(&mut conn)
        .await
        .unwrap();
    names.sort();
    names
}

/// A refused sign-in: a page (HTML) saying `reason`, a link back to the login page,
/// no session cookie and no session row.
async fn assert_refused(app: &TestApp, reply: &Reply, status: u16, reason: &str) {
    assert_eq!(reply.status, status, "{}", reply.text());
    let content_type = reply.headers.get("content-type").unwrap().to_str().unwrap();
    assert!(content_type.starts_with("text/html"), "{content_type}");
    let page = reply.text();
    assert!(page.contains(reason), "{reason:?} in {page}");
    assert!(page.contains("href=\"/login\""), "{page}");
    assert!(crate::support::session_cookie(reply).is_none());
    assert_eq!(session_rows(app).await, 0);
}

#[actix_web::test]
async fn a_sign_in_through_the_real_provider_lands_at_next_with_a_session_and_the_groups() {
    let provider = NodeProvider::real(&json!({"ada": ["staff", "bor-admins"]}));
    let app = app_with_provider(&provider.issuer, &[("BOR_OIDC_ADMIN_GROUP", "bor-admins")]).await;
    let mut browser = CookieJar::default();

    let reply = sign_in(&app, &mut browser, "ada", "/?conversation=7").await;
    assert_eq!(reply.status, 302, "{}", reply.text());
    assert_eq!(
        location(&reply, &app.address),
        format!("{}/?conversation=7", app.address)
    );
    assert!(
        browser.cookie(&app.address, "bor_oidc").is_none(),
        "the sign-in's cookie is gone"
    );
    let me = browser.get(&format!("{}/api/auth/me", app.address)).await;
    assert_eq!(me.status, 200, "{}", me.text());
    assert_eq!(me.json()["user"]["username"], "ada");
    assert_eq!(me.json()["user"]["display_name"], "ada (test)");
    assert_eq!(me.json()["user"]["role"], "admin");
    assert_eq!(groups_of(&app, "ada").await, vec!["bor-admins", "staff"]);

    // Groups given in bor are replaced at the next sign-in, but never `everyone`.
    let user_id: Uuid = {
        let mut conn = app.pool.get().await.unwrap();
        let id = users::table
            .filter(users::username.eq("ada"))
            .select(users::id)
            .get_result(&mut conn)
            .await
            .unwrap();
        for name in ["everyone", "old-team"] {
            // `everyone` is made by the migrations; a member row of it is left alone.
            let group_id = match bor::db::groups::by_name(&mut conn, name).await.unwrap() {
                Some(group) => group.id,
                None => {
                    bor::db::groups::create(&mut conn, name)
                        .await
                        .unwrap()
                        .unwrap()
                        .id
                }
            };
            diesel::insert_into(group_members::table)
                .values((
                    group_members::group_id.eq(group_id),
                    group_members::user_id.eq(id),
                ))
                .execute(&mut conn)
                .await
                .unwrap();
        }
        id
    };
    let mut other_browser = CookieJar::default();
    let again = sign_in(&app, &mut other_browser, "ada", "/").await;
    assert_eq!(again.status, 302, "{}", again.text());
    assert_eq!(
        groups_of(&app, "ada").await,
        vec!["bor-admins", "everyone", "staff"]
    );
    let mut conn = app.pool.get().await.unwrap();
    let people: Vec<Uuid> = users::table
        .select(users::id)
        .load(&mut conn)
        .await
        .unwrap();
    assert_eq!(people, vec![user_id], "the same user, not a second one");
}

#[actix_web::test]
async fn without_the_admin_group_a_person_from_the_provider_is_a_member() {
    let provider = NodeProvider::real(&json!({"bob": ["staff"]}));
    let app = app_with_provider(&provider.issuer, &[("BOR_OIDC_ADMIN_GROUP", "bor-admins")]).await;
    let mut browser = CookieJar::default();
    let reply = sign_in(&app, &mut browser, "bob", "/").await;
    assert_eq!(reply.status, 302, "{}", reply.text());
    let me = browser.get(&format!("{}/api/auth/me", app.address)).await;
    assert_eq!(me.json()["user"]["role"], "member");
    let admin = browser
        .get(&format!("{}/api/admin/users", app.address))
        .await;
    assert_eq!(admin.status, 403);
}

#[actix_web::test]
async fn a_replayed_code_is_refused_by_the_provider() {
    let provider = NodeProvider::real(&json!({}));
    let app = app_with_provider(&provider.issuer, &[]).await;
    let mut browser = CookieJar::default();
    let authorize = start(&app, &mut browser, "/").await;
    let callback = through_the_provider(&app, &mut browser, authorize, "carol").await;
    let first = browser.get(&callback).await;
    assert_eq!(first.status, 302, "{}", first.text());
    {
        let mut conn = app.pool.get().await.unwrap();
        diesel::delete(sessions::table)
            .execute(&mut conn)
            .await
            .unwrap();
    }

    // The same code under a fresh state of this browser: bor lets it through to the
    // provider, which refuses a code used once.
    let replay_browser = &mut CookieJar::default();
    let fresh = start(&app, replay_browser, "/").await;
    let fresh_state = url::Url::parse(&fresh)
        .unwrap()
        .query_pairs()
        .find(|(name, _)| name == "state")
        .unwrap()
        .1
        .into_owned();
    let mut replayed = url::Url::parse(&callback).unwrap();
    let code = replayed
        .query_pairs()
        .find(|(name, _)| name == "code")
        .unwrap()
        .1
        .into_owned();
    replayed
        .query_pairs_mut()
        .clear()
        .append_pair("code", &code)
        .append_pair("state", &fresh_state);
    let reply = replay_browser.get(replayed.as_str()).await;
    assert_refused(&app, &reply, 400, "already used").await;
}

#[actix_web::test]
async fn a_wrong_state_and_a_used_state_are_refused() {
    let provider = NodeProvider::real(&json!({}));
    let app = app_with_provider(&provider.issuer, &[]).await;
    let mut browser = CookieJar::default();
    let authorize = start(&app, &mut browser, "/").await;
    let callback = through_the_provider(&app, &mut browser, authorize, "dan").await;
    let code = url::Url::parse(&callback)
        .unwrap()
        .query_pairs()
        .find(|(name, _)| name == "code")
        .unwrap()
        .1
        .into_owned();
    let wrong = format!("{}{CALLBACK}?code={code}&state=made-up", app.address);
    assert_refused(
        &app,
        &browser.get(&wrong).await,
        400,
        "wrong or expired state",
    )
    .await;

    let used_browser = &mut browser.clone();
    let first = browser.get(&callback).await;
    assert_eq!(first.status, 302, "{}", first.text());
    {
        let mut conn = app.pool.get().await.unwrap();
        diesel::delete(sessions::table)
            .execute(&mut conn)
            .await
            .unwrap();
    }
    let again = used_browser.get(&callback).await;
    assert_refused(&app, &again, 400, "already used").await;
}

#[actix_web::test]
async fn a_state_from_another_browser_is_refused() {
    let provider = NodeProvider::real(&json!({}));
    let app = app_with_provider(&provider.issuer, &[]).await;
    let mut victim = CookieJar::default();
    let authorize = start(&app, &mut victim, "/").await;
    let callback = through_the_provider(&app, &mut victim, authorize, "erin").await;

    let mut other = CookieJar::default();
    let _ = start(&app, &mut other, "/").await;
    let reply = other.get(&callback).await;
    assert_refused(&app, &reply, 400, "started in another browser").await;
}

#[actix_web::test]
async fn next_never_leaves_bor() {
    let provider = NodeProvider::real(&json!({}));
    let app = app_with_provider(&provider.issuer, &[]).await;
    let mut browser = CookieJar::default();
    let reply = sign_in(&app, &mut browser, "fay", "//evil.example/x").await;
    assert_eq!(reply.status, 302, "{}", reply.text());
    assert_eq!(reply.headers.get("location").unwrap(), "/");
}

#[actix_web::test]
async fn with_the_provider_down_the_login_page_still_offers_the_password() {
    let app = app_with_provider("http://127.0.0.1:9/realms/gone", &[]).await;
    let mut browser = CookieJar::default();
    let offered = browser
        .get(&format!("{}/api/auth/providers", app.address))
        .await;
    assert_eq!(offered.status, 200);
    assert_eq!(offered.json()["password"], true);
    assert_eq!(offered.json()["oidc"]["name"], "127.0.0.1");
    let page = browser.get(&format!("{}/login", app.address)).await;
    assert_eq!(page.status, 200);

    let reply = browser
        .get(&format!("{}/api/auth/oidc/start?next=/", app.address))
        .await;
    assert_refused(&app, &reply, 502, "cannot be reached").await;
}

#[actix_web::test]
async fn without_a_provider_the_login_page_offers_the_password_only() {
    let app = TestApp::spawn_with_accounts(&[]).await;
    let mut browser = CookieJar::default();
    let offered = browser
        .get(&format!("{}/api/auth/providers", app.address))
        .await;
    assert_eq!(offered.json(), json!({"password": true, "oidc": null}));
    let reply = browser
        .get(&format!("{}/api/auth/oidc/start", app.address))
        .await;
    assert_refused(&app, &reply, 404, "not configured").await;
}

/// A sign-in with the stand-in issuer whose token is made as `case` says: the
/// callback's answer.
async fn fake_sign_in(case: &str) -> (TestApp, Reply, NodeProvider) {
    let issuer = NodeProvider::fake();
    let app = app_with_provider(&issuer.issuer, &[]).await;
    let mut browser = CookieJar::default();
    let authorize = start(&app, &mut browser, "/").await;
    let answer = browser.get(&format!("{authorize}&case={case}")).await;
    let callback = location(&answer, &authorize);
    assert!(callback.starts_with(&format!("{}{CALLBACK}", app.address)));
    let reply = browser.get(&callback).await;
    (app, reply, issuer)
}

/// A sign-in with the stand-in issuer whose valid token carries `claims` besides (or
/// instead of) its own, to bor configured with `vars`: the app and the callback's
/// answer.
async fn sign_in_with_claims(
    claims: serde_json::Value,
    vars: &[(&str, &str)],
) -> (TestApp, Reply, NodeProvider) {
    let issuer = NodeProvider::fake();
    let app = app_with_provider(&issuer.issuer, vars).await;
    let mut browser = CookieJar::default();
    let authorize = start(&app, &mut browser, "/").await;
    let claims: String =
        url::form_urlencoded::byte_serialize(claims.to_string().as_bytes()).collect();
    let answer = browser
        .get(&format!("{authorize}&case=good&claims={claims}"))
        .await;
    let callback = location(&answer, &authorize);
    let reply = browser.get(&callback).await;
    (app, reply, issuer)
}

async fn usernames(app: &TestApp) -> Vec<(String, String, String)> {
    let mut conn = app.pool.get().await.unwrap();
    users::table
        .select((users::username, users::display_name, users::role))
        .order(users::username)
        .load(&mut conn)
        .await
        .unwrap()
}

#[actix_web::test]
async fn a_claim_holding_u0000_is_refused_on_the_page() {
    for (claim, value) in [
        ("sub", json!("fake\u{0}user")),
        ("preferred_username", json!("fake\u{0}user")),
        ("name", json!("Fake\u{0}User")),
        ("groups", json!(["staff", "st\u{0}ff"])),
    ] {
        let (app, reply, _issuer) = sign_in_with_claims(json!({ claim: value }), &[]).await;
        assert_refused(&app, &reply, 400, "holds U+0000").await;
        assert!(usernames(&app).await.is_empty(), "{claim}: nobody is made");
    }
}

#[actix_web::test]
async fn a_name_that_does_not_fit_the_username_rule_is_passed_over_or_refused() {
    // The next name offered that fits is taken, and the log says so.
    let (app, reply, _issuer) = sign_in_with_claims(
        json!({
            "preferred_username": "<img src=x onerror=alert(1)>",
            "email": "erin@example.com",
            "name": "Erin \u{202E}nimdA",
        }),
        &[],
    )
    .await;
    assert_eq!(reply.status, 302, "{}", reply.text());
    assert_eq!(
        usernames(&app).await,
        [(
            "erin@example.com".to_owned(),
            "Erin nimdA".to_owned(),
            "member".to_owned()
        )]
    );
    assert!(
        crate::support::all_logs().contains("does not fit the username rule"),
        "the log says why the name was passed over"
    );

    // None fits: refused, on the page, saying why.
    for bad in ["erin, admin1", &"e".repeat(128), "erin\u{202E}nimda"] {
        let (app, reply, _issuer) =
            sign_in_with_claims(json!({"sub": bad, "preferred_username": bad}), &[]).await;
        assert_refused(&app, &reply, 400, "not a username bor takes").await;
        assert!(usernames(&app).await.is_empty(), "{bad:?}: nobody is made");
    }
}

#[actix_web::test]
async fn the_admin_group_is_compared_exactly_as_configured() {
    let admin_group = [("BOR_OIDC_ADMIN_GROUP", "bor-admins")];
    let (app, reply, _issuer) = sign_in_with_claims(
        json!({"groups": ["bor-admins ", " bor-admins", "BOR-ADMINS"]}),
        &admin_group,
    )
    .await;
    assert_eq!(reply.status, 302, "{}", reply.text());
    assert_eq!(usernames(&app).await[0].2, "member");

    let (app, reply, _issuer) =
        sign_in_with_claims(json!({"groups": ["bor-admins"]}), &admin_group).await;
    assert_eq!(reply.status, 302, "{}", reply.text());
    assert_eq!(usernames(&app).await[0].2, "admin");
}

#[actix_web::test]
async fn u0000_in_the_callback_query_is_refused_on_the_page() {
    let issuer = NodeProvider::fake();
    let app = app_with_provider(&issuer.issuer, &[]).await;
    let mut browser = CookieJar::default();
    let reply = browser
        .get(&format!("{}{CALLBACK}?code=x&state=a%00b", app.address))
        .await;
    assert_refused(&app, &reply, 400, "U+0000").await;
    let reply = browser
        .get(&format!("{}{CALLBACK}?code=x&state=a&state=b", app.address))
        .await;
    assert_refused(&app, &reply, 400, "query string cannot be read").await;
}

#[actix_web::test]
async fn a_token_for_another_audience_is_refused() {
    let (app, reply, _issuer) = fake_sign_in("audience").await;
    assert_refused(&app, &reply, 400, "audience is another application").await;
}

#[actix_web::test]
async fn an_expired_token_is_refused() {
    let (app, reply, _issuer) = fake_sign_in("expired").await;
    assert_refused(&app, &reply, 400, "has expired").await;
}

#[actix_web::test]
async fn a_bad_signature_is_refused() {
    let (app, reply, _issuer) = fake_sign_in("signature").await;
    assert_refused(&app, &reply, 400, "signature does not verify").await;
}

#[actix_web::test]
async fn an_unknown_key_is_refused_after_fetching_the_keys_again() {
    let (app, reply, _issuer) = fake_sign_in("unknown-kid").await;
    assert_refused(&app, &reply, 400, "key the provider does not publish").await;
}

#[actix_web::test]
async fn a_token_from_another_issuer_is_refused() {
    let (app, reply, _issuer) = fake_sign_in("issuer").await;
    assert_refused(&app, &reply, 400, "another issuer").await;
}

#[actix_web::test]
async fn a_token_with_another_nonce_is_refused() {
    let (app, reply, _issuer) = fake_sign_in("nonce").await;
    assert_refused(&app, &reply, 400, "nonce differs").await;
}

#[actix_web::test]
async fn a_new_signing_key_is_fetched_when_a_token_names_it() {
    let (app, reply, _issuer) = fake_sign_in("rotated").await;
    assert_eq!(reply.status, 302, "{}", reply.text());
    assert!(crate::support::session_cookie(&reply).is_some());
    assert_eq!(session_rows(&app).await, 1);
}

#[actix_web::test]
async fn the_client_secret_is_shown_as_set_and_never_itself() {
    let token = "health-token-for-oidc-1234";
    let app = app_with_provider("http://127.0.0.1:9", &[("BOR_ADMIN_TOKEN", token)]).await;
    let reply = app.get("/api/admin/health", Some(token)).await;
    assert_eq!(reply.status, 200, "{}", reply.text());
    let report = reply.json();
    assert_eq!(report["config"]["oidc_client_secret"], "set");
    assert_eq!(report["config"]["oidc_client_id"], "bor");
    assert!(
        !reply.text().contains("bor-test-secret"),
        "the secret is shown"
    );
    let logs = crate::support::all_logs();
    assert!(!logs.contains("bor-test-secret"), "the secret is logged");
}

#[actix_web::test]
async fn a_disabled_account_is_refused() {
    let issuer = NodeProvider::fake();
    let app = app_with_provider(&issuer.issuer, &[]).await;
    let sign_in_once = async |browser: &mut CookieJar| {
        let authorize = start(&app, browser, "/").await;
        let answer = browser.get(&format!("{authorize}&case=good")).await;
        let callback = location(&answer, &authorize);
        browser.get(&callback).await
    };
    let first = sign_in_once(&mut CookieJar::default()).await;
    assert_eq!(first.status, 302, "{}", first.text());
    {
        let mut conn = app.pool.get().await.unwrap();
        diesel::update(users::table.filter(users::username.eq("fake-user")))
            .set(users::disabled.eq(true))
            .execute(&mut conn)
            .await
            .unwrap();
        diesel::delete(sessions::table)
            .execute(&mut conn)
            .await
            .unwrap();
    }
    let again = sign_in_once(&mut CookieJar::default()).await;
    assert_refused(&app, &again, 403, "disabled").await;
}
