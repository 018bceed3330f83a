//! `/v1/embeddings` and `/v1/models` of the real server, through bor's LLM client.

use crate::support::*;

const REFUND_POLICY: &str =
    "Refunds are paid to the original card within fourteen days of a return.";
const REFUND_QUESTION: &str = "How are refunds paid?";
const UNRELATED: &str = "The dragon slept on a pile of gold under the mountain.";

#[actix_web::test]
async fn a_batch_is_embedded_one_vector_per_input_in_input_order() {
    let llm = llm_client(&shared_server_url());
    let inputs = [REFUND_POLICY, REFUND_QUESTION, UNRELATED].map(str::to_owned);
    let batch = llm
        .embed(EmbedPurpose::Document, inputs.to_vec(), |_, _| {})
        .await
        .unwrap();
    assert_eq!(batch.len(), 3);
    for (input, vector) in inputs.iter().zip(&batch) {
        assert_eq!(vector.len(), 576);
        let alone = llm
            .embed(EmbedPurpose::Document, vec![input.clone()], |_, _| {})
            .await
            .unwrap();
        assert!(
            cosine(vector, &alone[0]) > 0.999,
            "the batch keeps the input order: {input}"
        );
        let norm = vector.iter().map(|x| x * x).sum::<f32>().sqrt();
        assert!(
            (norm - 1.0).abs() > 0.1,
            "mean-pooled, not normalised: {norm}"
        );
    }
    // What the local model's deflection threshold rests on: related texts score higher.
    let related = cosine(&batch[0], &batch[1]);
    let unrelated = cosine(&batch[1], &batch[2]);
    assert!(related > unrelated, "{related} vs {unrelated}");
}

#[actix_web::test]
async fn the_model_list_names_the_alias() {
    let models = llm_client(&shared_server_url())
        .list_models()
        .await
        .unwrap();
    assert_eq!(models, vec![MODEL.to_owned()]);
}
