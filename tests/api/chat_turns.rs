//! Real turns through HTTP: frames, what the mock LLM received, `query_log` rows and
//! the per-turn log line.

use bor_actors::record::{TurnPath, TurnStatus};
use bor_actors::turn::CORRECTION_INSTRUCTION;
use serde_json::{Value, json};

use crate::support::*;

const LEAK: &str = "<tool_call>\n{\"name\": \"search_documents\", \"arguments\": {\"query\": \"x\"}}\n</tool_call>";

#[actix_web::test]
async fn a_clean_turn_streams_deltas_then_done_and_is_logged() {
    let app = TestApp::spawn().await;
    let response = app.chat("What is bor?").await;

    assert_eq!(response.status, 200);
    assert_eq!(
        response.headers.get("content-type").unwrap(),
        "text/event-stream"
    );
    assert_eq!(response.headers.get("cache-control").unwrap(), "no-cache");
    assert_eq!(response.headers.get("x-accel-buffering").unwrap(), "no");
    assert!(
        response
            .headers
            .get("content-encoding")
            .is_none_or(|v| v == "identity")
    );
    let events = response.events();
    assert!(
        events.len() >= 2 && events[..events.len() - 1].iter().all(|e| *e == "delta"),
        "{events:?}"
    );
    assert_eq!(response.deltas(), "Mock answer: What is bor?");
    let done = &response.last().data;
    assert_eq!(done["path"], "deflected");
    assert_eq!(done["rounds"], 1);
    assert_eq!(done["retries"], 0);
    assert_eq!(done["scaffold_stripped"], 0);
    assert_eq!(done["recovered"], false);
    assert_eq!(done["sources"], json!([]));
    response.assert_one_terminal_frame();

    assert_eq!(app.mock.embedding_requests().len(), 1);
    assert_eq!(
        app.mock.embedding_requests()[0]["input"],
        json!(["What is bor?"])
    );
    let chats = app.mock.chat_requests();
    assert_eq!(chats.len(), 1);
    assert!(chats[0].get("tools").is_none());
    assert_eq!(
        chats[0]["messages"][1],
        json!({"role": "user", "content": "What is bor?"})
    );

    let rows = app.wait_for_rows(1).await;
    assert_eq!(rows.len(), 1);
    let row = &rows[0];
    assert_eq!(row.turn_id.to_string(), response.turn_id());
    assert_eq!(
        (row.status, row.path),
        (TurnStatus::Done, TurnPath::Deflected)
    );
    assert_eq!(row.question, "What is bor?");
    assert_eq!(row.answer, "Mock answer: What is bor?");
    assert_eq!((row.rounds, row.retries, row.scaffold_stripped), (1, 0, 0));
    assert!(row.first_token_ms.is_some());
    let line = single_turn_log_line(&response.turn_id()).await;
    assert!(
        line.ends_with(&format!(
            "chat turn turn_id={} path=deflected outcome=done rounds=1 elapsed_ms={} retries=0 scaffold_stripped=0",
            row.turn_id, row.elapsed_ms
        )),
        "{line}"
    );
}

#[actix_web::test]
async fn a_dead_endpoint_that_recovers_is_retried_before_the_first_token() {
    let app = TestApp::spawn().await;
    let question = directed(
        "Hello?",
        json!({"status": 503, "times": 2, "reply": "Back again."}),
    );
    let response = app.chat(&question).await;
    assert_eq!(
        response.events(),
        vec!["retry", "retry", "delta", "delta", "done"]
    );
    assert_eq!(response.frames[0].data, json!({"attempt": 1, "max": 3}));
    assert_eq!(response.frames[1].data, json!({"attempt": 2, "max": 3}));
    assert_eq!(response.deltas(), "Back again.");
    assert_eq!(response.last().data["retries"], 2);
    assert_eq!(app.mock.chat_requests().len(), 3);
    let rows = app.wait_for_rows(1).await;
    assert_eq!(rows[0].retries, 2);
    let line = single_turn_log_line(&response.turn_id()).await;
    assert!(line.ends_with("retries=2 scaffold_stripped=0"), "{line}");
}

