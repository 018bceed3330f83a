//! Whole turns answered by the real model: deflected, grounded, and a tool round-trip.

use bor_actors::record::{TurnPath, TurnStatus};

use crate::support::*;

#[actix_web::test]
async fn a_deflected_question_gets_a_streamed_answer_from_the_model() {
    // Straight to the server: bor's requests exactly as it sends them.
    let app = RealModelApp::spawn(&shared_server_url(), &[]).await;
    let turn = app.chat("Say hello in one short sentence.").await;
    turn.assert_one_terminal_frame();
    let done = &turn.last().data;
    assert_eq!(turn.last().event, "done", "{:?}", turn.frames);
    assert_eq!(done["path"], "deflected");
    assert_eq!(done["rounds"], 1);
    assert_eq!(done["retries"], 0);
    assert_eq!(done["sources"], serde_json::json!([]));
    let events = turn.events();
    assert!(
        events[..events.len() - 1].iter().all(|e| *e == "delta"),
        "{events:?}"
    );
    let answer = turn.deltas();
    assert!(!answer.trim().is_empty(), "the model said something");

    let rows = app.wait_for_rows(1).await;
    assert_eq!(rows.len(), 1);
    assert_eq!(
        (rows[0].status, rows[0].path),
        (TurnStatus::Done, TurnPath::Deflected)
    );
    assert_eq!(rows[0].answer, answer);
    assert_eq!(rows[0].chat_model, MODEL);
}

#[actix_web::test]
async fn a_grounded_question_is_answered_from_a_document_the_model_embedded() {
    let proxy = RewritingProxy::start(&shared_server_url(), cap_answer_length);
    let app = RealModelApp::spawn(&proxy.base_url(), &[]).await;
    let text = "Refunds are paid to the original card within fourteen days of a return.";
    let (document_id, chunk_id, chunk_embedding) = app.insert_document("Refund policy", text).await;
    assert_eq!(
        chunk_embedding.len(),
        576,
        "SmolLM2-135M embeds in 576 dimensions"
    );

    let question = "How are refunds paid?";
    let turn = app.chat(question).await;
    turn.assert_one_terminal_frame();
    assert_eq!(turn.last().event, "done", "{:?}", turn.frames);
    let done = &turn.last().data;
    assert_eq!(done["path"], "grounded");
    assert!(!turn.deltas().trim().is_empty(), "the model answered");
    let source = &done["sources"][0];
    assert_eq!(source["document_id"], document_id);
    assert_eq!(source["chunk_id"], chunk_id);
    assert_eq!(source["title"], "Refund policy");
    // The score is the cosine of the server's embeddings of the question and the chunk.
    let question_embedding = llm_client(&shared_server_url())
        .embed(EmbedPurpose::Query, vec![question.to_owned()], |_, _| {})
        .await
        .unwrap()
        .remove(0);
    let score = source["score"].as_f64().unwrap() as f32;
    let expected = cosine(&question_embedding, &chunk_embedding);
    assert!((score - expected).abs() < 1e-3, "{score} vs {expected}");

    let chats = proxy.chat_requests();
    let system = chats[0]["messages"][0]["content"].as_str().unwrap();
    assert!(system.contains(text), "{system}");
    assert_eq!(chats[0]["tools"].as_array().map(Vec::len), Some(3));
}

#[actix_web::test]
async fn a_tool_call_made_by_the_model_runs_and_its_result_goes_back() {
    // One tool round, then bor's final tools-free request: call, result, answer.
    let proxy = RewritingProxy::start(&shared_server_url(), force_search_documents);
    let app = RealModelApp::spawn(&proxy.base_url(), &[("BOR_AGENT_MAX_ROUNDS", "1")]).await;
    let (document_id, chunk_id, _) = app
        .insert_document(
            "Refund policy",
            "Refunds are paid to the original card within fourteen days of a return.",
        )
        .await;

    let turn = app.chat("How are refunds paid?").await;
    turn.assert_one_terminal_frame();
    assert_eq!(turn.last().event, "done", "{:?}", turn.frames);
    let tools: Vec<&Frame> = turn.frames.iter().filter(|f| f.event == "tool").collect();
    assert_eq!(tools.len(), 2, "{:?}", turn.frames);
    assert_eq!(tools[0].data["phase"], "start");
    assert_eq!(tools[0].data["name"], "search_documents");
    assert_eq!(tools[1].data["phase"], "end");
    assert_eq!(tools[1].data["call_id"], tools[0].data["call_id"]);
    assert!(!turn.deltas().trim().is_empty(), "the final answer");
    let done = &turn.last().data;
    assert_eq!(done["rounds"], 2);

    let chats = proxy.chat_requests();
    assert_eq!(chats.len(), 2);
    assert!(chats[0].get("tools").is_some());
    assert!(
        chats[1].get("tools").is_none(),
        "the final request is tools-free"
    );
    let messages = chats[1]["messages"].as_array().unwrap();
    assert_eq!(messages.len(), 4, "system, question, the call, its result");
    let call = &messages[2]["tool_calls"][0];
    assert_eq!(messages[2]["role"], "assistant");
    assert_eq!(call["id"], tools[0].data["call_id"]);
    assert_eq!(call["type"], "function");
    assert_eq!(call["function"]["name"], "search_documents");
    let arguments: serde_json::Value =
        serde_json::from_str(call["function"]["arguments"].as_str().unwrap())
            .expect("the server's grammar gave JSON arguments");
    assert!(arguments["query"].as_str().is_some_and(|q| !q.is_empty()));
    assert_eq!(messages[3]["role"], "tool");
    assert_eq!(messages[3]["tool_call_id"], call["id"]);
    let result: serde_json::Value =
        serde_json::from_str(messages[3]["content"].as_str().unwrap()).unwrap();
    assert_eq!(tools[1].data["ok"], result.get("error").is_none());
    assert_eq!(result["results"][0]["document_id"], document_id);
    assert_eq!(result["results"][0]["chunk_id"], chunk_id);

    let rows = app.wait_for_rows(1).await;
    assert_eq!(rows[0].tool_calls, 1);
}
