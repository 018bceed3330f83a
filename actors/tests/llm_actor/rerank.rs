//! Re-ranking requests: the `/rerank` shape, the re-ranking server's own key, and one
//! attempt only (a failed re-rank falls back to the fused order; it is not retried).

use bor_actors::llm::{AttemptError, LlmCommand, LlmError, LlmEvent, RerankServer};
use serde_json::json;

use super::*;

const RERANK_KEY: &str = "rerank-key-77";

fn reranking(mock: &MockLlm) -> LlmSettings {
    LlmSettings {
        rerank: Some(RerankServer {
            base_url: mock.base_url(),
            model: Some("reranker".into()),
            api_key: Some(RERANK_KEY.into()),
        }),
        ..settings("http://127.0.0.1:9/v1".to_owned())
    }
}

fn rerank(query: &str, documents: &[&str]) -> LlmCommand {
    LlmCommand::Rerank {
        query: query.to_owned(),
        documents: documents.iter().map(|d| (*d).to_owned()).collect(),
    }
}

fn authorization(request: &bor_mock_llm::RecordedRequest) -> Option<&str> {
    request
        .headers
        .iter()
        .find(|(name, _)| name.eq_ignore_ascii_case("authorization"))
        .map(|(_, value)| value.as_str())
}

#[actix::test]
async fn documents_are_scored_in_their_order_on_the_re_ranking_server_with_its_key() {
    let mock = mock();
    let documents = [
        "Granite is a rock.",
        "Oolong tea is partly oxidised.",
        "Tea.",
    ];
    let events = run(reranking(&mock), rerank("What is oolong tea?", &documents)).await;
    let [LlmEvent::Reranked(scores)] = events.as_slice() else {
        panic!("expected scores, got {events:?}");
    };
    assert_eq!(scores.len(), 3);
    assert!(scores[1] > scores[2] && scores[2] > scores[0], "{scores:?}");

    let requests = mock.requests();
    assert_eq!(requests.len(), 1);
    assert_eq!(requests[0].path, "/v1/rerank");
    assert_eq!(
        requests[0].body,
        json!({"model": "reranker", "query": "What is oolong tea?",
               "documents": documents, "texts": documents})
    );
    let bearer = format!("Bearer {RERANK_KEY}");
    assert_eq!(authorization(&requests[0]), Some(bearer.as_str()));
}

#[actix::test]
async fn a_failed_re_rank_is_not_retried_and_names_no_key() {
    let mock = mock();
    let query = format!("Tea?\nMOCK {}", json!({"status": 503, "on": "rerank"}));
    let events = run(reranking(&mock), rerank(&query, &["a", "b"])).await;
    match events.as_slice() {
        [LlmEvent::Failed(LlmError::Unavailable { attempts: 1, last })] => {
            assert!(
                matches!(last, AttemptError::Status { status: 503, .. }),
                "{last:?}"
            );
            assert!(!format!("{last}").contains(RERANK_KEY));
        }
        other => panic!("expected one failed attempt, got {other:?}"),
    }
    assert_eq!(mock.rerank_requests().len(), 1);

    let garbage = format!("Tea?\nMOCK {}", json!({"garbage": "html", "on": "rerank"}));
    let events = run(reranking(&mock), rerank(&garbage, &["a", "b"])).await;
    assert!(
        matches!(
            events.as_slice(),
            [LlmEvent::Failed(LlmError::Unavailable { attempts: 1, .. })]
        ),
        "{events:?}"
    );
    assert_eq!(mock.rerank_requests().len(), 2);
}

#[actix::test]
async fn without_a_re_ranking_server_a_re_rank_is_refused_at_once() {
    let mock = mock();
    let events = run(settings(mock.base_url()), rerank("Tea?", &["a", "b"])).await;
    assert!(
        matches!(events.as_slice(), [LlmEvent::Failed(LlmError::Rejected(_))]),
        "{events:?}"
    );
    assert!(mock.requests().is_empty());
}
