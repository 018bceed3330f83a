//! Conversations kept by the server (docs/PROTOCOL.md, "Conversations"): every route
//! and refusal, and the history a turn of a conversation sends the model.

use bor::db::schema::conversations;
use std::time::Duration;

use chrono::{DateTime, Utc};
use diesel::QueryDsl as _;
use diesel_async::RunQueryDsl as _;
use serde_json::{Value, json};
use uuid::Uuid;

use crate::support::*;

/// A plain request with an optional JSON body; the reply's status, headers and body.
pub(crate) async fn call(app: &TestApp, method: &str, path: &str, body: Option<Value>) -> Reply {
    let method = awc::http::Method::from_bytes(method.as_bytes()).unwrap();
    let request = TestApp::client().request(method, format!("{}{path}", app.address));
    let mut response = match body {
        Some(body) => request
            .insert_header(("Content-Type", "application/json"))
            .send_body(body.to_string()),
        None => request.send(),
    }
    .await
    .expect("the request is sent");
    let body = response.body().limit(1 << 24).await.expect("the body");
    Reply {
        status: response.status().as_u16(),
        headers: response.headers().clone(),
        body: body.to_vec(),
    }
}

async fn ask(app: &TestApp, question: &str, conversation: Option<&str>) -> ChatResponse {
    let mut body = json!({ "message": question });
    if let Some(id) = conversation {
        body["conversation_id"] = json!(id);
    }
    app.chat_json(body).await
}

fn conversation_of(response: &ChatResponse) -> String {
    let header = response
        .headers
        .get("x-conversation-id")
        .expect("the X-Conversation-Id header")
        .to_str()
        .unwrap()
        .to_owned();
    assert_eq!(response.last().data["conversation_id"], header.as_str());
    header
}

#[actix_web::test]
async fn a_first_turn_starts_a_conversation_titled_by_its_question() {
    let app = TestApp::spawn().await;
    let question = format!("  What   is {} bor?", "very ".repeat(30));
    let response = ask(&app, &question, None).await;
    assert_eq!(response.last().event, "done");
    let id = conversation_of(&response);
    app.wait_for_rows(1).await;

    let listed = call(&app, "GET", "/api/conversations", None).await;
    assert_eq!(listed.status, 200);
    let list = listed.json();
    assert_eq!(list.as_array().unwrap().len(), 1);
    assert_eq!(list[0]["id"], id.as_str());
    assert_eq!(list[0]["turns"], 1);
    let title = list[0]["title"].as_str().unwrap();
    assert_eq!(title.chars().count(), 80, "{title}");
    assert!(
        title.starts_with("What is very very") && title.ends_with('…'),
        "{title}"
    );

    // A failed turn leaves no row, and so no conversation.
    let failed = ask(&app, &directed("Broken?", json!({"status": 400})), None).await;
    assert_eq!(failed.last().event, "error");
    conversation_of(&failed);
    let listed = call(&app, "GET", "/api/conversations", None).await;
    assert_eq!(listed.json().as_array().unwrap().len(), 1);
}

#[actix_web::test]
async fn the_model_sees_the_stored_turns_in_order_even_before_their_rows_are_written() {
    let app = TestApp::spawn().await;
    let first = ask(&app, "First question?", None).await;
    let id = conversation_of(&first);
    // Asked at once: the first turn's row may still wait in the LogActor's queue.
    let second = ask(&app, "Second question?", Some(&id)).await;
    assert_eq!(conversation_of(&second), id);
    let third = ask(&app, "Third question?", Some(&id)).await;
    assert_eq!(third.last().event, "done");

    let chats = app.mock.chat_requests();
    let messages = chats[2]["messages"].as_array().unwrap();
    let seen: Vec<(&str, &str)> = messages[1..]
        .iter()
        .map(|m| (m["role"].as_str().unwrap(), m["content"].as_str().unwrap()))
        .collect();
    assert_eq!(
        seen,
        [
            ("user", "First question?"),
            ("assistant", "Mock answer: First question?"),
            ("user", "Second question?"),
            ("assistant", "Mock answer: Second question?"),
            ("user", "Third question?"),
        ]
    );
    app.wait_for_rows(3).await;
    let conversation = call(&app, "GET", &format!("/api/conversations/{id}"), None).await;
    let turns = conversation.json()["turns"].clone();
    let questions: Vec<&str> = turns
        .as_array()
        .unwrap()
        .iter()
        .map(|turn| turn["question"].as_str().unwrap())
        .collect();
    assert_eq!(
        questions,
        ["First question?", "Second question?", "Third question?"]
    );
    assert_eq!(turns[0]["status"], "done");
    assert_eq!(turns[0]["path"], "deflected");
    assert_eq!(turns[0]["answer"], "Mock answer: First question?");
    assert!(turns[0]["sources"].is_array());
}