#[actix_web::test]
async fn a_dead_endpoint_ends_in_llm_unavailable_without_a_row() {
    let app = TestApp::spawn().await;
    let response = app.chat(&directed("Hello?", json!({"status": 503}))).await;
    assert_eq!(response.events(), vec!["retry", "retry", "retry", "error"]);
    let error = &response.last().data;
    assert_eq!(error["code"], "llm_unavailable");
    assert_eq!(
        error["detail"],
        "The language model is not responding — please try again in a moment."
    );
    assert_eq!(
        app.mock.chat_requests().len(),
        4,
        "the first attempt and 3 retries"
    );
    let line = single_turn_log_line(&response.turn_id()).await;
    assert!(
        line.contains("path=deflected outcome=error code=llm_unavailable rounds=1 "),
        "{line}"
    );
    assert!(line.ends_with("retries=3 scaffold_stripped=0"), "{line}");
    assert!(app.query_log().await.is_empty(), "no row for an error");
}

#[actix_web::test]
async fn a_dead_embedding_endpoint_fails_before_retrieval() {
    let app = TestApp::spawn_with(&[("BOR_LLM_RETRIES", "1")]).await;
    let response = app
        .chat(&directed(
            "Hello?",
            json!({"status": 500, "on": "embeddings"}),
        ))
        .await;
    assert_eq!(response.events(), vec!["retry", "error"]);
    assert_eq!(response.last().data["code"], "llm_unavailable");
    assert!(app.mock.chat_requests().is_empty());
    let line = single_turn_log_line(&response.turn_id()).await;
    assert!(
        line.contains("path=undecided outcome=error code=llm_unavailable rounds=0"),
        "{line}"
    );
}

#[actix_web::test]
async fn a_failure_after_the_first_token_is_terminal() {
    let app = TestApp::spawn().await;
    let question = directed(
        "Hello?",
        json!({"drop_after": 2, "reply": "one two three four"}),
    );
    let response = app.chat(&question).await;
    assert_eq!(response.events(), vec!["delta", "delta", "error"]);
    assert_eq!(response.deltas(), "one two ");
    assert_eq!(response.last().data["code"], "llm_interrupted");
    assert_eq!(
        response.last().data["detail"],
        "The language model dropped the connection — please try again."
    );
    assert_eq!(
        app.mock.chat_requests().len(),
        1,
        "never retried after output"
    );
    assert!(app.query_log().await.is_empty());
}

#[actix_web::test]
async fn a_client_error_is_rejected_at_once() {
    let app = TestApp::spawn().await;
    let response = app.chat(&directed("Hello?", json!({"status": 400}))).await;
    assert_eq!(response.events(), vec!["error"]);
    assert_eq!(response.last().data["code"], "llm_rejected");
    assert_eq!(
        response.last().data["detail"],
        "The language model rejected the request — check the service configuration."
    );
    assert_eq!(app.mock.chat_requests().len(), 1);
}

fn system_prompt(request: &Value) -> &str {
    request["messages"][0]["content"]
        .as_str()
        .expect("the first message is the system prompt")
}

