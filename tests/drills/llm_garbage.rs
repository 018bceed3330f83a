//! An LLM server that answers garbage: every turn still ends with the right error frame,
//! nothing panics, and the service goes on answering.

use serde_json::{Value, json};

use crate::support::directed;
use crate::{assert_nothing_left, scale};

/// A directive, and the frames the turn must end up with.
struct Case {
    name: &'static str,
    directive: Value,
    events: &'static [&'static str],
    code: &'static str,
}

fn cases() -> Vec<Case> {
    vec![
        Case {
            name: "lines of invalid JSON in a 200 stream",
            directive: json!({"garbage": "invalid_json"}),
            events: &["retry", "error"],
            code: "llm_unavailable",
        },
        Case {
            name: "one 2 MiB line",
            directive: json!({"garbage": "huge_line"}),
            events: &["retry", "error"],
            code: "llm_unavailable",
        },
        Case {
            name: "an HTML page with status 200",
            directive: json!({"garbage": "html"}),
            events: &["retry", "error"],
            code: "llm_unavailable",
        },
        Case {
            name: "a stream with the wrong content type",
            directive: json!({"content_type": "text/plain"}),
            events: &["retry", "error"],
            code: "llm_unavailable",
        },
        Case {
            name: "an HTML error page from a proxy (502)",
            directive: json!({"html_error": true}),
            events: &["retry", "error"],
            code: "llm_unavailable",
        },
        Case {
            name: "an HTML error page saying not found (404)",
            directive: json!({"html_error": true, "status": 404}),
            events: &["error"],
            code: "llm_rejected",
        },
        Case {
            name: "invalid JSON from the embeddings endpoint",
            directive: json!({"garbage": "invalid_json", "on": "embeddings"}),
            events: &["retry", "error"],
            code: "llm_unavailable",
        },
        Case {
            name: "a 2 MiB line from the embeddings endpoint",
            directive: json!({"garbage": "huge_line", "on": "embeddings"}),
            events: &["retry", "error"],
            code: "llm_unavailable",
        },
        Case {
            name: "an error object after the first tokens",
            directive: json!({"error_after": 2, "reply": "one two three four"}),
            events: &["delta", "delta", "error"],
            code: "llm_interrupted",
        },
        Case {
            name: "a stream cut without its end",
            directive: json!({"drop_after": 1, "reply": "one two three"}),
            events: &["delta", "error"],
            code: "llm_interrupted",
        },
        Case {
            name: "garbage split byte by byte",
            directive: json!({"garbage": "invalid_json", "split_writes": true}),
            events: &["retry", "error"],
            code: "llm_unavailable",
        },
    ]
}

#[actix_web::test]
async fn garbage_from_the_llm_server_ends_turns_with_the_right_error_frame() {
    let app = crate::drill_app(&[("BOR_LLM_RETRIES", "1")]).await;
    for round in 0..scale() {
        for case in cases() {
            let question = directed(&format!("Garbage {round}?"), case.directive.clone());
            let response = app.chat(&question).await;
            assert_eq!(response.status, 200, "{}", case.name);
            assert_eq!(response.events(), case.events, "{}", case.name);
            assert_eq!(response.last().data["code"], case.code, "{}", case.name);
        }
    }
    let clean = app.chat("Still there?").await;
    assert_eq!(clean.last().event, "done", "the service goes on answering");
    assert_nothing_left(&app, &app.mock).await;
}

#[actix_web::test]
async fn an_endless_answer_is_cut_at_its_bound_and_kept_as_shown() {
    let app = crate::drill_app(&[("BOR_MAX_ANSWER_CHARS", "2000")]).await;
    for round in 0..scale() {
        // About 25,000 characters of answer and as much reasoning, far past the bound.
        let question = directed(
            &format!("Endless {round}?"),
            json!({"reply": "and on ", "repeat": 3_500, "reasoning": "hmm "}),
        );
        let response = app.chat(&question).await;
        let done = &response.last().data;
        assert_eq!(response.last().event, "done", "{done}");
        assert_eq!(done["truncated"], true, "{done}");
        response.assert_one_terminal_frame();
        let shown = response.deltas();
        let thinking: usize = response
            .frames
            .iter()
            .filter(|frame| frame.event == "thinking")
            .map(|frame| frame.data["text"].as_str().unwrap_or("").chars().count())
            .sum();
        assert_eq!(shown.chars().count() + thinking, 2000);
        let rows = app.wait_for_rows(round + 1).await;
        let row = rows
            .iter()
            .find(|row| row.turn_id.to_string() == response.turn_id())
            .expect("the turn's row");
        assert_eq!(row.answer, shown, "the row keeps what was shown");
    }
    let clean = app.chat("Still there?").await;
    assert_eq!(clean.last().event, "done");
    assert_nothing_left(&app, &app.mock).await;
}

#[actix_web::test]
async fn answers_holding_u0000_are_logged_and_hold_back_no_later_row() {
    let app = crate::drill_app(&[]).await;
    let turns = 20 * scale();
    for n in 0..turns {
        // Every other answer carries U+0000 (the mock streams the reply as given).
        let reply = if n % 2 == 0 {
            "nul \u{0} inside"
        } else {
            "clean"
        };
        let question = directed(&format!("Odd text {n}?"), json!({ "reply": reply }));
        let response = app.chat(&question).await;
        assert_eq!(response.last().event, "done", "turn {n}");
    }
    let rows = app.wait_for_rows(turns).await;
    assert_eq!(rows.len(), turns, "every row is written");
    assert!(rows.iter().all(|row| !row.answer.contains('\0')));
    let health = app.drained_log_stats().await;
    assert_eq!(health.refused, 0, "{health:?}");
    assert_nothing_left(&app, &app.mock).await;
}

#[actix_web::test]
async fn keep_alive_comments_do_not_keep_a_silent_turn_alive() {
    let app = crate::drill_app(&[("BOR_LLM_READ_TIMEOUT", "1")]).await;
    for round in 0..scale() {
        let question = directed(
            &format!("Alive {round}?"),
            json!({"keepalive_after": 1, "reply": "one two three"}),
        );
        let response = app.chat(&question).await;
        assert_eq!(response.events(), ["delta", "error"], "round {round}");
        assert_eq!(response.last().data["code"], "llm_interrupted");
    }
    let clean = app.chat("Still there?").await;
    assert_eq!(clean.last().event, "done");
    assert_nothing_left(&app, &app.mock).await;
}