#[actix_web::test]
async fn an_unknown_conversation_id_starts_that_conversation_and_bad_ids_are_refused() {
    let app = TestApp::spawn().await;
    let chosen = Uuid::new_v4().to_string();
    let response = ask(&app, "Hello?", Some(&chosen)).await;
    assert_eq!(conversation_of(&response), chosen);
    assert_eq!(
        app.mock.chat_requests()[0]["messages"]
            .as_array()
            .unwrap()
            .len(),
        2
    );

    let bad = app
        .chat_json(json!({"message": "x", "conversation_id": "nope"}))
        .await;
    assert_eq!(
        (bad.status, bad.error_code()),
        (400, "invalid_conversation")
    );
    let both = app
        .chat_json(json!({"message": "x", "conversation_id": chosen, "history": []}))
        .await;
    assert_eq!((both.status, both.error_code()), (400, "invalid_history"));
    assert!(both.frames.is_empty(), "refused before the stream opens");
}

#[actix_web::test]
async fn conversations_are_renamed_deleted_with_their_turns_and_404_when_absent() {
    let app = TestApp::spawn().await;
    let id = conversation_of(&ask(&app, "Keep me?", None).await);
    app.wait_for_rows(1).await;

    let renamed = call(
        &app,
        "PATCH",
        &format!("/api/conversations/{id}"),
        Some(json!({"title": "  Kept  "})),
    )
    .await;
    assert_eq!(renamed.status, 200);
    assert_eq!(renamed.json()["title"], "Kept");
    assert_eq!(renamed.json()["turns"], 1);
    for (bad, code) in [
        (json!({"title": "  "}), "invalid_title"),
        (json!({"title": "x".repeat(201)}), "invalid_title"),
        (json!({"title": 3}), "invalid_title"),
        (json!({}), "invalid_json"),
        (json!({"title": null}), "invalid_json"),
        (json!({"pinned": "yes"}), "invalid_json"),
        (json!({"archived": 1}), "invalid_json"),
        (json!({"starred": true}), "invalid_json"),
    ] {
        let refused = call(
            &app,
            "PATCH",
            &format!("/api/conversations/{id}"),
            Some(bad.clone()),
        )
        .await;
        assert_eq!(refused.status, 400, "{bad}");
        assert_eq!(refused.json()["error"]["code"], code, "{bad}");
    }
    // A later turn does not take the name back.
    ask(&app, "Another?", Some(&id)).await;
    app.wait_for_rows(2).await;
    let one = call(&app, "GET", &format!("/api/conversations/{id}"), None).await;
    assert_eq!(one.json()["title"], "Kept");

    let deleted = call(&app, "DELETE", &format!("/api/conversations/{id}"), None).await;
    assert_eq!(deleted.status, 204);
    assert!(
        app.query_log().await.is_empty(),
        "its turns' rows went with it"
    );
    for (method, path) in [
        ("GET", format!("/api/conversations/{id}")),
        ("DELETE", format!("/api/conversations/{id}")),
        ("GET", "/api/conversations/not-a-uuid".to_owned()),
        (
            "GET",
            format!("/api/conversations/{}/export", Uuid::new_v4()),
        ),
    ] {
        let reply = call(&app, method, &path, None).await;
        assert_eq!(reply.status, 404, "{method} {path}");
        assert_eq!(reply.json()["error"]["code"], "not_found");
    }
    let unknown = call(
        &app,
        "PATCH",
        &format!("/api/conversations/{}", Uuid::new_v4()),
        Some(json!({"title": "x"})),
    )
    .await;
    assert_eq!(unknown.status, 404);
}

