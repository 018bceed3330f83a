//! Limits on turns and tokens (docs/LIMITS.md, "Limits"): set and removed by admins,
//! checked before a turn starts on every way in, named in the refusal, and counted
//! across instances.

use awc::http::Method;
use bor::db::users::Role;
use serde_json::{Value, json};

use crate::support::*;

/// An app with accounts, an admin `root` and a member `ann`: (app, root's cookie,
/// ann's cookie, ann's id).
async fn people() -> (TestApp, Credential, Credential, String) {
    let app = TestApp::spawn_with_accounts(&[]).await;
    people_of(app).await
}

async fn people_of(app: TestApp) -> (TestApp, Credential, Credential, String) {
    app.add_user("root", Role::Admin).await;
    let ann = app.add_user("ann", Role::Member).await;
    let root = Credential::Cookie(app.sign_in("root").await);
    let ann_cookie = Credential::Cookie(app.sign_in("ann").await);
    (app, root, ann_cookie, ann)
}

async fn set_limit(app: &TestApp, admin: &Credential, body: Value) -> Reply {
    app.call(Method::POST, "/api/admin/limits", admin, Some(body))
        .await
}

async fn ask(app: &TestApp, who: &Credential) -> Reply {
    app.call(
        Method::POST,
        "/api/chat",
        who,
        Some(json!({"message": "How long do refunds take?"})),
    )
    .await
}

async fn ask_v1(app: &TestApp, who: &Credential) -> Reply {
    app.call(
        Method::POST,
        "/v1/chat/completions",
        who,
        Some(json!({"model": "bor", "messages": [{"role": "user", "content": "Refunds?"}]})),
    )
    .await
}

fn retry_after(reply: &Reply) -> u64 {
    reply
        .headers
        .get("retry-after")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse().ok())
        .expect("a Retry-After in seconds")
}

/// Seconds from now to the next UTC midnight, rounded up.
fn seconds_to_midnight() -> u64 {
    let now = chrono::Utc::now();
    let midnight = now
        .date_naive()
        .succ_opt()
        .unwrap()
        .and_hms_opt(0, 0, 0)
        .unwrap()
        .and_utc();
    u64::try_from((midnight - now).num_milliseconds())
        .unwrap()
        .div_ceil(1000)
}

