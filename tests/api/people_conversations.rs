//! Each person's conversations are their own (docs/PROTOCOL.md, "Conversations"): every
//! conversation route and `conversation_id` on `POST /api/chat`, for the owner and for
//! somebody else, both ways; another person's conversation is answered exactly as one
//! that does not exist.

use awc::http::Method;
use bor::db::users::Role;
use serde_json::{Value, json};
use uuid::Uuid;

use crate::support::*;

/// Starts a conversation as `who`; its id.
async fn start(app: &TestApp, who: &Credential, question: &str) -> String {
    let reply = app
        .call(
            Method::POST,
            "/api/chat",
            who,
            Some(json!({ "message": question })),
        )
        .await;
    assert_eq!(reply.status, 200, "{}", reply.text());
    reply
        .headers
        .get("x-conversation-id")
        .and_then(|value| value.to_str().ok())
        .expect("the conversation's id")
        .to_owned()
}

fn ids(list: &Value) -> Vec<String> {
    list.as_array()
        .expect("a list")
        .iter()
        .map(|conversation| conversation["id"].as_str().unwrap_or_default().to_owned())
        .collect()
}

async fn get(app: &TestApp, who: &Credential, path: &str) -> Reply {
    app.call(Method::GET, path, who, None).await
}

/// `method /api/conversations/{id}` as `who`.
async fn send(
    app: &TestApp,
    who: &Credential,
    method: Method,
    id: &str,
    body: Option<Value>,
) -> Reply {
    app.call(method, &format!("/api/conversations/{id}"), who, body)
        .await
}

/// The refusal with the id taken out, to compare with the refusal of an absent id.
fn refusal(reply: &Reply, id: &str) -> (u16, String) {
    (reply.status, reply.text().replace(id, "ID"))
}

#[actix_web::test]
async fn each_person_reaches_only_their_own_conversations_on_every_route() {
    let app = TestApp::spawn_with_accounts(&[]).await;
    app.add_user("ann", Role::Member).await;
    // An admin reads no more of other people's conversations than a member.
    app.add_user("bob", Role::Admin).await;
    let ann = Credential::Cookie(app.sign_in("ann").await);
    let bob = Credential::Cookie(app.sign_in("bob").await);
    let anns = start(&app, &ann, "Where is the kettle descaler?").await;
    let bobs = start(&app, &bob, "How long is the garden hose?").await;
    app.wait_for_rows(2).await;

    for (me, mine, theirs) in [(&ann, &anns, &bobs), (&bob, &bobs, &anns)] {
        let absent = Uuid::new_v4().to_string();

        let listed = get(&app, me, "/api/conversations").await;
        assert_eq!(&ids(&listed.json()), std::slice::from_ref(mine));
        // Both answers hold "Mock answer": each finds their own only.
        let found = get(&app, me, "/api/conversations?q=mock%20answer").await;
        assert_eq!(&ids(&found.json()), std::slice::from_ref(mine));

        for path in ["", "/export?format=json", "/export?format=markdown"] {
            let own = get(&app, me, &format!("/api/conversations/{mine}{path}")).await;
            assert_eq!(own.status, 200, "{path}: {}", own.text());
            let other = get(&app, me, &format!("/api/conversations/{theirs}{path}")).await;
            let none = get(&app, me, &format!("/api/conversations/{absent}{path}")).await;
            assert_eq!(other.status, 404, "{path}");
            assert_eq!(refusal(&other, theirs), refusal(&none, &absent), "{path}");
        }

        for change in [
            json!({ "title": "Taken over" }),
            json!({ "pinned": true }),
            json!({ "archived": true }),
        ] {
            let other = send(&app, me, Method::PATCH, theirs, Some(change.clone())).await;
            let none = send(&app, me, Method::PATCH, &absent, Some(change.clone())).await;
            assert_eq!(refusal(&other, theirs), refusal(&none, &absent), "{change}");
            assert_eq!(other.status, 404, "{change}");
        }
        // Each pins and archives their own, and lists only their own either way.
        for change in [json!({ "pinned": true }), json!({ "archived": true })] {
            let own = send(&app, me, Method::PATCH, mine, Some(change.clone())).await;
            assert_eq!(own.status, 200, "{change}: {}", own.text());
        }
        let archived = get(&app, me, "/api/conversations?archived=true&pinned=true").await;
        assert_eq!(&ids(&archived.json()), std::slice::from_ref(mine));
        let unarchived = get(&app, me, "/api/conversations").await;
        assert!(ids(&unarchived.json()).is_empty());
        let own = send(
            &app,
            me,
            Method::PATCH,
            mine,
            Some(json!({ "archived": false })),
        )
        .await;
        assert_eq!(own.json()["archived"], false);

        let continued = app
            .call(
                Method::POST,
                "/api/chat",
                me,
                Some(json!({ "message": "And then?", "conversation_id": theirs })),
            )
            .await;
        assert_eq!(continued.status, 404, "{}", continued.text());
        assert_eq!(continued.json()["error"]["code"], "not_found");

        let other = send(&app, me, Method::DELETE, theirs, None).await;
        let none = send(&app, me, Method::DELETE, &absent, None).await;
        assert_eq!(refusal(&other, theirs), refusal(&none, &absent));
        assert_eq!(other.status, 404);
    }

    // Nothing of the refused requests reached the owners' conversations.
    for (owner, id, title) in [
        (&ann, &anns, "Where is the kettle descaler?"),
        (&bob, &bobs, "How long is the garden hose?"),
    ] {
        let one = app
            .call(
                Method::GET,
                &format!("/api/conversations/{id}"),
                owner,
                None,
            )
            .await
            .json();
        assert_eq!(one["title"], title);
        assert_eq!(one["turns"].as_array().map(Vec::len), Some(1));
        assert_eq!(
            (&one["pinned"], &one["archived"]),
            (&json!(true), &json!(false))
        );
    }
    let rows = app.query_log().await;
    assert_eq!(rows.len(), 2, "no turn of a refused continuation");
    let deleted = app
        .call(
            Method::DELETE,
            &format!("/api/conversations/{anns}"),
            &ann,
            None,
        )
        .await;
    assert_eq!(deleted.status, 204);
}