#[actix_web::test]
async fn a_conversation_exports_as_markdown_and_json() {
    let app = TestApp::spawn().await;
    let id = conversation_of(&ask(&app, "What is the kettle?", None).await);
    app.wait_for_rows(1).await;

    let markdown = call(
        &app,
        "GET",
        &format!("/api/conversations/{id}/export?format=markdown"),
        None,
    )
    .await;
    assert_eq!(markdown.status, 200);
    assert_eq!(
        markdown.headers.get("content-type").unwrap(),
        "text/markdown; charset=utf-8"
    );
    let disposition = markdown
        .headers
        .get("content-disposition")
        .unwrap()
        .to_str()
        .unwrap();
    assert!(disposition.starts_with("attachment"), "{disposition}");
    let text = String::from_utf8(markdown.body.clone()).unwrap();
    assert!(text.starts_with("# What is the kettle?\n"), "{text}");
    assert!(
        text.contains("## What is the kettle?\n\nMock answer: What is the kettle?"),
        "{text}"
    );

    let exported = call(
        &app,
        "GET",
        &format!("/api/conversations/{id}/export?format=json"),
        None,
    )
    .await;
    assert_eq!(
        exported.headers.get("content-type").unwrap(),
        "application/json"
    );
    let one = call(&app, "GET", &format!("/api/conversations/{id}"), None).await;
    assert_eq!(exported.json(), one.json(), "the same object as GET");

    let bad = call(
        &app,
        "GET",
        &format!("/api/conversations/{id}/export?format=pdf"),
        None,
    )
    .await;
    assert_eq!(bad.status, 400);
    assert_eq!(bad.json()["error"]["code"], "invalid_format");
}

#[actix_web::test]
async fn conversations_are_searched_by_every_word_and_paged_newest_first() {
    let app = TestApp::spawn().await;
    let mut ids = Vec::new();
    for question in [
        "Kettle in the kitchen?",
        "Garden hose length?",
        "Kitchen tiles colour?",
    ] {
        ids.push(conversation_of(&ask(&app, question, None).await));
        app.wait_for_rows(ids.len()).await;
    }
    let found = |query: &str| {
        let app = &app;
        let query = query.to_owned();
        async move {
            let reply = call(app, "GET", &format!("/api/conversations?q={query}"), None).await;
            assert_eq!(reply.status, 200);
            reply
                .json()
                .as_array()
                .unwrap()
                .iter()
                .map(|c| c["id"].as_str().unwrap().to_owned())
                .collect::<Vec<_>>()
        }
    };
    assert_eq!(
        found("kitchen").await,
        [ids[2].clone(), ids[0].clone()],
        "newest first"
    );
    assert_eq!(
        found("KITCHEN%20kettle").await,
        [ids[0].clone()],
        "every word, any case"
    );
    // Words of the answers count too: the mock repeats the question.
    assert_eq!(found("mock%20hose").await, [ids[1].clone()]);
    assert!(
        found("100%25").await.is_empty(),
        "punctuation is no wildcard"
    );
    assert_eq!(
        found("kitch").await.len(),
        2,
        "a word matches the start of a word"
    );

    let first_page = call(&app, "GET", "/api/conversations?limit=2", None)
        .await
        .json();
    assert_eq!(first_page.as_array().unwrap().len(), 2);
    let before = first_page[1]["updated_at"].as_str().unwrap();
    let next = call(
        &app,
        "GET",
        &format!(
            "/api/conversations?limit=2&before={}",
            before.replace('+', "%2B")
        ),
        None,
    )
    .await
    .json();
    let next_ids: Vec<&str> = next
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["id"].as_str().unwrap())
        .collect();
    assert_eq!(next_ids, [ids[0].as_str()]);
    for bad in ["limit=0", "limit=201", "limit=x", "before=yesterday"] {
        let reply = call(&app, "GET", &format!("/api/conversations?{bad}"), None).await;
        assert_eq!(reply.status, 400, "{bad}");
    }
}