#[actix_web::test]
async fn a_scaffolding_only_reply_gets_one_corrective_retry() {
    let app = TestApp::spawn().await;
    let question = directed("Hello?", json!({"leak": LEAK, "reply": "Plain answer."}));
    let response = app.chat(&question).await;
    assert_eq!(response.deltas(), "Plain answer.");
    // The done frame's `query` is the question, which carries the mock's directive.
    let shown = |data: &Value| {
        let mut data = data.clone();
        data.as_object_mut().map(|fields| fields.remove("query"));
        data.to_string()
    };
    assert!(
        !response
            .frames
            .iter()
            .any(|f| shown(&f.data).contains("tool_call"))
    );
    let done = &response.last().data;
    assert_eq!(done["recovered"], true);
    assert_eq!(done["rounds"], 2);
    assert_eq!(done["scaffold_stripped"], LEAK.chars().count());

    let chats = app.mock.chat_requests();
    assert_eq!(chats.len(), 2);
    assert!(chats[1].get("tools").is_none());
    assert_eq!(
        system_prompt(&chats[1]),
        format!("{}\n{CORRECTION_INSTRUCTION}", system_prompt(&chats[0]))
    );
    let last = |c: &Value| c["messages"].as_array().unwrap().last().cloned();
    assert_eq!(last(&chats[0]), last(&chats[1]));

    let rows = app.wait_for_rows(1).await;
    assert!(rows[0].recovered);
    assert_eq!(rows[0].scaffold_stripped as usize, LEAK.chars().count());
    let line = single_turn_log_line(&response.turn_id()).await;
    assert!(
        line.ends_with(&format!(
            "retries=0 scaffold_stripped={}",
            LEAK.chars().count()
        )),
        "{line}"
    );
}

#[actix_web::test]
async fn scaffolding_twice_is_a_malformed_reply() {
    let app = TestApp::spawn().await;
    let question = directed("Hello?", json!({"leak": LEAK, "leak_always": true}));
    let response = app.chat(&question).await;
    assert_eq!(response.events(), vec!["error"]);
    assert_eq!(response.last().data["code"], "malformed_reply");
    assert_eq!(
        response.last().data["detail"],
        "The model returned a malformed reply — please try again."
    );
    assert_eq!(app.mock.chat_requests().len(), 2);
    let line = single_turn_log_line(&response.turn_id()).await;
    assert!(
        line.contains("outcome=error code=malformed_reply rounds=2"),
        "{line}"
    );
    assert!(app.query_log().await.is_empty());
}

#[actix_web::test]
async fn a_grounded_turn_runs_a_tool_and_cites_sources() {
    let app = TestApp::spawn().await;
    let (document_id, chunk_id) = app
        .insert_document(
            "Refund policy",
            "Refunds are paid within fourteen days of a return.",
        )
        .await;
    let question = directed(
        "How are refunds paid?",
        json!({"tool_calls": [{"name": "search_documents", "arguments": {"query": "refunds paid"}}],
               "reply": "Within fourteen days."}),
    );
    let response = app.chat(&question).await;
    assert_eq!(
        response.events(),
        vec!["tool", "tool", "delta", "delta", "delta", "done"]
    );
    assert_eq!(response.frames[0].data["name"], "search_documents");
    assert_eq!(response.frames[0].data["phase"], "start");
    assert_eq!(response.frames[1].data["phase"], "end");
    assert_eq!(response.frames[1].data["ok"], true);
    let done = &response.last().data;
    assert_eq!(done["path"], "grounded");
    assert_eq!(done["rounds"], 2);
    assert_eq!(done["sources"][0]["document_id"], document_id);
    assert_eq!(done["sources"][0]["chunk_id"], chunk_id);
    assert_eq!(done["sources"][0]["title"], "Refund policy");

    let chats = app.mock.chat_requests();
    assert_eq!(chats.len(), 2);
    assert_eq!(chats[0]["tools"].as_array().unwrap().len(), 3);
    assert!(system_prompt(&chats[0]).contains("fourteen days of a return"));
    let messages = chats[1]["messages"].as_array().unwrap();
    let call_id = messages[2]["tool_calls"][0]["id"].as_str().unwrap();
    assert_eq!(messages[3]["role"], "tool");
    assert_eq!(messages[3]["tool_call_id"], call_id);
    let result: Value = serde_json::from_str(messages[3]["content"].as_str().unwrap()).unwrap();
    assert_eq!(result["results"][0]["chunk_id"], chunk_id);

    let rows = app.wait_for_rows(1).await;
    assert_eq!(rows[0].path, TurnPath::Grounded);
    assert_eq!(rows[0].tool_calls, 1);
    assert_eq!(rows[0].sources, done["sources"]);
}

