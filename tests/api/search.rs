//! `POST /api/search`: the retrieval a turn does, each signal's score and rank, the
//! grounded rule, and the refusals in the API's error shape.

use serde_json::{Value, json};

use crate::retrieval::cosine;
use crate::support::*;

const OOLONG: &str = "Oolong is a partly oxidised tea, between green and black.";
const GRANITE: &str = "Granite is an igneous rock rich in quartz.";

fn as_f64(value: &Value) -> f64 {
    value
        .as_f64()
        .unwrap_or_else(|| panic!("a number: {value}"))
}

#[actix_web::test]
async fn a_search_shows_each_signal_and_whether_a_turn_would_be_grounded() {
    // No cosine similarity reaches this threshold between different texts.
    let app = TestApp::spawn_with(&[("BOR_DEFLECT_THRESHOLD", "0.99")]).await;
    let (oolong, oolong_chunk) = app.insert_document("Teas", OOLONG).await;
    let (granite, _) = app.insert_document("Rocks", GRANITE).await;
    let question = "Which oolong, and why?";

    let found = app.search(&json!({"query": question})).await;
    assert_eq!(found.status, 200, "{:?}", found.json);
    let body = &found.json;
    assert_eq!(body["grounded"], true, "full text holds every word: {body}");
    let results = body["results"].as_array().unwrap();
    assert_eq!(results.len(), 2, "both chunks rank by cosine: {body}");
    let first = &results[0];
    assert_eq!(first["document_id"], oolong);
    assert_eq!(first["collection"], "default");
    assert_eq!(first["chunk_id"], oolong_chunk);
    assert_eq!(first["title"], "Teas");
    assert_eq!(first["snippet"], OOLONG);
    let signals = &first["signals"];
    assert_eq!(signals["full_text"]["rank"], 1, "{body}");
    assert!(as_f64(&signals["full_text"]["score"]) > 0.0);
    let expected_cosine = cosine(
        &app.mock_embedding(question).await,
        &app.mock_embedding(OOLONG).await,
    );
    assert!((as_f64(&first["score"]) - expected_cosine).abs() < 1e-5);
    assert!((as_f64(&signals["vector"]["score"]) - expected_cosine).abs() < 1e-5);
    // The best of both signals: each scaled to 1, and the fused score is their mean.
    assert_eq!(signals["vector"]["rank"], 1, "{body}");
    assert_eq!(as_f64(&signals["fused"]["score"]), 1.0, "{body}");
    assert_eq!(signals["fused"]["rank"], 1);

    let second = &results[1];
    assert_eq!(second["document_id"], granite);
    assert_eq!(
        second["signals"]["full_text"],
        Value::Null,
        "no word of the query"
    );
    assert_eq!(second["signals"]["fused"]["rank"], 2);
    assert_eq!(
        as_f64(&second["signals"]["fused"]["score"]),
        0.0,
        "the last of the cosine list, absent from full text: {body}"
    );
    for timing in ["embedding", "retrieval"] {
        assert!(as_f64(&body["timings_ms"][timing]) >= 0.0, "{body}");
    }

    let top = app.search(&json!({"query": question, "top_k": 1})).await;
    assert_eq!(top.json["results"].as_array().unwrap().len(), 1);

    // A turn asking this would be deflected: the chunks rank, but nothing grounds it.
    let unknown = app.search(&json!({"query": "zebra"})).await;
    assert_eq!(unknown.json["grounded"], false, "{:?}", unknown.json);
    assert_eq!(unknown.json["results"].as_array().unwrap().len(), 2);
    let turn = app.chat("zebra").await;
    assert_eq!(turn.last().data["path"], "deflected");
}

#[actix_web::test]
async fn an_empty_knowledge_base_is_searched_to_nothing() {
    let app = TestApp::spawn().await;
    let found = app.search(&json!({"query": "anything"})).await;
    assert_eq!(found.status, 200);
    assert_eq!(found.json["grounded"], false);
    assert_eq!(found.json["results"], json!([]));
}

#[actix_web::test]
async fn bad_searches_are_refused_in_the_error_shape() {
    let app = TestApp::spawn_with(&[("BOR_MAX_MESSAGE_CHARS", "10")]).await;
    for (body, code) in [
        (json!({"query": "  "}), "empty_message"),
        (json!({"query": "a question too long"}), "message_too_long"),
        (json!({"query": "tea", "top_k": 0}), "invalid_json"),
        (json!({"query": "tea", "top_k": 51}), "invalid_json"),
        (json!({"query": "tea", "top_k": "five"}), "invalid_json"),
        (json!({"top_k": 3}), "invalid_json"),
        (json!(["tea"]), "invalid_json"),
        (json!({"query": "tea", "history": "tea"}), "invalid_history"),
        (
            json!({"query": "tea", "history": [{"role": "system", "content": "x"}]}),
            "invalid_history",
        ),
        (
            json!({"query": "tea", "history": vec![json!({"role": "user", "content": "x"}); 21]}),
            "invalid_history",
        ),
    ] {
        let refused = app.search(&body).await;
        assert_eq!(refused.status, 400, "{body}: {:?}", refused.json);
        assert_eq!(refused.error_code(), code, "{body}: {:?}", refused.json);
        assert!(refused.json["error"]["message"].is_string());
    }
}

