//! Sign-in by a trusted proxy's header (`BOR_AUTH_PROXY_*`): honoured from a TCP peer
//! in `BOR_AUTH_PROXY_TRUSTED` (the user made at first sight, their groups replaced by
//! the groups header), ignored from any other address (logged once per address); a
//! change it authenticates must come from bor's own origin, as with the cookie.

use bor::db::schema::{group_members, groups, users};
use diesel::prelude::*;
use diesel_async::RunQueryDsl;

use crate::support::{Reply, TestApp, log_lines_containing};

async fn app_trusting(trusted: &str) -> TestApp {
    TestApp::spawn_with_accounts(&[
        ("BOR_AUTH_PROXY_HEADER", "X-Forwarded-User"),
        ("BOR_AUTH_PROXY_GROUPS_HEADER", "X-Forwarded-Groups"),
        ("BOR_AUTH_PROXY_TRUSTED", trusted),
    ])
    .await
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

#[actix_web::test]
async fn a_trusted_proxy_signs_the_person_in_and_sets_their_groups() {
    let app = app_trusting("127.0.0.1/32").await;
    let me = app
        .send(
            "GET",
            "/api/auth/me",
            &[
                ("X-Forwarded-User", "grace"),
                ("X-Forwarded-Groups", "staff, research"),
            ],
        )
        .await;
    assert_eq!(me.status, 200, "{}", me.text());
    assert_eq!(me.json()["user"]["username"], "grace");
    assert_eq!(me.json()["user"]["role"], "member");
    assert_eq!(me.json()["session"], false);
    assert_eq!(groups_of(&app, "grace").await, vec!["research", "staff"]);

    // The groups header replaces the groups each time it changes.
    let again = app
        .send(
            "GET",
            "/api/auth/me",
            &[
                ("X-Forwarded-User", "grace"),
                ("X-Forwarded-Groups", "staff"),
            ],
        )
        .await;
    assert_eq!(again.status, 200, "{}", again.text());
    assert_eq!(again.json()["user"]["id"], me.json()["user"]["id"]);
    assert_eq!(groups_of(&app, "grace").await, vec!["staff"]);
}

#[actix_web::test]
async fn the_header_from_an_untrusted_address_is_ignored_and_logged_once() {
    let app = app_trusting("10.0.0.0/8").await;
    for _ in 0..3 {
        let reply = app
            .send("GET", "/api/auth/me", &[("X-Forwarded-User", "mallory")])
            .await;
        assert_eq!(reply.status, 401, "{}", reply.text());
    }
    let mut conn = app.pool.get().await.unwrap();
    let made: i64 = users::table.count().get_result(&mut conn).await.unwrap();
    assert_eq!(made, 0, "nobody was made");
    let warned = log_lines_containing("not in BOR_AUTH_PROXY_TRUSTED");
    assert_eq!(warned.len(), 1, "{warned:?}");
}

#[actix_web::test]
async fn a_change_through_the_proxy_must_come_from_bors_own_origin() {
    let app = app_trusting("127.0.0.1/32").await;
    let from_elsewhere = app
        .send(
            "POST",
            "/api/auth/logout",
            &[
                ("X-Forwarded-User", "heidi"),
                ("Origin", "http://evil.example"),
            ],
        )
        .await;
    assert_eq!(from_elsewhere.status, 403, "{}", from_elsewhere.text());
    assert_eq!(from_elsewhere.json()["error"]["code"], "forbidden_origin");
    let own = app.address.clone();
    let from_bor = app
        .send(
            "POST",
            "/api/auth/logout",
            &[("X-Forwarded-User", "heidi"), ("Origin", own.as_str())],
        )
        .await;
    assert_eq!(from_bor.status, 204, "{}", from_bor.text());
}

#[actix_web::test]
async fn bor_refuses_to_start_with_the_header_but_no_trusted_addresses() {
    let error = bor::config::Config::from_vars([(
        "BOR_AUTH_PROXY_HEADER".to_owned(),
        "X-Forwarded-User".to_owned(),
    )])
    .unwrap_err();
    let problems = error.problems();
    assert_eq!(problems.len(), 1, "{problems:?}");
    assert!(
        problems[0].contains("BOR_AUTH_PROXY_TRUSTED"),
        "{problems:?}"
    );
}

/// `GET /api/auth/me` with `headers`, each appended (a name may come twice).
async fn me_with(app: &TestApp, headers: &[(&str, &str)]) -> Reply {
    let mut request = TestApp::client().get(format!("{}/api/auth/me", app.address));
    for &header in headers {
        request = request.append_header(header);
    }
    Reply::read(request.send().await.expect("the request is sent")).await
}

async fn usernames(app: &TestApp) -> Vec<String> {
    let mut conn = app.pool.get().await.unwrap();
    users::table
        .select(users::username)
        .order(users::username)
        .load(&mut conn)
        .await
        .unwrap()
}

#[actix_web::test]
async fn either_header_sent_twice_is_refused() {
    let app = app_trusting("127.0.0.1/32").await;
    let twice = me_with(
        &app,
        &[
            ("X-Forwarded-User", "mallory"),
            ("X-Forwarded-User", "grace"),
        ],
    )
    .await;
    assert_eq!(twice.status, 401, "{}", twice.text());
    let groups_twice = me_with(
        &app,
        &[
            ("X-Forwarded-User", "grace"),
            ("X-Forwarded-Groups", "staff"),
            ("X-Forwarded-Groups", "admins"),
        ],
    )
    .await;
    assert_eq!(groups_twice.status, 401, "{}", groups_twice.text());
    assert!(usernames(&app).await.is_empty(), "nobody was made");
    assert_eq!(
        log_lines_containing("more than once").len(),
        2,
        "each refusal is logged"
    );

    let once = me_with(&app, &[("X-Forwarded-User", "grace")]).await;
    assert_eq!(once.status, 200, "{}", once.text());
}

#[actix_web::test]
async fn a_name_that_does_not_fit_the_username_rule_is_refused_and_logged() {
    let app = app_trusting("127.0.0.1/32").await;
    let too_long = "g".repeat(128);
    for name in [
        "<img src=x onerror=alert(1)>",
        "erin, admin1",
        "erin\u{202E}nimda",
        too_long.as_str(),
    ] {
        let refused = me_with(&app, &[("X-Forwarded-User", name)]).await;
        assert_eq!(refused.status, 400, "{name:?}: {}", refused.text());
        assert_eq!(refused.json()["error"]["code"], "invalid_username");
    }
    assert!(usernames(&app).await.is_empty(), "nobody was made");
    assert_eq!(
        log_lines_containing("does not fit the username rule").len(),
        4
    );
}
