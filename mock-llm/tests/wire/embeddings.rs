use bor_mock_llm::MockLlm;
use serde_json::{Value, json};

use crate::support::post_json;

const EMBEDDINGS: &str = "/v1/embeddings";

async fn embed(mock: &MockLlm, input: Value) -> Vec<Vec<f64>> {
    let response = post_json(
        mock.addr(),
        EMBEDDINGS,
        &json!({"model": "smollm2", "input": input}),
    )
    .await
    .response();
    assert_eq!(response.status, 200);
    let body = response.json();
    assert_eq!(body["object"], "list");
    body["data"]
        .as_array()
        .unwrap()
        .iter()
        .enumerate()
        .map(|(index, item)| {
            assert_eq!(item["object"], "embedding");
            assert_eq!(item["index"], index);
            item["embedding"]
                .as_array()
                .unwrap()
                .iter()
                .map(|x| x.as_f64().unwrap())
                .collect()
        })
        .collect()
}

fn cosine(a: &[f64], b: &[f64]) -> f64 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

#[tokio::test]
async fn embeddings_are_deterministic_unit_vectors() {
    let mock = MockLlm::start().unwrap();
    let texts = json!([
        "How does bor retry a failing model?",
        "",
        "How does bor retry a failing model?"
    ]);
    let vectors = embed(&mock, texts).await;
    assert_eq!(vectors.len(), 3);
    for vector in &vectors {
        assert_eq!(vector.len(), 64);
        assert!((cosine(vector, vector) - 1.0).abs() < 1e-4);
    }
    assert_eq!(vectors[0], vectors[2]);
    assert_ne!(vectors[0], vectors[1]);

    let other_server = MockLlm::start().unwrap();
    let again = embed(&other_server, json!("How does bor retry a failing model?")).await;
    assert_eq!(again[0], vectors[0], "the same on every server and run");
}

#[tokio::test]
async fn related_texts_are_more_similar_than_unrelated_ones() {
    let mock = MockLlm::start().unwrap();
    let vectors = embed(
        &mock,
        json!([
            "How does bor retry a failing model request?",
            "bor retries a failing model request up to three times before giving up.",
            "Preheat the oven and bake the sourdough loaf for forty minutes.",
        ]),
    )
    .await;
    let related = cosine(&vectors[0], &vectors[1]);
    let unrelated = cosine(&vectors[0], &vectors[2]);
    assert!(related > 0.35, "{related}");
    assert!(related > unrelated + 0.3, "{related} vs {unrelated}");
}

#[tokio::test]
async fn the_dimension_is_configurable_and_directives_are_not_embedded() {
    let mock = MockLlm::builder().embedding_dim(8).start().unwrap();
    let vectors = embed(
        &mock,
        json!([
            "What is bor?",
            "What is bor?\nMOCK {\"reply\": \"chat only\"}"
        ]),
    )
    .await;
    assert_eq!(vectors[0].len(), 8);
    assert_eq!(vectors[0], vectors[1]);
    assert!(MockLlm::builder().embedding_dim(0).start().is_err());
}

#[tokio::test]
async fn bad_inputs_and_directives_are_refused() {
    let mock = MockLlm::start().unwrap();
    for body in [
        json!({"model": "m"}),
        json!({"input": [1, 2, 3]}),
        json!({"input": "x\nMOCK {\"status\": 503, \"on\": \"embedings\"}"}),
        json!({"input": "x\nMOCK {\"drop_after\": 1, \"on\": \"embeddings\"}"}),
    ] {
        let response = post_json(mock.addr(), EMBEDDINGS, &body).await.response();
        assert_eq!(response.status, 400, "{body}");
        assert!(response.json()["error"]["message"].is_string());
    }
}

#[tokio::test]
async fn wire_faults_apply_to_embeddings_in_scope() {
    let mock = MockLlm::start().unwrap();
    let body = json!({"input": "x\nMOCK {\"garbage\": \"invalid_json\", \"on\": \"embeddings\", \"times\": 1}"});
    let first = post_json(mock.addr(), EMBEDDINGS, &body).await.response();
    assert_eq!(first.status, 200);
    assert!(serde_json::from_slice::<Value>(&first.body).is_err());
    let second = post_json(mock.addr(), EMBEDDINGS, &body).await.response();
    assert_eq!(
        second.json()["data"][0]["embedding"]
            .as_array()
            .unwrap()
            .len(),
        64
    );

    let typed =
        json!({"input": "x\nMOCK {\"content_type\": \"text/plain\", \"on\": \"embeddings\"}"});
    let response = post_json(mock.addr(), EMBEDDINGS, &typed).await.response();
    assert_eq!(response.header("content-type"), Some("text/plain"));
}
