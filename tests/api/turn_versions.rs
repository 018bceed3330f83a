//! Versions of a turn (docs/PROTOCOL.md, "Versions of a turn"): a turn asked again,
//! regenerated or with its question edited, is a new row of the same turn, never a new
//! turn at the conversation's end; the conversation, its list, its search and the
//! history of later turns use the newest version, and every version stays readable.

use serde_json::{Value, json};

use crate::conversations::call;
use crate::support::*;

/// `GET /api/conversations/{id}`.
async fn loaded_conversation(app: &TestApp, id: &str) -> Value {
    call(app, "GET", &format!("/api/conversations/{id}"), None)
        .await
        .json()
}

/// The `(role, content)` of the messages of the mock's last chat request after the
/// system message.
fn last_history(app: &TestApp) -> Vec<(String, String)> {
    let chats = app.mock.chat_requests();
    let messages = chats.last().expect("a chat request")["messages"]
        .as_array()
        .expect("messages")
        .clone();
    messages[1..]
        .iter()
        .map(|m| {
            (
                m["role"].as_str().unwrap_or_default().to_owned(),
                m["content"].as_str().unwrap_or_default().to_owned(),
            )
        })
        .collect()
}

fn pairs(expected: &[(&str, &str)]) -> Vec<(String, String)> {
    expected
        .iter()
        .map(|(role, content)| ((*role).to_owned(), (*content).to_owned()))
        .collect()
}

/// The questions of the conversation's turns, and of the versions of each.
fn questions(conversation: &Value) -> Vec<(String, Vec<String>)> {
    conversation["turns"]
        .as_array()
        .expect("turns")
        .iter()
        .map(|turn| {
            let versions = turn["versions"]
                .as_array()
                .expect("versions")
                .iter()
                .map(|version| version["question"].as_str().unwrap_or_default().to_owned())
                .collect();
            (
                turn["question"].as_str().unwrap_or_default().to_owned(),
                versions,
            )
        })
        .collect()
}

#[actix_web::test]
async fn a_turn_asked_again_is_a_version_of_it_and_later_turns_see_the_newest() {
    let app = TestApp::spawn().await;
    let first = app
        .chat_json(json!({"message": "Where is the kettle?"}))
        .await;
    let conversation = first.last().data["conversation_id"]
        .as_str()
        .expect("a conversation")
        .to_owned();
    let second = app
        .chat_json(json!({"message": "How do I descale it?", "conversation_id": conversation}))
        .await;
    let original = second.turn_id();

    // Regenerated: the same question, the history without the turn itself.
    let regenerated = app
        .chat_json(json!({"message": "How do I descale it?", "version_of": original}))
        .await;
    assert_eq!(regenerated.last().event, "done");
    assert_eq!(
        regenerated.last().data["conversation_id"],
        conversation.as_str()
    );
    let expected_before = [
        ("user", "Where is the kettle?"),
        ("assistant", "Mock answer: Where is the kettle?"),
    ];
    let mut seen = pairs(&expected_before);
    seen.push(("user".to_owned(), "How do I descale it?".to_owned()));
    assert_eq!(last_history(&app), seen);

    // Edited, naming the newest version: still a version of the first.
    let edited = app
        .chat_json(json!({
            "message": "How do I clean the teapot?",
            "version_of": regenerated.turn_id(),
            "conversation_id": conversation,
        }))
        .await;
    assert_eq!(edited.last().event, "done");
    let rows = app.wait_for_rows(4).await;
    let first_version: uuid::Uuid = original.parse().expect("a UUID");
    let versions: Vec<Option<uuid::Uuid>> = rows.iter().map(|row| row.version_of).collect();
    assert_eq!(
        versions,
        [None, None, Some(first_version), Some(first_version)]
    );

    let loaded = loaded_conversation(&app, &conversation).await;
    assert_eq!(
        questions(&loaded),
        [
            (
                "Where is the kettle?".to_owned(),
                vec!["Where is the kettle?".to_owned()]
            ),
            (
                "How do I clean the teapot?".to_owned(),
                vec![
                    "How do I descale it?".to_owned(),
                    "How do I descale it?".to_owned(),
                    "How do I clean the teapot?".to_owned(),
                ]
            ),
        ]
    );
    let last = &loaded["turns"][1];
    assert_eq!(last["turn_id"], edited.turn_id().as_str());
    assert_eq!(last["versions"][0]["turn_id"], original.as_str());
    assert_eq!(last["answer"], "Mock answer: How do I clean the teapot?");
    assert!(last.get("version_of").is_none(), "{last}");

    // Ratings stay with their row: the first version's, not the chosen one's.
    let rated = call(
        &app,
        "PUT",
        &format!("/api/turns/{original}/feedback"),
        Some(json!({"rating": "up"})),
    )
    .await;
    assert_eq!(rated.status, 200, "{}", rated.text());
    let loaded = loaded_conversation(&app, &conversation).await;
    let last = &loaded["turns"][1];
    assert_eq!(last["versions"][0]["feedback"]["rating"], "up");
    assert!(last["feedback"].is_null() && last["versions"][2]["feedback"].is_null());

    // The list counts the turn once; its search finds the newest version's words only.
    let listed = call(&app, "GET", "/api/conversations", None).await.json();
    assert_eq!(listed[0]["turns"], 2, "{listed}");
    for (words, found) in [("teapot", 1), ("descale", 0), ("kettle", 1)] {
        let hits = call(&app, "GET", &format!("/api/conversations?q={words}"), None)
            .await
            .json();
        assert_eq!(
            hits.as_array().map(Vec::len),
            Some(found),
            "{words}: {hits}"
        );
    }

    // A later turn sees the newest version, once.
    app.chat_json(json!({"message": "And the filter?", "conversation_id": conversation}))
        .await;
    let mut seen = pairs(&expected_before);
    seen.extend(pairs(&[
        ("user", "How do I clean the teapot?"),
        ("assistant", "Mock answer: How do I clean the teapot?"),
        ("user", "And the filter?"),
    ]));
    assert_eq!(last_history(&app), seen);
}

