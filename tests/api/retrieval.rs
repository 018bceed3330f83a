//! Hybrid retrieval through real turns: full text alone can ground a turn, and every
//! source's score is its cosine similarity to the question.

use crate::support::*;

pub(crate) fn cosine(a: &[f32], b: &[f32]) -> f64 {
    let dot: f64 = a
        .iter()
        .zip(b)
        .map(|(x, y)| f64::from(*x) * f64::from(*y))
        .sum();
    let norm = |v: &[f32]| v.iter().map(|x| f64::from(*x).powi(2)).sum::<f64>().sqrt();
    dot / (norm(a) * norm(b))
}

#[actix_web::test]
async fn full_text_alone_grounds_a_turn_and_scores_are_cosines() {
    // No cosine similarity reaches this threshold between different texts.
    let app = TestApp::spawn_with(&[("BOR_DEFLECT_THRESHOLD", "0.99")]).await;
    let text = "Refunds are paid within fourteen days of a return.";
    let (document_id, chunk_id) = app.insert_document("Refund policy", text).await;

    // "refund" matches "Refunds" through English stemming.
    let turn = app.chat("refund").await;
    let done = &turn.last().data;
    assert_eq!(done["path"], "grounded", "{:?}", turn.frames);
    assert_eq!(done["sources"][0]["document_id"], document_id);
    assert_eq!(done["sources"][0]["chunk_id"], chunk_id);
    let expected = cosine(
        &app.mock_embedding("refund").await,
        &app.mock_embedding(text).await,
    );
    let score = done["sources"][0]["score"].as_f64().unwrap();
    assert!((score - expected).abs() < 1e-5, "{score} vs {expected}");
    assert!(score < 0.99);

    let turn = app.chat("zebra").await;
    assert_eq!(turn.last().data["path"], "deflected", "{:?}", turn.frames);
}

#[actix_web::test]
async fn a_question_full_of_stop_words_is_grounded_by_the_chunk_holding_its_other_words() {
    let app = TestApp::spawn_with(&[("BOR_DEFLECT_THRESHOLD", "0.99")]).await;
    let (document_id, _) = app
        .insert_document(
            "Teas",
            "Oolong is a partly oxidised tea, between green and black.",
        )
        .await;

    let turn = app.chat("Which oolong, and why?").await;
    let done = &turn.last().data;
    assert_eq!(done["path"], "grounded", "{:?}", turn.frames);
    assert_eq!(done["sources"][0]["document_id"], document_id);

    let turn = app.chat("Which oolong is grown where?").await;
    assert_eq!(turn.last().data["path"], "deflected", "{:?}", turn.frames);
}
