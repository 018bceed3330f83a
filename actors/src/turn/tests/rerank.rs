//! Re-ranking in a turn: the scores reorder the fused candidates before the model sees
//! them, and a failed or late re-rank falls back to the fused order, never failing the
//! turn.

use std::time::Duration;

use super::*;
use crate::llm::{AttemptError, LlmError};
use crate::record::TurnPath;
use crate::rerank::{RerankSettings, passage_of};

/// Three fused candidates, 11 best; the model gets the best two.
fn three_candidates() -> FixedKnowledge {
    let mut knowledge = relevant();
    knowledge.retrieval.hits = vec![hit(11, 0.8), hit(21, 0.6), hit(31, 0.5)];
    knowledge
}

fn reranking(timeout: Duration) -> TurnSettings {
    TurnSettings {
        top_k: 2,
        rerank: Some(RerankSettings {
            candidates: 3,
            timeout,
        }),
        ..settings()
    }
}

fn source_ids(run: &TurnRun) -> Vec<i64> {
    run.done().sources.iter().map(|s| s.chunk_id).collect()
}

/// The chunk ids in the order the system prompt numbers them.
fn prompted_ids(run: &TurnRun) -> Vec<i64> {
    let system = run.chats()[0].messages[0]
        .content
        .clone()
        .unwrap_or_default();
    let mut found: Vec<(usize, i64)> = [11, 21, 31]
        .into_iter()
        .filter_map(|id| {
            system
                .find(&format!("Text of chunk {id}."))
                .map(|at| (at, id))
        })
        .collect();
    found.sort();
    found.into_iter().map(|(_, id)| id).collect()
}

#[actix::test]
async fn the_re_ranked_best_reach_the_model_in_their_new_order() {
    let run = run_setup(TurnSetup {
        question: "Which chunk?",
        settings: reranking(Duration::from_secs(30)),
        knowledge: three_candidates(),
        script: vec![
            embedded(),
            vec![LlmEvent::Reranked(vec![0.1, 0.5, 0.9])],
            reply(&["Chunk 31."]),
        ],
        ..TurnSetup::default()
    })
    .await;

    let candidates = three_candidates().retrieval.hits;
    assert_eq!(
        run.asked[1],
        Asked::Rerank {
            query: "Which chunk?".into(),
            documents: candidates.iter().map(passage_of).collect(),
        }
    );
    assert_eq!(
        passage_of(&candidates[0]),
        "Document 1\nPart 1\nText of chunk 11."
    );
    assert_eq!(prompted_ids(&run), vec![31, 21], "the best two, re-ranked");
    let numbered: Vec<(i64, u32)> = run
        .done()
        .sources
        .iter()
        .map(|s| (s.chunk_id, s.n))
        .collect();
    assert_eq!(
        numbered,
        vec![(21, 2), (31, 1)],
        "numbered as given, listed by score"
    );
    assert_eq!(run.done().path, TurnPath::Grounded);
    assert!(
        matches!(run.asked[2], Asked::Chat(_)),
        "nothing cancelled: {:?}",
        run.asked
    );
}

#[actix::test]
async fn a_failed_re_rank_falls_back_to_the_fused_order() {
    let failure = LlmError::Rejected(AttemptError::Status {
        status: 404,
        body: "no route".into(),
    });
    let run = run_setup(TurnSetup {
        settings: reranking(Duration::from_secs(30)),
        knowledge: three_candidates(),
        script: vec![
            embedded(),
            vec![LlmEvent::Failed(failure)],
            reply(&["Fused."]),
        ],
        ..TurnSetup::default()
    })
    .await;

    assert_eq!(
        run.names(),
        vec!["delta", "done"],
        "no error, no retry frame"
    );
    assert_eq!(prompted_ids(&run), vec![11, 21]);
    assert_eq!(source_ids(&run), vec![11, 21]);
    assert_eq!(run.record().outcome, crate::record::TurnOutcome::Done);
}

#[actix::test]
async fn a_re_rank_without_an_answer_is_cancelled_at_its_timeout() {
    let run = run_setup(TurnSetup {
        settings: reranking(Duration::from_millis(50)),
        knowledge: three_candidates(),
        // The re-ranking server never answers.
        script: vec![embedded(), Vec::new(), reply(&["Fused."])],
        ..TurnSetup::default()
    })
    .await;

    assert!(matches!(run.asked[1], Asked::Rerank { .. }));
    assert_eq!(run.asked[2], Asked::Cancel, "the request is dropped");
    assert!(matches!(run.asked[3], Asked::Chat(_)));
    assert_eq!(source_ids(&run), vec![11, 21]);
    assert_eq!(run.deltas(), "Fused.");
}

#[actix::test]
async fn one_candidate_or_re_ranking_off_asks_no_re_rank() {
    let mut one = relevant();
    one.retrieval.hits.truncate(1);
    let single = run_setup(TurnSetup {
        settings: reranking(Duration::from_secs(30)),
        knowledge: one,
        script: vec![embedded(), reply(&["One."])],
        ..TurnSetup::default()
    })
    .await;
    assert_eq!(source_ids(&single), vec![11]);

    let off = run_setup(TurnSetup {
        settings: TurnSettings {
            top_k: 2,
            ..settings()
        },
        knowledge: three_candidates(),
        script: vec![embedded(), reply(&["Off."])],
        ..TurnSetup::default()
    })
    .await;
    for run in [&single, &off] {
        assert!(!run.asked.iter().any(|a| matches!(a, Asked::Rerank { .. })));
    }
    assert_eq!(source_ids(&off), vec![11, 21]);
}