/// Conversations updated at the same moment are paged by id after it: a page that ends
/// among them is followed by the rest, none skipped or repeated.
#[actix_web::test]
async fn pages_that_end_among_equal_times_skip_no_conversation() {
    let app = TestApp::spawn().await;
    for n in 0..3 {
        ask(&app, &format!("Question {n}?"), None).await;
    }
    app.wait_for_rows(3).await;
    let mut conn = app.pool.get().await.unwrap();
    diesel_async::RunQueryDsl::execute(
        diesel::sql_query("UPDATE conversations SET updated_at = '2026-01-02T03:04:05.123456Z'"),
        &mut conn,
    )
    .await
    .unwrap();

    let mut listed: Vec<String> = Vec::new();
    let mut path = "/api/conversations?limit=1".to_owned();
    loop {
        let page = call(&app, "GET", &path, None).await.json();
        let Some(last) = page.as_array().unwrap().last() else {
            break;
        };
        listed.push(last["id"].as_str().unwrap().to_owned());
        path = format!(
            "/api/conversations?limit=1&before={}&before_id={}",
            last["updated_at"].as_str().unwrap().replace('+', "%2B"),
            last["id"].as_str().unwrap()
        );
        assert!(listed.len() <= 3, "paging ends: {listed:?}");
    }
    let mut sorted = listed.clone();
    sorted.sort();
    assert_eq!(listed, sorted, "ties come in id order");
    sorted.dedup();
    assert_eq!(sorted.len(), 3, "every conversation once: {listed:?}");

    // `before` alone still means strictly older.
    let older = call(
        &app,
        "GET",
        "/api/conversations?before=2026-01-02T03:04:05.123456Z",
        None,
    )
    .await
    .json();
    assert_eq!(older.as_array().unwrap().len(), 0);
    for bad in [
        "before_id=not-a-uuid&before=2026-01-02T03:04:05Z",
        &format!("before_id={}", Uuid::new_v4()),
    ] {
        let reply = call(&app, "GET", &format!("/api/conversations?{bad}"), None).await;
        assert_eq!(reply.status, 400, "{bad}");
        assert_eq!(reply.json()["error"]["code"], "invalid_json");
    }
}

#[actix_web::test]
async fn the_history_holds_the_last_twenty_turns_with_an_answer() {
    let app = TestApp::spawn().await;
    let id = conversation_of(&ask(&app, "Question 0?", None).await);
    for n in 1..=21 {
        ask(&app, &format!("Question {n}?"), Some(&id)).await;
    }
    app.wait_for_rows(22).await;
    let last = ask(&app, "Question 22?", Some(&id)).await;
    assert_eq!(last.last().event, "done");
    let chats = app.mock.chat_requests();
    let messages = chats.last().unwrap()["messages"].as_array().unwrap();
    let questions: Vec<&str> = messages[1..]
        .iter()
        .filter(|m| m["role"] == "user")
        .map(|m| m["content"].as_str().unwrap())
        .collect();
    let expected: Vec<String> = (2..=22).map(|n| format!("Question {n}?")).collect();
    assert_eq!(
        questions, expected,
        "the last 20 stored turns, then the question"
    );
}

/// The user and assistant messages of a chat request, after its system message.
fn history_of(chat: &Value) -> Vec<(String, String)> {
    chat["messages"].as_array().unwrap()[1..]
        .iter()
        .map(|m| {
            (
                m["role"].as_str().unwrap().to_owned(),
                m["content"].as_str().unwrap().to_owned(),
            )
        })
        .collect()
}