#[actix_web::test]
async fn the_round_cap_ends_with_a_tools_free_request() {
    let app = TestApp::spawn_with(&[("BOR_AGENT_MAX_ROUNDS", "2")]).await;
    app.insert_document("Refund policy", "Refunds are paid within fourteen days.")
        .await;
    let question = directed(
        "How are refunds paid?",
        json!({"tool_calls": [{"name": "list_documents", "arguments": {}}], "tool_rounds": 100,
               "reply": "Final."}),
    );
    let response = app.chat(&question).await;
    assert_eq!(response.deltas(), "Final.");
    assert_eq!(response.last().data["rounds"], 3);
    let chats = app.mock.chat_requests();
    assert_eq!(chats.len(), 3);
    assert!(chats[0].get("tools").is_some() && chats[1].get("tools").is_some());
    assert!(chats[2].get("tools").is_none());
}

#[actix_web::test]
async fn the_kill_switch_sends_one_request_without_tools() {
    let app = TestApp::spawn_with(&[("BOR_AGENT_ENABLED", "false")]).await;
    app.insert_document("Refund policy", "Refunds are paid within fourteen days.")
        .await;
    let question = directed(
        "How are refunds paid?",
        json!({"tool_calls": [{"name": "list_documents", "arguments": {}}], "reply": "Fourteen days."}),
    );
    let response = app.chat(&question).await;
    assert_eq!(response.last().data["path"], "grounded");
    assert_eq!(response.last().data["rounds"], 1);
    assert!(!response.events().contains(&"tool"));
    let chats = app.mock.chat_requests();
    assert_eq!(chats.len(), 1);
    assert!(chats[0].get("tools").is_none());
    assert!(system_prompt(&chats[0]).contains("fourteen days"));
}

#[actix_web::test]
async fn fifty_concurrent_turns_all_finish() {
    let app = TestApp::spawn().await;
    let turns = (0..50).map(|n| {
        let question = directed(
            &format!("Question {n}?"),
            json!({"reply": format!("Answer {n}."), "token_delay_ms": 5}),
        );
        let app = &app;
        async move { app.chat(&question).await }
    });
    let responses = futures_util::future::join_all(turns).await;
    for (n, response) in responses.iter().enumerate() {
        assert_eq!(
            response.last().event,
            "done",
            "turn {n}: {:?}",
            response.events()
        );
        assert_eq!(response.deltas(), format!("Answer {n}."));
        response.assert_one_terminal_frame();
    }
    let rows = app.wait_for_rows(50).await;
    assert_eq!(rows.len(), 50);
    assert!(
        eventually(async || app.turns_in_flight() == 0).await,
        "every slot is free once its stream ended"
    );
}

#[actix_web::test]
async fn the_api_key_is_sent_as_bearer_and_never_logged() {
    const KEY: &str = "sk-do-not-log-9f2e";
    let app = TestApp::spawn_with(&[("BOR_LLM_API_KEY", KEY), ("BOR_LLM_RETRIES", "1")]).await;
    let response = app
        .chat(&directed("Hello?", json!({"status": 503, "times": 1})))
        .await;
    assert_eq!(response.last().event, "done");
    for request in app.mock.requests() {
        assert_eq!(
            request.header("authorization"),
            Some(format!("Bearer {KEY}").as_str())
        );
    }
    single_turn_log_line(&response.turn_id()).await;
    assert!(!all_logs().contains(KEY), "the key never reaches the log");
}

