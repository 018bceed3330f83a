//! The task prefixes of an embedding model: each text is sent with its purpose's prefix
//! (`BOR_LLM_EMBED_QUERY_PREFIX`, `BOR_LLM_EMBED_DOCUMENT_PREFIX`), or as it is.

use bor_actors::llm::{EmbedPrefixes, EmbedPurpose, LlmCommand, LlmEvent};
use serde_json::json;

use super::*;

fn nomic_prefixes(mock: &MockLlm) -> LlmSettings {
    LlmSettings {
        embed_prefixes: EmbedPrefixes {
            query: Some("search_query:".into()),
            document: Some("search_document:".into()),
        },
        ..settings(mock.base_url())
    }
}

fn embed(purpose: EmbedPurpose, inputs: &[&str]) -> LlmCommand {
    LlmCommand::Embed {
        inputs: inputs.iter().map(|text| (*text).to_owned()).collect(),
        purpose,
    }
}

fn vectors(events: &[LlmEvent]) -> &[Vec<f32>] {
    match events {
        [LlmEvent::Embedded(vectors)] => vectors,
        other => panic!("expected vectors, got {other:?}"),
    }
}

#[actix::test]
async fn questions_and_passages_are_sent_each_with_its_prefix() {
    let mock = mock();
    let asked = run(
        nomic_prefixes(&mock),
        embed(EmbedPurpose::Query, &["How are refunds paid?"]),
    )
    .await;
    let stored = run(
        nomic_prefixes(&mock),
        embed(
            EmbedPurpose::Document,
            &["Refunds go to the card.", "Returns take 14 days."],
        ),
    )
    .await;
    assert_eq!(vectors(&asked).len(), 1);
    assert_eq!(vectors(&stored).len(), 2, "one vector per passage");

    let bodies = mock.embedding_requests();
    assert_eq!(
        bodies,
        vec![
            json!({"model": "smollm2", "input": ["search_query: How are refunds paid?"]}),
            json!({"model": "smollm2", "input": [
                "search_document: Refunds go to the card.",
                "search_document: Returns take 14 days.",
            ]}),
        ]
    );
}

#[actix::test]
async fn without_prefixes_the_texts_are_sent_as_they_are() {
    let mock = mock();
    for purpose in [EmbedPurpose::Query, EmbedPurpose::Document] {
        let events = run(
            settings(mock.base_url()),
            embed(purpose, &["How are refunds paid?"]),
        )
        .await;
        assert_eq!(vectors(&events).len(), 1);
    }
    for body in mock.embedding_requests() {
        assert_eq!(body["input"], json!(["How are refunds paid?"]));
    }
}