/// Turns that continue one conversation at once share their history's read
/// (src/stored_history.rs): each still sends the model every turn stored before it was
/// asked, and a turn asked after them all sees each of them.
#[actix_web::test]
async fn turns_asked_at_once_in_one_conversation_each_see_what_was_stored_before() {
    let app = TestApp::spawn().await;
    let id = conversation_of(&ask(&app, "Stored 0?", None).await);
    for n in 1..3 {
        ask(&app, &format!("Stored {n}?"), Some(&id)).await;
    }
    app.wait_for_rows(3).await;
    let stored: Vec<(String, String)> = (0..3)
        .flat_map(|n| {
            [
                ("user".to_owned(), format!("Stored {n}?")),
                ("assistant".to_owned(), format!("Mock answer: Stored {n}?")),
            ]
        })
        .collect();

    let at_once = (0..12).map(|n| {
        let app = &app;
        let id = id.as_str();
        async move { ask(app, &format!("At once {n}?"), Some(id)).await }
    });
    let replies = futures_util::future::join_all(at_once).await;
    assert!(replies.iter().all(|reply| reply.last().event == "done"));
    let chats = app.mock.chat_requests();
    assert_eq!(chats.len(), 15);
    for chat in &chats[3..] {
        let history = history_of(chat);
        assert_eq!(history[..6], stored[..], "every stored turn, in order");
        assert!(history.last().unwrap().1.starts_with("At once "));
    }

    let last = ask(&app, "After them all?", Some(&id)).await;
    assert_eq!(last.last().event, "done");
    let history = history_of(app.mock.chat_requests().last().unwrap());
    let mut asked: Vec<&str> = history
        .iter()
        .filter(|(role, _)| role == "user")
        .map(|(_, content)| content.as_str())
        .collect();
    assert_eq!(asked.pop(), Some("After them all?"));
    asked.sort_unstable();
    let mut expected: Vec<String> = (0..3).map(|n| format!("Stored {n}?")).collect();
    expected.extend((0..12).map(|n| format!("At once {n}?")));
    expected.sort_unstable();
    assert_eq!(asked, expected, "each of the turns asked at once, once");
}

#[actix_web::test]
async fn two_instances_on_one_database_see_the_same_conversations() {
    let first = TestApp::spawn().await;
    let second = first.spawn_sharing(&[]).await;
    let id = conversation_of(&ask(&first, "Asked on the first?", None).await);
    first.wait_for_rows(1).await;

    let listed = call(&second, "GET", "/api/conversations", None)
        .await
        .json();
    assert_eq!(listed[0]["id"], id.as_str());
    let next = ask(&second, "Continued on the second?", Some(&id)).await;
    assert_eq!(conversation_of(&next), id);
    let messages = second.mock.chat_requests()[0]["messages"].clone();
    assert_eq!(messages[1]["content"], "Asked on the first?", "{messages}");
    assert_eq!(messages[2]["content"], "Mock answer: Asked on the first?");
}

/// A conversation's words outgrow what one search vector can hold (1 MB): every turn is
/// still kept, and found by words from its first and its last turns together.
#[actix_web::test]
async fn a_long_conversation_keeps_every_turn_and_finds_words_of_any_of_them() {
    let app = TestApp::spawn().await;
    const TURNS: usize = 120;
    let first = ask(&app, &distinct_words(0, 7_900), None).await;
    let id = conversation_of(&first);
    for turn in 1..TURNS {
        let response = ask(&app, &distinct_words(turn, 7_900), Some(&id)).await;
        assert_eq!(response.last().event, "done");
    }
    let rows = app.wait_for_rows(TURNS).await;
    assert_eq!(rows.len(), TURNS, "no turn's row is given up");

    let conversation = call(&app, "GET", &format!("/api/conversations/{id}"), None)
        .await
        .json();
    assert_eq!(conversation["turns"].as_array().unwrap().len(), TURNS);
    let last = TURNS - 1;
    for query in [
        format!("w{last}q5"),
        "w0q3".to_owned(),
        format!("w0q3%20w{last}q500"),
    ] {
        let found = call(&app, "GET", &format!("/api/conversations?q={query}"), None)
            .await
            .json();
        assert_eq!(found.as_array().unwrap().len(), 1, "{query}");
        assert_eq!(found[0]["id"], id.as_str(), "{query}");
        assert_eq!(found[0]["turns"], TURNS, "{query}");
    }
    let renamed = call(
        &app,
        "PATCH",
        &format!("/api/conversations/{id}"),
        Some(json!({ "title": "Zanzibar notes" })),
    )
    .await;
    assert_eq!(renamed.status, 200);
    for (query, hits) in [
        ("zanzibar%20w7q2", 1),
        ("w0q0%20zanzib", 1),
        ("w0q0%20nope", 0),
    ] {
        let found = call(&app, "GET", &format!("/api/conversations?q={query}"), None)
            .await
            .json();
        assert_eq!(found.as_array().unwrap().len(), hits, "{query}");
    }
}