#[actix_web::test]
async fn a_search_with_history_searches_as_a_turn_of_that_conversation() {
    let app = TestApp::spawn().await;
    app.insert_document("Teas", OOLONG).await;
    let history = json!([
        {"role": "user", "content": "  Tell me about oolong.  "},
        {"role": "assistant", "content": "It is a tea."},
    ]);
    let found = app
        .search(&json!({"query": "Why?", "history": history}))
        .await;
    assert_eq!(found.status, 200, "{:?}", found.json);
    assert_eq!(found.json["query"], "Why?\nTell me about oolong.");
    let signals = &found.json["results"][0]["signals"];
    assert_eq!(signals["full_text"]["rank"], 1, "{:?}", found.json);

    let alone = app.search(&json!({"query": "Why?"})).await;
    assert_eq!(alone.json["query"], "Why?");
    assert_eq!(
        alone.json["results"][0]["signals"]["full_text"],
        Value::Null
    );
}

/// With a re-ranking server, the fused candidates come back in its order with its score
/// and rank beside the other signals; when it fails, the fused order stands and the
/// response says why.
#[actix_web::test]
async fn a_search_shows_the_re_ranked_order_and_falls_back_when_the_re_rank_fails() {
    let app = TestApp::spawn_with(&[("BOR_RERANK_BASE_URL", "{mock}")]).await;
    // Cosine and BM25 prefer the chunk that repeats the query; the mock's cross-encoder,
    // of two chunks holding every word of it, the shorter.
    let (_, repeated) = app
        .insert_document("Alpha", "Oolong tea, oolong tea, oolong tea.")
        .await;
    let (_, short) = app.insert_document("Beta", "Oolong tea, grown.").await;
    let query = "oolong tea";
    let found = app.search(&json!({"query": query, "top_k": 2})).await;
    assert_eq!(found.status, 200, "{:?}", found.json);
    let results = found.json["results"].as_array().unwrap();
    assert_eq!(results[0]["chunk_id"], short, "{:?}", found.json);
    assert_eq!(
        results[0]["signals"]["fused"]["rank"], 2,
        "{:?}",
        found.json
    );
    assert_eq!(results[1]["chunk_id"], repeated);
    assert_eq!(results[0]["signals"]["rerank"]["rank"], 1);
    assert_eq!(results[1]["signals"]["rerank"]["rank"], 2);
    assert!(
        as_f64(&results[0]["signals"]["rerank"]["score"])
            > as_f64(&results[1]["signals"]["rerank"]["score"])
    );
    assert!(as_f64(&found.json["timings_ms"]["rerank"]) >= 0.0);
    assert_eq!(found.json.get("rerank_error"), None);
    let sent = app.mock.rerank_requests();
    assert_eq!(sent.len(), 1);
    assert_eq!(sent[0]["query"], query);

    let failing = format!("{query}\nMOCK {}", json!({"status": 500, "on": "rerank"}));
    let fallen = app.search(&json!({"query": failing, "top_k": 2})).await;
    assert_eq!(fallen.status, 200, "{:?}", fallen.json);
    let results = fallen.json["results"].as_array().unwrap();
    assert_eq!(results.len(), 2);
    assert_eq!(results[0]["chunk_id"], repeated, "the fused order");
    assert_eq!(results[0]["signals"]["fused"]["rank"], 1);
    assert_eq!(results[0]["signals"].get("rerank"), None);
    let why = fallen.json["rerank_error"].as_str().unwrap();
    assert!(why.contains("500"), "{why}");
}

#[actix_web::test]
async fn the_embedding_models_task_prefixes_go_before_questions_and_passages_only() {
    let app = TestApp::spawn_with(&[
        ("BOR_ADMIN_TOKEN", "t"),
        ("BOR_LLM_EMBED_QUERY_PREFIX", "search_query:"),
        ("BOR_LLM_EMBED_DOCUMENT_PREFIX", " search_document: "),
    ])
    .await;
    let stored = app
        .post_document(Some("t"), &json!({"title": "Teas", "content": OOLONG}))
        .await;
    assert_eq!(stored.status, 201, "{:?}", stored.json);
    let question = "Which oolong?";
    let found = app.search(&json!({"query": question})).await;
    assert_eq!(found.status, 200, "{:?}", found.json);
    let turn = app.chat(question).await;
    turn.assert_one_terminal_frame();

    let inputs: Vec<Value> = app
        .mock
        .embedding_requests()
        .into_iter()
        .map(|body| body["input"].clone())
        .collect();
    let passage = format!("search_document: {OOLONG}");
    let asked = json!([format!("search_query: {question}")]);
    assert!(
        inputs.contains(&json!([passage])),
        "the chunk with its prefix (the setting trimmed, one space after it): {inputs:?}"
    );
    assert_eq!(
        inputs.iter().filter(|input| **input == asked).count(),
        2,
        "the search and the turn: {inputs:?}"
    );
    // The prefixes reach the embedding model only: the results, the turn's sources and
    // its log row carry the texts as they are.
    assert_eq!(
        found.json["results"][0]["snippet"], OOLONG,
        "{}",
        found.json
    );
    let rows = app.wait_for_rows(1).await;
    assert_eq!(rows[0].question, question);
}
