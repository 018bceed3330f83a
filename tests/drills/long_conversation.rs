//! One conversation of many long turns: more words than one PostgreSQL `tsvector` holds.
//! Every turn's row is kept, the conversation lists every turn, and words of its first
//! and last turns still find it.

use serde_json::json;

use crate::scale;
use crate::support::distinct_words;

#[actix_web::test]
async fn a_conversation_of_500_turns_of_8000_characters_loses_no_row() {
    let turns = 500 * scale();
    let app = crate::drill_app(&[]).await;
    let mut conversation: Option<String> = None;
    for turn in 0..turns {
        let mut body = json!({ "message": distinct_words(turn, 7_990) });
        if let Some(id) = &conversation {
            body["conversation_id"] = json!(id);
        }
        let response = app.chat_json(body).await;
        assert_eq!(response.last().event, "done", "turn {turn}");
        conversation = response.last().data["conversation_id"]
            .as_str()
            .map(str::to_owned);
    }
    let id = conversation.expect("a conversation id");
    let rows = app.wait_for_rows(turns).await;
    assert_eq!(rows.len(), turns, "every turn's row is kept");
    let stats = app.drained_log_stats().await;
    assert_eq!(stats.refused, 0, "{stats:?}");

    let listed = app.get("/api/conversations", app.key()).await.json();
    assert_eq!(
        (&listed[0]["id"], &listed[0]["turns"]),
        (&json!(id), &json!(turns))
    );
    let last = turns - 1;
    let found = app
        .get(
            &format!("/api/conversations?q=w0q1%20w{last}q700"),
            app.key(),
        )
        .await
        .json();
    assert_eq!(found[0]["id"], id.as_str(), "{found}");
    assert_eq!(found[0]["turns"], turns);
}