/// A follow-up ("and what is its default?") is searched with the question before it, so
/// the passage the conversation is about reaches the model; the model is asked the
/// follow-up as sent, and the searched query is in `done` and in the row.
#[actix_web::test]
async fn a_follow_up_retrieves_the_passage_its_conversation_is_about() {
    let app = TestApp::spawn_with(&[("BOR_RETRIEVAL_TOP_K", "1")]).await;
    let setting = "BOR_RETRIEVAL_TOP_K controls how many passages a turn gives the model; \
                   its default is 5.";
    let colours = "The default colours: by default the page is dark blue, the default font \
                   is serif.";
    app.insert_document("Retrieval settings", setting).await;
    app.insert_document("Page colours", colours).await;
    let first_question = "What does BOR_RETRIEVAL_TOP_K control?";
    let follow_up = "and what is its default?";

    // Alone, the follow-up's one word finds the colours first.
    let alone = app.search(&json!({"query": follow_up, "top_k": 1})).await;
    assert_eq!(
        alone.json["results"][0]["snippet"], colours,
        "{:?}",
        alone.json
    );

    let id = conversation_of(&ask(&app, first_question, None).await);
    let second = ask(&app, follow_up, Some(&id)).await;
    let searched = format!("{follow_up}\n{first_question}");
    assert_eq!(second.last().data["query"], searched.as_str());

    let chats = app.mock.chat_requests();
    let messages = chats.last().unwrap()["messages"].as_array().unwrap();
    let system = messages[0]["content"].as_str().unwrap();
    assert!(system.contains(setting), "{system}");
    assert!(!system.contains(colours), "{system}");
    assert_eq!(messages.last().unwrap()["content"], follow_up);

    let rows = app.wait_for_rows(2).await;
    assert_eq!(rows[0].searched_query.as_deref(), Some(first_question));
    assert_eq!(rows[1].question, follow_up);
    assert_eq!(rows[1].searched_query.as_deref(), Some(searched.as_str()));
}

/// The ids of a list reply, in order.
fn listed_ids(reply: &Reply) -> Vec<String> {
    assert_eq!(reply.status, 200, "{}", reply.text());
    reply
        .json()
        .as_array()
        .expect("a list")
        .iter()
        .map(|c| c["id"].as_str().unwrap().to_owned())
        .collect()
}