#[actix_web::test]
async fn only_the_last_ended_turn_is_asked_again() {
    let app = TestApp::spawn().await;
    let first = app.chat_json(json!({"message": "First?"})).await;
    let conversation = first.last().data["conversation_id"].clone();
    let second = app
        .chat_json(json!({"message": "Second?", "conversation_id": conversation}))
        .await;

    let earlier = app
        .chat_json(json!({"message": "First?", "version_of": first.turn_id()}))
        .await;
    assert_eq!(
        (earlier.status, earlier.error_code()),
        (409, "not_last_turn")
    );
    assert!(earlier.frames.is_empty(), "refused before the stream opens");

    let elsewhere = app
        .chat_json(json!({
            "message": "Second?",
            "version_of": second.turn_id(),
            "conversation_id": uuid::Uuid::new_v4(),
        }))
        .await;
    assert_eq!(
        (elsewhere.status, elsewhere.error_code()),
        (400, "invalid_conversation")
    );
    let with_history = app
        .chat_json(json!({"message": "Second?", "version_of": second.turn_id(), "history": []}))
        .await;
    assert_eq!(with_history.error_code(), "invalid_history");
    let absent = app
        .chat_json(json!({"message": "Second?", "version_of": uuid::Uuid::new_v4()}))
        .await;
    assert_eq!((absent.status, absent.error_code()), (404, "not_found"));

    // A turn still running: 409 until it has ended, then a version of it is made.
    let story = directed(
        "Tell me a story",
        json!({"reply": "once upon a time there was a story", "token_delay_ms": 400}),
    );
    let running = app
        .chat_request()
        .send_body(json!({"message": story, "conversation_id": conversation}).to_string())
        .await
        .expect("the turn starts");
    let running_id = turn_id_of(running.headers());
    let refused = app
        .chat_json(json!({"message": "Again?", "version_of": running_id}))
        .await;
    assert_eq!(
        (refused.status, refused.error_code()),
        (409, "turn_running")
    );
    let ended = read_chat_response(running).await;
    assert_eq!(ended.last().event, "done");
    let again = app
        .chat_json(json!({"message": "Again?", "version_of": running_id}))
        .await;
    assert_eq!(again.last().event, "done", "{:?}", again.frames);
}