#[actix_web::test]
async fn a_turn_row_carries_who_asked_and_an_id_of_nobody_starts_their_conversation() {
    let app = TestApp::spawn_with_accounts(&[]).await;
    let ann_id = app.add_user("ann", Role::Member).await;
    let ann_cookie = app.sign_in("ann").await;
    let ann = Credential::Cookie(ann_cookie.clone());
    let chosen = Uuid::new_v4().to_string();
    let reply = app
        .call(
            Method::POST,
            "/api/chat",
            &ann,
            Some(json!({ "message": "A fresh start?", "conversation_id": chosen })),
        )
        .await;
    assert_eq!(reply.status, 200, "{}", reply.text());
    let (key_id, key) = app.make_key(&ann_cookie, "script").await;
    assert!(!key_id.is_empty());
    let v1 = app
        .call(
            Method::POST,
            "/v1/chat/completions",
            &Credential::Bearer(key),
            Some(json!({"model": "bor", "messages": [{"role": "user", "content": "Hi?"}]})),
        )
        .await;
    assert_eq!(v1.status, 200, "{}", v1.text());
    let rows = app.wait_for_rows(2).await;
    assert_eq!(rows.len(), 2);
    for row in &rows {
        assert_eq!(row.user_id.map(|id| id.to_string()), Some(ann_id.clone()));
    }
    let listed = app
        .call(Method::GET, "/api/conversations", &ann, None)
        .await
        .json();
    assert_eq!(
        ids(&listed),
        [chosen],
        "the /v1 turn belongs to no conversation"
    );
}

#[actix_web::test]
async fn conversations_from_before_accounts_go_to_the_first_admin() {
    let first = TestApp::spawn_with_accounts(&[]).await;
    first.add_user("root", Role::Admin).await;
    first.add_user("later", Role::Admin).await;
    let conversation = Uuid::new_v4();
    let mut conn = first.pool.get().await.expect("a connection");
    let row = bor::db::query_log::NewQueryLogEntry {
        conversation_id: Some(conversation),
        question: "Asked before accounts?".to_owned(),
        ..bor::testing::query_log_entry()
    };
    bor::query_log_store::write_turns(&mut conn, &[row], None)
        .await
        .expect("written");

    let second = first.spawn_sharing(&[("BOR_AUTH", "accounts")]).await;
    for (who, seen) in [("root", 1), ("later", 0)] {
        let credential = Credential::Cookie(second.sign_in(who).await);
        let listed = second
            .call(Method::GET, "/api/conversations", &credential, None)
            .await
            .json();
        assert_eq!(ids(&listed).len(), seen, "{who}: {listed}");
    }
}