#[actix_web::test]
async fn pinned_and_archived_conversations_are_listed_on_their_own_and_still_continue() {
    let app = TestApp::spawn().await;
    let mut ids = Vec::new();
    for question in ["Oldest kettle?", "Middle kettle?", "Newest kettle?"] {
        ids.push(conversation_of(&ask(&app, question, None).await));
        app.wait_for_rows(ids.len()).await;
    }
    let [oldest, middle, newest] = [ids[0].as_str(), ids[1].as_str(), ids[2].as_str()];
    let patch = async |id: &str, body: Value| {
        call(
            &app,
            "PATCH",
            &format!("/api/conversations/{id}"),
            Some(body),
        )
        .await
    };
    let list = async |query: &str| {
        listed_ids(&call(&app, "GET", &format!("/api/conversations{query}"), None).await)
    };

    let listed = call(&app, "GET", "/api/conversations", None).await.json();
    assert_eq!(listed[0]["pinned"], false);
    assert_eq!(listed[0]["archived"], false);

    let pinned = patch(oldest, json!({"pinned": true})).await;
    assert_eq!(pinned.status, 200, "{}", pinned.text());
    assert_eq!(pinned.json()["pinned"], true);
    assert_eq!(
        pinned.json()["title"],
        "Oldest kettle?",
        "nothing else changes"
    );
    let archived = patch(middle, json!({"archived": true})).await;
    assert_eq!(archived.json()["archived"], true);
    assert_eq!(archived.json()["pinned"], false);

    // The list keeps its order, without the archived one; `pinned` picks either side.
    assert_eq!(list("").await, [newest, oldest]);
    assert_eq!(list("?pinned=true").await, [oldest]);
    assert_eq!(list("?pinned=false").await, [newest]);
    assert_eq!(list("?archived=true").await, [middle]);
    assert_eq!(list("?archived=false&pinned=true").await, [oldest]);
    // Search keeps to the side asked for.
    assert_eq!(list("?q=kettle").await, [newest, oldest]);
    assert_eq!(list("?q=kettle&archived=true").await, [middle]);
    for bad in ["archived=yes", "pinned=1", "archived="] {
        let reply = call(&app, "GET", &format!("/api/conversations?{bad}"), None).await;
        assert_eq!(reply.status, 400, "{bad}");
        assert_eq!(reply.json()["error"]["code"], "invalid_json", "{bad}");
    }

    // An archived conversation opens by its id and answers a follow-up, staying archived.
    let one = call(&app, "GET", &format!("/api/conversations/{middle}"), None).await;
    assert_eq!(
        (one.json()["archived"].clone(), one.json()["pinned"].clone()),
        (json!(true), json!(false))
    );
    ask(&app, "And the lid?", Some(middle)).await;
    app.wait_for_rows(4).await;
    let archived_now = call(&app, "GET", "/api/conversations?archived=true", None)
        .await
        .json();
    assert_eq!(archived_now[0]["id"], middle);
    assert_eq!(archived_now[0]["turns"], 2);
    assert_eq!(list("").await, [newest, oldest]);

    // Pinning again keeps the first pin's time; unpinning and unarchiving bring all back.
    let pinned_at = async |id: &str| {
        let mut conn = app.pool.get().await.unwrap();
        conversations::table
            .find(Uuid::parse_str(id).unwrap())
            .select(conversations::pinned_at)
            .first::<Option<DateTime<Utc>>>(&mut conn)
            .await
            .unwrap()
    };
    let first = pinned_at(oldest).await;
    assert!(first.is_some());
    assert_eq!(patch(oldest, json!({"pinned": true})).await.status, 200);
    assert_eq!(pinned_at(oldest).await, first);
    let both = patch(oldest, json!({"pinned": false, "title": "Renamed kettle"})).await;
    assert_eq!(both.json()["pinned"], false);
    assert_eq!(both.json()["title"], "Renamed kettle");
    assert_eq!(pinned_at(oldest).await, None);
    assert_eq!(
        patch(middle, json!({"archived": false})).await.json()["archived"],
        false
    );
    assert_eq!(list("").await, [middle, newest, oldest]);
    assert!(list("?archived=true").await.is_empty());
    assert!(list("?pinned=true").await.is_empty());

    let absent = Uuid::new_v4();
    for body in [json!({"pinned": true}), json!({"archived": true})] {
        let reply = patch(&absent.to_string(), body.clone()).await;
        assert_eq!(reply.status, 404, "{body}");
        assert_eq!(reply.json()["error"]["code"], "not_found");
    }
}

/// The questions a chat request's history holds, the question asked last.
fn questions_sent(app: &TestApp) -> Vec<String> {
    history_of(app.mock.chat_requests().last().expect("a chat request"))
        .into_iter()
        .filter(|(role, _)| role == "user")
        .map(|(_, question)| question)
        .collect()
}