#[actix_web::test]
async fn the_fourth_turn_of_a_three_a_day_member_is_refused_before_the_model_is_asked() {
    let (app, root, ann, _) = people().await;
    let set = set_limit(&app, &root, json!({"user": "ann", "turns_per_day": 3})).await;
    assert_eq!(set.status, 201, "{}", set.text());
    let limit = set.json();
    assert_eq!(limit["subject"], "user");
    assert_eq!(limit["name"], "ann");
    assert_eq!(limit["turns_per_day"], 3);
    assert!(limit["id"].as_i64().is_some());

    for _ in 0..3 {
        assert_eq!(ask(&app, &ann).await.status, 200);
    }
    let asked = app.mock.chat_requests().len();
    let refused = ask(&app, &ann).await;
    assert_eq!(refused.status, 429, "{}", refused.text());
    assert_eq!(refused.json()["error"]["code"], "quota_exceeded");
    let reached = &refused.json()["error"]["limit"];
    assert_eq!(reached["subject"], "user");
    assert_eq!(reached["name"], "ann");
    assert_eq!(reached["measure"], "turns_per_day");
    assert_eq!(
        (reached["limit"].as_u64(), reached["used"].as_u64()),
        (Some(3), Some(3))
    );
    let message = refused.json()["error"]["message"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(message.contains("3 turns a day"), "{message}");
    let wait = retry_after(&refused);
    assert!(wait >= 1 && wait <= seconds_to_midnight(), "{wait}");
    assert_eq!(
        app.mock.chat_requests().len(),
        asked,
        "no request to the model"
    );

    // The other way in counts the same, and says so in the OpenAI shape.
    let v1 = ask_v1(&app, &ann).await;
    assert_eq!(v1.status, 429);
    assert_eq!(v1.json()["error"]["code"], "quota_exceeded");
    assert!(
        v1.json()["error"]["message"]
            .as_str()
            .unwrap()
            .contains("resets at")
    );
    assert!(retry_after(&v1) >= 1);

    // Another member is not held by ann's limit.
    app.add_user("bo", Role::Member).await;
    let bo = Credential::Cookie(app.sign_in("bo").await);
    assert_eq!(ask(&app, &bo).await.status, 200);

    // Removing the limit lets ann ask again.
    let id = limit["id"].as_i64().unwrap();
    let removed = app
        .call(
            Method::DELETE,
            &format!("/api/admin/limits/{id}"),
            &root,
            None,
        )
        .await;
    assert_eq!(removed.status, 204);
    assert_eq!(ask(&app, &ann).await.status, 200);

    let audit = app
        .call(Method::GET, "/api/admin/audit", &root, None)
        .await
        .json();
    let actions: Vec<&str> = audit["entries"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|entry| entry["action"].as_str())
        .collect();
    assert!(actions.contains(&"limit_set"), "{actions:?}");
    assert!(actions.contains(&"limit_removed"), "{actions:?}");
}

#[actix_web::test]
async fn a_group_limit_holds_for_a_members_key_and_a_key_limit_for_the_key_alone() {
    let (app, root, ann_cookie, _) = people().await;
    let Credential::Cookie(cookie) = &ann_cookie else {
        unreachable!()
    };
    let (key_id, key) = app.make_key(cookie, "script").await;
    let key = Credential::Bearer(key);
    let group = app
        .call(
            Method::POST,
            "/api/admin/groups",
            &root,
            Some(json!({"name": "sales"})),
        )
        .await;
    assert_eq!(group.status, 201);
    let members = app
        .call(
            Method::PUT,
            "/api/admin/groups/sales/members",
            &root,
            Some(json!(["ann"])),
        )
        .await;
    assert!(members.status < 300, "{}", members.text());
    assert_eq!(
        set_limit(&app, &root, json!({"group": "sales", "turns_per_day": 3}))
            .await
            .status,
        201
    );
    assert_eq!(
        set_limit(&app, &root, json!({"key": key_id, "turns_per_day": 1}))
            .await
            .status,
        201
    );
    // A default for everyone is looser and does not loosen the group's.
    assert_eq!(
        set_limit(&app, &root, json!({"everyone": true, "turns_per_day": 100}))
            .await
            .status,
        201
    );

    assert_eq!(ask(&app, &key).await.status, 200);
    let refused = ask(&app, &key).await;
    assert_eq!(refused.status, 429);
    assert_eq!(refused.json()["error"]["limit"]["subject"], "key");
    assert_eq!(refused.json()["error"]["limit"]["name"], "script");

    // The key's turn counted toward ann: two more and the group's limit is reached.
    assert_eq!(ask(&app, &ann_cookie).await.status, 200);
    assert_eq!(ask(&app, &ann_cookie).await.status, 200);
    let refused = ask(&app, &ann_cookie).await;
    assert_eq!(refused.status, 429);
    assert_eq!(refused.json()["error"]["limit"]["subject"], "group");
    assert_eq!(refused.json()["error"]["limit"]["name"], "sales");
}

#[actix_web::test]
async fn a_token_limit_holds_once_the_turns_tokens_reach_it() {
    let (app, root, ann, ann_id) = people().await;
    assert_eq!(
        set_limit(&app, &root, json!({"user": "ann", "tokens_per_month": 1}))
            .await
            .status,
        201
    );
    assert_eq!(ask(&app, &ann).await.status, 200, "nothing used yet");
    let rows = app.wait_for_rows(1).await;
    assert!(rows[0].prompt_tokens > 0);
    assert_eq!(rows[0].user_id.map(|id| id.to_string()), Some(ann_id));
    let refused = ask(&app, &ann).await;
    assert_eq!(refused.status, 429);
    let reached = &refused.json()["error"]["limit"];
    assert_eq!(reached["measure"], "tokens_per_month");
    assert!(reached["used"].as_u64().unwrap() >= 1);
    assert!(
        reached["resets_at"]
            .as_str()
            .unwrap()
            .ends_with("-01T00:00:00Z")
    );
}

#[actix_web::test]
async fn limits_are_refused_when_they_name_nothing_or_too_much() {
    let (app, root, ann, _) = people().await;
    for body in [
        json!({"turns_per_day": 3}),
        json!({"user": "ann"}),
        json!({"user": "ann", "group": "everyone", "turns_per_day": 3}),
        json!({"everyone": false, "turns_per_day": 3}),
        json!({"user": "ann", "turns_per_day": -1}),
        json!({"user": "ann", "turns_per_day": 3, "tokens": 9}),
    ] {
        let reply = set_limit(&app, &root, body.clone()).await;
        assert_eq!(
            (
                reply.status,
                reply.json()["error"]["code"]
                    .as_str()
                    .unwrap_or("")
                    .to_owned()
            ),
            (400, "invalid_json".to_owned()),
            "{body}"
        );
    }
    for body in [
        json!({"user": "nobody", "turns_per_day": 3}),
        json!({"group": "nobody", "turns_per_day": 3}),
        json!({"key": uuid::Uuid::new_v4(), "turns_per_day": 3}),
    ] {
        let reply = set_limit(&app, &root, body.clone()).await;
        assert_eq!(
            (
                reply.status,
                reply.json()["error"]["code"]
                    .as_str()
                    .unwrap_or("")
                    .to_owned()
            ),
            (400, "unknown_name".to_owned()),
            "{body}"
        );
    }
    for id in ["999", "x"] {
        let reply = app
            .call(
                Method::DELETE,
                &format!("/api/admin/limits/{id}"),
                &root,
                None,
            )
            .await;
        assert_eq!(reply.status, 404);
    }
    // Setting the same subject again replaces its limit.
    let first = set_limit(&app, &root, json!({"user": "ann", "turns_per_day": 3}))
        .await
        .json();
    let second = set_limit(&app, &root, json!({"user": "ann", "tokens_per_day": 50}))
        .await
        .json();
    assert_eq!(first["id"], second["id"]);
    let listed = app
        .call(Method::GET, "/api/admin/limits", &root, None)
        .await
        .json();
    assert_eq!(listed["limits"].as_array().unwrap().len(), 1);
    assert_eq!(listed["limits"][0]["turns_per_day"], Value::Null);
    assert_eq!(listed["limits"][0]["tokens_per_day"], 50);
    assert_eq!(ask(&app, &ann).await.status, 200);
}

#[actix_web::test]
async fn two_instances_count_each_others_turns() {
    let (first, root, ann, ann_id) = people().await;
    let second = first.spawn_sharing(&[("BOR_AUTH", "accounts")]).await;
    assert_eq!(
        set_limit(&first, &root, json!({"user": "ann", "turns_per_day": 3}))
            .await
            .status,
        201
    );
    let ann_uuid: uuid::Uuid = ann_id.parse().unwrap();
    assert!(
        eventually(async || second.state.usage.knows_limits()).await,
        "the second instance heard of the limit"
    );
    assert_eq!(ask(&first, &ann).await.status, 200);
    assert_eq!(ask(&first, &ann).await.status, 200);
    assert!(
        eventually(async || second.state.usage.use_of_user(ann_uuid).turns_today == 2).await,
        "the second instance heard of the first one's turns"
    );
    assert_eq!(ask(&second, &ann).await.status, 200);
    assert!(eventually(async || first.state.usage.use_of_user(ann_uuid).turns_today == 3).await);
    assert_eq!(ask(&first, &ann).await.status, 429);
    assert_eq!(ask(&second, &ann).await.status, 429);
}

/// docs/LIMITS.md, "Overshoot": turns asked at the same instant of two instances take
/// their turns from one shared count, so together they let in exactly the limit, every
/// refusal being the limit's; afterwards both refuse.
#[actix_web::test]
async fn two_instances_taking_turns_at_the_same_instant_let_in_exactly_the_limit() {
    const LIMIT: u64 = 4;
    const TURNS_EACH: usize = 12;
    let (first, root, ann, ann_id) = people().await;
    let second = first.spawn_sharing(&[("BOR_AUTH", "accounts")]).await;
    let made = set_limit(
        &first,
        &root,
        json!({"user": "ann", "turns_per_day": LIMIT}),
    )
    .await;
    assert_eq!(made.status, 201, "{}", made.text());
    assert!(
        eventually(async || second.state.usage.knows_limits()).await,
        "the second instance heard of the limit"
    );

    let turns = (0..TURNS_EACH).flat_map(|_| [ask(&first, &ann), ask(&second, &ann)]);
    let replies = futures_util::future::join_all(turns).await;
    let done = replies.iter().filter(|reply| reply.status == 200).count() as u64;
    for refused in replies.iter().filter(|reply| reply.status != 200) {
        assert_eq!(refused.status, 429, "{}", refused.text());
        assert_eq!(refused.json()["error"]["code"], "quota_exceeded");
        assert_eq!(refused.json()["error"]["limit"]["measure"], "turns_per_day");
    }
    assert_eq!(
        done,
        LIMIT,
        "{done} turns done of {} asked with a limit of {LIMIT}",
        replies.len()
    );

    let ann_uuid: uuid::Uuid = ann_id.parse().unwrap();
    for app in [&first, &second] {
        assert!(
            eventually(async || app.state.usage.use_of_user(ann_uuid).turns_today == done).await,
            "each instance counts every turn done"
        );
        assert_eq!(ask(app, &ann).await.status, 429);
    }
}

#[actix_web::test]
async fn usage_is_reported_per_user_key_collection_and_model_and_each_sees_their_own() {
    let (app, root, ann, ann_id) = people().await;
    let Credential::Cookie(cookie) = &ann else {
        unreachable!()
    };
    let (key_id, key) = app.make_key(cookie, "script").await;
    app.insert_document("Refunds", "How long do refunds take?")
        .await;
    assert_eq!(
        ask(&app, &Credential::Bearer(key.clone())).await.status,
        200
    );
    assert_eq!(ask(&app, &Credential::Bearer(key)).await.status, 200);
    assert_eq!(ask(&app, &ann).await.status, 200);
    assert_eq!(ask(&app, &root).await.status, 200);
    app.wait_for_rows(4).await;

    let report = app.call(Method::GET, "/api/admin/usage", &root, None).await;
    assert_eq!(report.status, 200, "{}", report.text());
    let rows = report.json()["rows"].as_array().unwrap().clone();
    let row = |dimension: &str, id: &str| {
        rows.iter()
            .find(|row| row["dimension"] == dimension && row["id"] == id)
            .cloned()
            .unwrap_or_else(|| panic!("no {dimension} {id} in {rows:?}"))
    };
    let ann_row = row("user", &ann_id);
    assert_eq!(ann_row["name"], "ann");
    assert_eq!(ann_row["turns"], 3);
    assert!(ann_row["prompt_tokens"].as_i64().unwrap() > 0);
    assert!(ann_row["completion_tokens"].as_i64().unwrap() > 0);
    assert_eq!(ann_row["estimated_share"], 0.0);
    assert_eq!(ann_row["grounded_share"], 1.0);
    assert_eq!(
        ann_row["day"],
        chrono::Utc::now().format("%Y-%m-%d").to_string()
    );
    let key_row = row("key", &key_id);
    assert_eq!(
        (key_row["name"].as_str(), key_row["turns"].as_i64()),
        (Some("script"), Some(2))
    );
    let model = rows.iter().find(|row| row["dimension"] == "model").unwrap();
    assert_eq!(model["turns"], 4);
    let collection = rows
        .iter()
        .find(|row| row["dimension"] == "collection")
        .unwrap();
    assert_eq!(
        collection["turns"], 4,
        "every turn drew on the one collection"
    );

    let csv = app
        .call(Method::GET, "/api/admin/usage?format=csv", &root, None)
        .await;
    assert_eq!(csv.status, 200);
    assert!(
        csv.headers
            .get("content-type")
            .unwrap()
            .to_str()
            .unwrap()
            .starts_with("text/csv")
    );
    let text = csv.text();
    assert!(text.starts_with("day,dimension,id,name,turns,prompt_tokens,completion_tokens,"));
    assert!(text.contains(&format!(",user,{ann_id},ann,3,")), "{text}");

    let own = app.call(Method::GET, "/api/usage", &ann, None).await;
    assert_eq!(own.status, 200);
    let own_rows = own.json()["rows"].as_array().unwrap().clone();
    let users: Vec<&Value> = own_rows
        .iter()
        .filter(|row| row["dimension"] == "user")
        .collect();
    assert_eq!(users.len(), 1, "only ann's own");
    assert_eq!(users[0]["turns"], 3);
    let model = own_rows
        .iter()
        .find(|row| row["dimension"] == "model")
        .unwrap();
    assert_eq!(model["turns"], 3);

    let later = "2999-01-01T00:00:00Z";
    let empty = app
        .call(
            Method::GET,
            &format!("/api/usage?since={later}&until={later}"),
            &ann,
            None,
        )
        .await;
    assert_eq!(empty.json()["rows"], json!([]));
    for query in [
        "since=yesterday",
        "since=2020-01-01T00:00:00Z&until=2026-01-01T00:00:00Z",
        "format=xml",
    ] {
        let refused = app
            .call(
                Method::GET,
                &format!("/api/admin/usage?{query}"),
                &root,
                None,
            )
            .await;
        assert_eq!(refused.status, 400, "{query}");
    }
}
