//! Feedback (docs/PROTOCOL.md, "Feedback"): the asker rates their turn, changes and
//! removes the rating, nobody else reaches it; an admin reviews it, names the passage
//! that should have been found among what the asker can read, and the evaluation set
//! shows the miss and the effect of a change of settings.

use awc::http::Method;
use bor::db::users::Role;
use serde_json::{Value, json};
use uuid::Uuid;

use crate::support::*;

/// A chat turn as `who`: (turn id, conversation id, the `done` frame's data).
async fn ask(app: &TestApp, who: &Credential, question: &str) -> (String, String, Value) {
    let reply = app
        .call(
            Method::POST,
            "/api/chat",
            who,
            Some(json!({ "message": question })),
        )
        .await;
    assert_eq!(reply.status, 200, "{}", reply.text());
    let text = reply.text();
    let done = text
        .split("event: done\ndata: ")
        .nth(1)
        .and_then(|rest| rest.lines().next())
        .and_then(|data| serde_json::from_str::<Value>(data).ok())
        .unwrap_or_else(|| panic!("a done frame in {text}"));
    let turn = done["turn_id"].as_str().expect("a turn id").to_owned();
    let conversation = done["conversation_id"]
        .as_str()
        .expect("a conversation id")
        .to_owned();
    (turn, conversation, done)
}

fn code(reply: &Reply) -> String {
    reply.json()["error"]["code"]
        .as_str()
        .unwrap_or_default()
        .to_owned()
}

/// The collections an evaluation run is measured by, in its order.
fn collection_names(evaluation: &Value) -> Vec<&str> {
    evaluation["run"]["measures"]["by_collection"]
        .as_array()
        .expect("by collection")
        .iter()
        .filter_map(|measures| measures["collection"].as_str())
        .collect()
}

async fn rate(app: &TestApp, who: &Credential, turn: &str, body: Value) -> Reply {
    app.call(
        Method::PUT,
        &format!("/api/turns/{turn}/feedback"),
        who,
        Some(body),
    )
    .await
}

/// The `feedback` of the conversation's only turn, as the conversation loads.
async fn feedback_shown(app: &TestApp, who: &Credential, conversation: &str) -> Value {
    let loaded = app
        .call(
            Method::GET,
            &format!("/api/conversations/{conversation}"),
            who,
            None,
        )
        .await;
    assert_eq!(loaded.status, 200, "{}", loaded.text());
    loaded.json()["turns"][0]["feedback"].clone()
}