/// Each instance caches the histories its turns continue (src/history_cache.rs): a
/// turn asked through another instance lets the cached history go, the next turn here
/// sees it, and a deleted conversation's history is gone at once.
#[actix_web::test]
async fn a_history_an_instance_caches_follows_turns_asked_through_another() {
    let first = TestApp::spawn().await;
    let second = first.spawn_sharing(&[]).await;
    let id = conversation_of(&ask(&first, "One?", None).await);
    let uuid = Uuid::parse_str(&id).unwrap();
    // A conversation not yet stored is not cached.
    first.wait_for_rows(1).await;
    ask(&first, "Two?", Some(&id)).await;
    first.wait_for_rows(2).await;
    let cache = first.state.histories.cache();
    assert!(cache.holds(uuid), "read for the second turn, then advanced");

    ask(&second, "Three?", Some(&id)).await;
    assert_eq!(questions_sent(&second), ["One?", "Two?", "Three?"]);
    let let_go = crate::instances::within(Duration::from_secs(5), || !cache.holds(uuid)).await;
    assert!(let_go.is_some(), "the other instance's row was announced");
    ask(&first, "Four?", Some(&id)).await;
    assert_eq!(questions_sent(&first), ["One?", "Two?", "Three?", "Four?"]);
    first.wait_for_rows(4).await;

    // Read for "Four?" and advanced by its row: the next turn reads nothing.
    assert!(cache.holds(uuid));
    ask(&first, "Five?", Some(&id)).await;
    assert_eq!(
        questions_sent(&first),
        ["One?", "Two?", "Three?", "Four?", "Five?"]
    );
    first.wait_for_rows(5).await;

    let deleted = call(&first, "DELETE", &format!("/api/conversations/{id}"), None).await;
    assert_eq!(deleted.status, 204);
    assert!(!cache.holds(uuid), "let go before the answer");
    ask(&first, "After?", Some(&id)).await;
    assert_eq!(questions_sent(&first), ["After?"]);
}

/// While the listening connection is down, announcements are lost: the cache lets
/// every history go and keeps none until the connection is back.
#[actix_web::test]
async fn a_lost_listener_empties_the_history_cache() {
    let app = TestApp::spawn().await;
    let id = conversation_of(&ask(&app, "One?", None).await);
    let uuid = Uuid::parse_str(&id).unwrap();
    app.wait_for_rows(1).await;
    ask(&app, "Two?", Some(&id)).await;
    app.wait_for_rows(2).await;
    let cache = app.state.histories.cache();
    assert!(cache.holds(uuid));

    let mut conn = app.pool.get().await.unwrap();
    let listeners = "SELECT pg_terminate_backend(pid) FROM pg_stat_activity \
         WHERE application_name = $1 AND datname = $2";
    let terminated = diesel::sql_query(listeners)
        .bind::<diesel::sql_types::Text, _>(bor::notify::APPLICATION_NAME)
        .bind::<diesel::sql_types::Text, _>(app.database().name())
        .execute(&mut conn)
        .await
        .unwrap();
    assert_eq!(terminated, 1);
    let let_go = crate::instances::within(Duration::from_secs(15), || !cache.holds(uuid)).await;
    assert!(
        let_go.is_some(),
        "the cache was emptied when the connection was lost"
    );
    // A row nobody announces (triggers off for this session).
    diesel::sql_query("SET session_replication_role = replica")
        .execute(&mut conn)
        .await
        .unwrap();
    let unannounced = bor::db::query_log::NewQueryLogEntry {
        conversation_id: Some(uuid),
        question: "Unannounced?".to_owned(),
        ..bor::testing::query_log_entry()
    };
    bor::query_log_store::write_turns(&mut conn, &[unannounced], None)
        .await
        .unwrap();
    diesel::sql_query("SET session_replication_role = DEFAULT")
        .execute(&mut conn)
        .await
        .unwrap();
    drop(conn);
    ask(&app, "Three?", Some(&id)).await;
    assert_eq!(
        questions_sent(&app),
        ["One?", "Two?", "Unannounced?", "Three?"]
    );
    app.wait_for_rows(4).await;

    // Once the listener is back, histories are kept again.
    let mut kept = false;
    for again in 0..30 {
        ask(&app, &format!("Again {again}?"), Some(&id)).await;
        if cache.holds(uuid) {
            kept = true;
            break;
        }
        actix_web::rt::time::sleep(Duration::from_millis(500)).await;
    }
    assert!(kept, "kept again after reconnecting");
}