#[actix_web::test]
async fn a_question_with_u0000_is_refused_and_an_answer_with_it_is_logged_without_it() {
    let app = TestApp::spawn().await;
    let refused = app.chat("What is\u{0} bor?").await;
    assert_eq!(refused.status, 400);
    let code = refused
        .json
        .as_ref()
        .map(|json| json["error"]["code"].clone());
    assert_eq!(code, Some(json!("invalid_text")), "{:?}", refused.json);
    assert!(
        app.mock.chat_requests().is_empty(),
        "the model is not asked"
    );

    // The model's answer is not input: its U+0000 is dropped where the row is written.
    let question = directed("What is bor?", json!({"reply": "Bor\u{0} is a chat."}));
    let response = app.chat(&question).await;
    assert_eq!(response.status, 200);
    assert_eq!(response.last().event, "done", "{:?}", response.last());
    let next = app.chat("And then?").await;
    assert_eq!(next.last().event, "done");

    let rows = app.wait_for_rows(2).await;
    let row = rows
        .iter()
        .find(|row| row.turn_id.to_string() == response.turn_id())
        .expect("the turn's row");
    assert_eq!(row.answer, "Bor is a chat.");
    assert!(
        rows.iter()
            .any(|row| row.turn_id.to_string() == next.turn_id()),
        "the next turn's row follows"
    );
    assert!(
        eventually(async || {
            let stats = app.log_stats().await;
            (stats.refused, stats.queued, stats.written) == (0, 0, 2)
        })
        .await,
        "both rows written, none refused: {:?}",
        app.log_stats().await
    );
}

#[actix_web::test]
async fn chat_requests_carry_the_configured_max_tokens() {
    let app = TestApp::spawn_with(&[("BOR_LLM_MAX_TOKENS", "77")]).await;
    let response = app.chat("Short?").await;
    assert_eq!(response.last().event, "done");
    assert_eq!(app.mock.chat_requests()[0]["max_tokens"], 77);
}

/// With a re-ranking server the model gets the re-ranked best; a re-rank that fails or
/// does not answer in time leaves the fused order, and the turn still answers.
#[actix_web::test]
async fn a_turn_gives_the_model_the_re_ranked_best_and_survives_a_failed_re_rank() {
    let app = TestApp::spawn_with(&[
        ("BOR_RERANK_BASE_URL", "{mock}"),
        ("BOR_RETRIEVAL_TOP_K", "1"),
        ("BOR_RERANK_TIMEOUT", "0.5"),
    ])
    .await;
    // Fusion prefers the chunk that repeats the question, the mock's cross-encoder the
    // shorter one.
    let repeated = "Oolong tea, oolong tea, oolong tea.";
    let short = "Oolong tea, grown.";
    app.insert_document("Alpha", repeated).await;
    app.insert_document("Beta", short).await;
    let question = "oolong tea";
    let system_of_last_chat = |app: &TestApp| {
        let chats = app.mock.chat_requests();
        system_prompt(chats.last().unwrap()).to_owned()
    };

    let found = app.search(&json!({"query": question, "top_k": 2})).await;
    assert_eq!(
        found.json["results"][0]["snippet"], short,
        "{:?}",
        found.json
    );
    assert_eq!(found.json["results"][0]["signals"]["fused"]["rank"], 2);
    let turn = app.chat(question).await;
    assert_eq!(turn.last().event, "done", "{:?}", turn.frames);
    let system = system_of_last_chat(&app);
    assert!(
        system.contains(short) && !system.contains(repeated),
        "{system}"
    );

    for directive in [
        json!({"status": 503, "on": "rerank"}),
        json!({"hang": true, "on": "rerank"}),
    ] {
        let asked = format!("{question}\nMOCK {directive}");
        let turn = app.chat(&asked).await;
        assert_eq!(
            turn.events().last(),
            Some(&"done"),
            "{directive}: {:?}",
            turn.frames
        );
        assert!(!turn.events().contains(&"retry"), "{directive}");
        let system = system_of_last_chat(&app);
        assert!(
            system.contains(repeated) && !system.contains(short),
            "{directive}: {system}"
        );
    }
    let reranks = app.mock.rerank_requests();
    assert_eq!(
        reranks.len(),
        4,
        "the search's, then one attempt per turn, never retried"
    );
    assert_eq!(reranks[0]["documents"].as_array().unwrap().len(), 2);
}