#[actix_web::test]
async fn the_asker_rates_changes_and_removes_and_anothers_turn_is_absent() {
    let app = TestApp::spawn_with_accounts(&[]).await;
    app.add_user("ann", Role::Member).await;
    app.add_user("bob", Role::Admin).await;
    let ann = Credential::Cookie(app.sign_in("ann").await);
    let bob = Credential::Cookie(app.sign_in("bob").await);

    // Rated the moment the answer ends: its row may still be queued.
    let (turn, conversation, _) = ask(&app, &ann, "Where is the kettle descaler?").await;
    let up = rate(&app, &ann, &turn, json!({"rating": "up"})).await;
    assert_eq!(up.status, 200, "{}", up.text());
    assert_eq!(up.json()["rating"], "up");
    assert_eq!(up.json()["reason"], Value::Null);
    assert_eq!(
        feedback_shown(&app, &ann, &conversation).await["rating"],
        "up"
    );

    let down = json!({"rating": "down", "reason": "missing_source", "comment": "  It is under the sink. "});
    let changed = rate(&app, &ann, &turn, down).await;
    assert_eq!(changed.status, 200, "{}", changed.text());
    let shown = feedback_shown(&app, &ann, &conversation).await;
    assert_eq!(
        (&shown["rating"], &shown["reason"], &shown["comment"]),
        (
            &json!("down"),
            &json!("missing_source"),
            &json!("It is under the sink.")
        )
    );
    // A new rating replaces the old whole: no reason or comment is carried over.
    rate(&app, &ann, &turn, json!({"rating": "down"})).await;
    let shown = feedback_shown(&app, &ann, &conversation).await;
    assert_eq!(
        (&shown["reason"], &shown["comment"]),
        (&Value::Null, &json!(""))
    );

    for bad in [
        json!({"rating": "up", "reason": "other"}),
        json!({"rating": "sideways"}),
        json!({"rating": "down", "reason": "boring"}),
        json!({"rating": "down", "comment": "x".repeat(2_001)}),
        json!({"rating": "up", "stars": 5}),
    ] {
        let refused = rate(&app, &ann, &turn, bad.clone()).await;
        assert_eq!(
            (refused.status, code(&refused)),
            (400, "invalid_feedback".to_owned()),
            "{bad}: {}",
            refused.text()
        );
    }

    // Somebody else, an admin included, rates and removes nothing of ann's: the answer
    // is the one about a turn that does not exist.
    let absent = Uuid::new_v4().to_string();
    for method in [Method::PUT, Method::DELETE] {
        let body = (method == Method::PUT).then(|| json!({"rating": "up"}));
        let theirs = app
            .call(
                method.clone(),
                &format!("/api/turns/{turn}/feedback"),
                &bob,
                body.clone(),
            )
            .await;
        let missing = app
            .call(
                method.clone(),
                &format!("/api/turns/{absent}/feedback"),
                &bob,
                body,
            )
            .await;
        assert_eq!(theirs.status, 404, "{method}: {}", theirs.text());
        assert_eq!(
            theirs.text().replace(&turn, &absent),
            missing.text(),
            "{method}"
        );
    }
    let nobody = rate(&app, &Credential::Nobody, &turn, json!({"rating": "up"})).await;
    assert_eq!(nobody.status, 401);
    let not_an_id = rate(&app, &ann, "not-a-turn", json!({"rating": "up"})).await;
    assert_eq!(not_an_id.status, 404);
    assert_eq!(
        feedback_shown(&app, &ann, &conversation).await["rating"],
        "down"
    );

    let removed = app
        .call(
            Method::DELETE,
            &format!("/api/turns/{turn}/feedback"),
            &ann,
            None,
        )
        .await;
    assert_eq!(removed.status, 204, "{}", removed.text());
    assert_eq!(feedback_shown(&app, &ann, &conversation).await, Value::Null);

    let metrics = app.get("/metrics", None).await.text();
    assert!(
        metrics.contains(r#"bor_feedback_total{rating="down",reason="missing_source"}"#),
        "{metrics}"
    );
}

const KETTLE_QUESTION: &str = "Where is the kettle descaler bottle location?";
const UNDER_THE_SINK: &str = "The descaler bottle for the office kettle has its location in the \
     cupboard under the sink, behind the dish soap, next to the spare filters and the cloths.";

/// Twelve passages that say "kettle descaler" over and over and nothing of where the
/// bottle is: by their vectors they come before the one that answers.
fn distractors() -> Vec<String> {
    (0..12)
        .map(|i| format!("Kettle descaler kettle descaler kettle descaler, note {i}."))
        .collect()
}

#[actix_web::test]
async fn a_thumbs_down_becomes_a_failing_query_and_re_ranking_shows_its_effect() {
    let app = TestApp::spawn_with_accounts(&[]).await;
    let reranking = app
        .spawn_sharing(&[("BOR_AUTH", "accounts"), ("BOR_RERANK_BASE_URL", "{mock}")])
        .await;
    app.add_user("admin", Role::Admin).await;
    app.add_user("ann", Role::Member).await;
    let admin = Credential::Cookie(app.sign_in("admin").await);
    let ann = Credential::Cookie(app.sign_in("ann").await);
    let made = app
        .call(
            Method::POST,
            "/api/admin/collections",
            &admin,
            Some(json!({"name": "hr"})),
        )
        .await;
    assert_eq!(made.status, 201, "{}", made.text());
    let add = async |title: &str, content: &str, collection: &str| {
        let stored = app
            .call(
                Method::POST,
                "/api/admin/documents",
                &admin,
                Some(json!({"title": title, "content": content, "collection": collection})),
            )
            .await;
        assert_eq!(stored.status, 201, "{}", stored.text());
        stored.json()["id"].as_i64().expect("an id")
    };
    let answer_doc = add("Office kitchen", UNDER_THE_SINK, "default").await;
    for (i, text) in distractors().iter().enumerate() {
        add(&format!("Kettle note {i}"), text, "default").await;
    }
    // The same answer where ann cannot read it: never offered, never accepted.
    let hidden_doc = add("HR kitchen", UNDER_THE_SINK, "hr").await;
    for instance in [&app, &reranking] {
        assert!(
            eventually(async || instance.indexed_chunks(hidden_doc) == 1).await,
            "each instance has every document"
        );
    }

    let (turn, _, done) = ask(&app, &ann, KETTLE_QUESTION).await;
    let cited: Vec<i64> = done["sources"]
        .as_array()
        .expect("sources")
        .iter()
        .filter_map(|source| source["document_id"].as_i64())
        .collect();
    assert!(!cited.contains(&answer_doc), "{cited:?}");
    let down = json!({"rating": "down", "reason": "missing_source"});
    assert_eq!(rate(&app, &ann, &turn, down).await.status, 200);

    // The review queue: the turn, its sources with their collection and place.
    let listed = app
        .call(
            Method::GET,
            "/api/admin/feedback?rating=down&reason=missing_source&collection=default",
            &admin,
            None,
        )
        .await;
    assert_eq!(listed.status, 200, "{}", listed.text());
    let reviewed = &listed.json()["feedback"][0];
    assert_eq!(reviewed["turn_id"], turn.as_str());
    assert_eq!(reviewed["asker"], "ann");
    assert_eq!(reviewed["question"], KETTLE_QUESTION);
    assert_eq!(reviewed["sources"][0]["collection"], "default");
    // Each source keeps each ranking's score from the turn.
    let signals = &reviewed["sources"][0]["signals"];
    assert!(
        signals["vector"].is_number() && signals["fused"].is_number(),
        "{signals}"
    );
    assert_eq!(
        signals["rerank"],
        Value::Null,
        "re-ranking is off on this instance"
    );
    assert_eq!(reviewed["expected_chunk_ids"], json!([]));
    assert_eq!(
        listed.json()["by_collection"],
        json!([{"collection": "default", "up": 0, "down": 1}])
    );
    for filter in ["rating=up", "reason=wrong_answer", "collection=hr"] {
        let none = app
            .call(
                Method::GET,
                &format!("/api/admin/feedback?{filter}"),
                &admin,
                None,
            )
            .await;
        assert_eq!(none.json()["feedback"], json!([]), "{filter}");
    }
    let bad = app
        .call(Method::GET, "/api/admin/feedback?rating=meh", &admin, None)
        .await;
    assert_eq!(bad.status, 400);

    // Searching as ann finds the answer in what she reads, never the hr copy.
    let found = app
        .call(
            Method::POST,
            &format!("/api/admin/feedback/{turn}/search"),
            &admin,
            Some(json!({"query": "descaler bottle cupboard under the sink", "top_k": 20})),
        )
        .await;
    assert_eq!(found.status, 200, "{}", found.text());
    let results = found.json()["results"].as_array().expect("results").clone();
    assert!(
        results.iter().all(|r| r["document_id"] != hidden_doc),
        "{results:?}"
    );
    let answer_chunk = results
        .iter()
        .find(|r| r["document_id"] == answer_doc)
        .and_then(|r| r["chunk_id"].as_i64())
        .expect("the answer's passage is found");
    assert!(results[0]["signals"]["fused"]["score"].is_number());
    let hidden_chunk = app
        .call(
            Method::POST,
            "/api/search",
            &admin,
            Some(json!({"query": "cupboard under the sink", "collections": ["hr"]})),
        )
        .await
        .json()["results"][0]["chunk_id"]
        .as_i64()
        .expect("the hr copy");

    let expect = async |chunk_ids: Value| {
        app.call(
            Method::PUT,
            &format!("/api/admin/feedback/{turn}/expected"),
            &admin,
            Some(json!({ "chunk_ids": chunk_ids })),
        )
        .await
    };
    for refused in [json!([hidden_chunk]), json!([answer_chunk, 999_999])] {
        let reply = expect(refused.clone()).await;
        assert_eq!(
            (reply.status, code(&reply)),
            (400, "invalid_feedback".to_owned()),
            "{refused}"
        );
    }
    let marked = expect(json!([answer_chunk])).await;
    assert_eq!(marked.status, 200, "{}", marked.text());
    let unrated = app
        .call(
            Method::PUT,
            &format!("/api/admin/feedback/{}/expected", Uuid::new_v4()),
            &admin,
            Some(json!({"chunk_ids": [answer_chunk]})),
        )
        .await;
    assert_eq!(unrated.status, 404);

    // Fused alone: the answer is not in the top 10, a failing query.
    let before = app
        .call(Method::POST, "/api/admin/eval/feedback", &admin, None)
        .await;
    assert_eq!(before.status, 200, "{}", before.text());
    let before = before.json();
    assert_eq!(before["run"]["queries"], 1);
    assert_eq!(before["queries"][0]["passage_rank"], Value::Null);
    assert_eq!(before["queries"][0]["answered"], false);
    assert_eq!(before["run"]["measures"]["answered"], 0.0);
    assert_eq!(
        before["run"]["measures"]["fused"]["passages"]["recall_at_10"],
        0.0
    );
    assert_eq!(before["run"]["settings"]["rerank"], false);
    assert_eq!(before["previous"], Value::Null);
    let by_collection = &before["run"]["measures"]["by_collection"];
    assert_eq!(by_collection.as_array().map(Vec::len), Some(1), "{before}");
    assert_eq!(by_collection[0]["collection"], "default");
    assert_eq!(by_collection[0]["queries"], 1);
    assert_eq!(by_collection[0]["answered"], 0.0);

    // Re-ranking on (the other instance's settings): the same query finds it first.
    let after = reranking
        .call(Method::POST, "/api/admin/eval/feedback", &admin, None)
        .await;
    assert_eq!(after.status, 200, "{}", after.text());
    let after = after.json();
    assert_eq!(after["queries"][0]["passage_rank"], 1);
    assert_eq!(after["queries"][0]["answered"], true, "{after}");
    assert_eq!(after["run"]["measures"]["answered"], 1.0);
    assert_eq!(
        after["run"]["measures"]["reranked"]["passages"]["recall_at_10"],
        1.0
    );
    assert_eq!(after["run"]["settings"]["rerank"], true);
    assert_eq!(after["previous"]["id"], before["run"]["id"]);
    let runs = app
        .call(Method::GET, "/api/admin/eval/feedback", &admin, None)
        .await
        .json();
    assert_eq!(runs["runs"].as_array().map(Vec::len), Some(2));
    assert_eq!(runs["runs"][0]["id"], after["run"]["id"]);

    // The asker reaches none of it.
    for (method, path) in [
        (Method::GET, "/api/admin/feedback".to_owned()),
        (Method::POST, "/api/admin/eval/feedback".to_owned()),
        (Method::POST, format!("/api/admin/feedback/{turn}/search")),
    ] {
        let body = (method == Method::POST).then(|| json!({"query": "kettle"}));
        let refused = app.call(method, &path, &ann, body).await;
        assert_eq!(refused.status, 403, "{path}");
    }

    // By collection: the admin's own turn, given the hr copy as its passage, counts under
    // hr, ann's under default.
    let (admin_turn, _, _) = ask(&app, &admin, "Where is the HR kitchen's descaler?").await;
    let rated = rate(&app, &admin, &admin_turn, json!({"rating": "down"})).await;
    assert_eq!(rated.status, 200, "{}", rated.text());
    let named = app
        .call(
            Method::PUT,
            &format!("/api/admin/feedback/{admin_turn}/expected"),
            &admin,
            Some(json!({ "chunk_ids": [hidden_chunk] })),
        )
        .await;
    assert_eq!(named.status, 200, "{}", named.text());
    let both = reranking
        .call(Method::POST, "/api/admin/eval/feedback", &admin, None)
        .await
        .json();
    assert_eq!(both["run"]["queries"], 2, "{both}");
    let by_collection = &both["run"]["measures"]["by_collection"];
    let names = collection_names(&both);
    assert_eq!(names, ["default", "hr"], "{both}");
    for measures in by_collection.as_array().expect("by collection") {
        assert_eq!(measures["queries"], 1, "{measures}");
        assert!(measures["reranked"]["passages"]["recall_at_10"].is_number());
    }
    assert_eq!(
        by_collection[0]["reranked"]["passages"]["recall_at_10"], 1.0,
        "ann's query, as in the run before: {both}"
    );
    // Only the admin's query is under hr: its measures are that query's alone.
    let admin_outcome = both["queries"]
        .as_array()
        .expect("queries")
        .iter()
        .find(|query| query["turn_id"] == admin_turn.as_str())
        .expect("the admin's query")
        .clone();
    assert_eq!(
        by_collection[1]["answered"],
        if admin_outcome["answered"] == true {
            1.0
        } else {
            0.0
        },
        "{both}"
    );
    // The admin's turn leaves the set, and hr with it.
    let taken_out = app
        .call(
            Method::PUT,
            &format!("/api/admin/feedback/{admin_turn}/expected"),
            &admin,
            Some(json!({ "chunk_ids": [] })),
        )
        .await;
    assert_eq!(taken_out.status, 200);
    let default_only = app
        .call(Method::POST, "/api/admin/eval/feedback", &admin, None)
        .await
        .json();
    assert_eq!(default_only["run"]["queries"], 1);
    let names = collection_names(&default_only);
    assert_eq!(names, ["default"], "{default_only}");

    // An empty list takes the turn out of the set.
    assert_eq!(expect(json!([])).await.status, 200);
    let empty = app
        .call(Method::POST, "/api/admin/eval/feedback", &admin, None)
        .await
        .json();
    assert_eq!(empty["run"]["queries"], 0);
}

/// A `/v1` turn is rated by its `bor.turn_id`, with the key that asked it.
#[actix_web::test]
async fn a_v1_turn_is_rated_by_its_bor_turn_id() {
    let app = TestApp::spawn_with_accounts(&[]).await;
    app.add_user("ann", Role::Member).await;
    let cookie = app.sign_in("ann").await;
    let (_, key) = app.make_key(&cookie, "editor").await;
    let key = Credential::Bearer(key);
    let completion = app
        .call(
            Method::POST,
            "/v1/chat/completions",
            &key,
            Some(json!({"model": "bor", "messages": [{"role": "user", "content": "Where is the descaler?"}]})),
        )
        .await;
    assert_eq!(completion.status, 200, "{}", completion.text());
    let turn = completion.json()["bor"]["turn_id"]
        .as_str()
        .expect("bor.turn_id")
        .to_owned();
    let rated = rate(
        &app,
        &key,
        &turn,
        json!({"rating": "down", "reason": "wrong_answer"}),
    )
    .await;
    assert_eq!(rated.status, 200, "{}", rated.text());
    assert_eq!(rated.json()["reason"], "wrong_answer");
}
