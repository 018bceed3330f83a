//! The instance's own evaluation set (docs/RETRIEVAL.md, "Feedback"): each rated turn
//! an admin named passages for is a query — what the turn searched, among what its
//! asker can read now — judged by those passages and their documents. A run measures
//! the fused ranking (and the re-ranked one when re-ranking is on) with the measures of
//! `bor eval`, at the level of documents (which survive a new chunking) and of the
//! passages themselves, and is kept with the settings it ran under, so that runs
//! before and after a change compare. `bor eval --feedback` and the admin page run it.

use std::collections::{BTreeMap, HashSet};
use std::io::Write;
use std::path::Path;

use bor_actors::llm::{LlmClient, LlmSettings};
use bor_actors::rerank::RerankSettings;
use serde::Serialize;
use utoipa::ToSchema;
use uuid::Uuid;

use super::metrics::{Judgements, Measures};
use crate::auth::AccessMap;
use crate::config::Config;
use crate::db::feedback::{self as stored, EvalRun, ExpectedTurn};
use crate::db::users::Role;
use crate::db::{DbError, DbPool};
use crate::knowledge::KnowledgeService;
use crate::knowledge::index::CollectionFilter;
use crate::knowledge::search::{SearchError, SearchQuery};

/// The depth measured: nDCG@10, Recall@10, MRR@10.
const MEASURED_DEPTH: usize = 10;

#[derive(Debug, thiserror::Error)]
pub enum FeedbackEvalError {
    #[error(transparent)]
    Database(#[from] DbError),
    #[error("searching the turn {turn_id}'s query")]
    Search {
        turn_id: Uuid,
        #[source]
        source: SearchError,
    },
}

/// One ranking's measures, by documents and by passages.
#[derive(Debug, Clone, Copy, Default, Serialize, ToSchema)]
pub struct RankingMeasures {
    #[schema(value_type = Object)]
    pub documents: Measures,
    #[schema(value_type = Object)]
    pub passages: Measures,
}

/// A run's measures: the fused ranking's, and the re-ranked one's when re-ranking is
/// on; over the whole set, and by collection.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct RunMeasures {
    #[serde(flatten)]
    pub all: SetMeasures,
    /// The same over the queries of each collection a named passage is in (a query whose
    /// passages are in two collections counts in both), by name.
    pub by_collection: Vec<CollectionMeasures>,
}

/// The measures of some queries of the set.
#[derive(Debug, Clone, Copy, Serialize, ToSchema)]
pub struct SetMeasures {
    /// The share of the queries a turn would now answer from a named passage.
    pub answered: f64,
    pub fused: RankingMeasures,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reranked: Option<RankingMeasures>,
}

/// The measures of the queries whose named passages are in one collection.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct CollectionMeasures {
    pub collection: String,
    pub queries: usize,
    #[serde(flatten)]
    pub measures: SetMeasures,
}

/// What one query of the set scored.
struct Scored<'a> {
    collections: &'a [String],
    fused: RankingMeasures,
    reranked: Option<RankingMeasures>,
    answered: bool,
}

impl SetMeasures {
    /// The means over `scored` (every measure 0 over none).
    fn of(scored: &[&Scored<'_>], reranking: bool) -> SetMeasures {
        let mean = |all: Vec<RankingMeasures>| RankingMeasures {
            documents: Measures::mean(&all.iter().map(|m| m.documents).collect::<Vec<_>>()),
            passages: Measures::mean(&all.iter().map(|m| m.passages).collect::<Vec<_>>()),
        };
        let answered = scored.iter().filter(|query| query.answered).count();
        SetMeasures {
            answered: if scored.is_empty() {
                0.0
            } else {
                answered as f64 / scored.len() as f64
            },
            fused: mean(scored.iter().map(|query| query.fused).collect()),
            reranked: reranking
                .then(|| mean(scored.iter().filter_map(|query| query.reranked).collect())),
        }
    }
}

impl RunMeasures {
    fn of(scored: &[Scored<'_>], reranking: bool) -> RunMeasures {
        let mut collections: BTreeMap<&str, Vec<&Scored<'_>>> = BTreeMap::new();
        for query in scored {
            for collection in query.collections {
                collections.entry(collection).or_default().push(query);
            }
        }
        RunMeasures {
            all: SetMeasures::of(&scored.iter().collect::<Vec<_>>(), reranking),
            by_collection: collections
                .into_iter()
                .map(|(collection, queries)| CollectionMeasures {
                    collection: collection.to_owned(),
                    queries: queries.len(),
                    measures: SetMeasures::of(&queries, reranking),
                })
                .collect(),
        }
    }
}

/// How one query of the set fared (in the order a turn's sources are: re-ranked when
/// re-ranking is on, else fused).
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct QueryOutcome {
    pub turn_id: Uuid,
    pub query: String,
    /// The rank (from 1) of the first named passage within the top 10; `null`: not
    /// found there (the query fails).
    pub passage_rank: Option<usize>,
    /// The rank of the first document of a named passage within the top 10.
    pub document_rank: Option<usize>,
    /// A turn asking it now would be grounded and give the model a named passage (one
    /// within `BOR_RETRIEVAL_TOP_K`); `false`: the query still fails.
    pub answered: bool,
}

/// A run of the evaluation set: as kept, each query's outcome, and the run before it.
#[derive(Debug, Serialize, ToSchema)]
pub struct FeedbackEvaluation {
    pub run: EvalRun,
    pub queries: Vec<QueryOutcome>,
    /// The run kept before this one, to compare with; `null` for the first.
    pub previous: Option<EvalRun>,
}

/// The settings a run is kept with: what changes retrieval.
pub fn retrieval_settings(config: &Config) -> serde_json::Value {
    serde_json::json!({
        "embedding_model": config.llm_embed_model,
        "chunk_chars": config.chunk_chars,
        "chunk_overlap": config.chunk_overlap,
        "retrieval_top_k": config.retrieval_top_k,
        "deflect_threshold": config.deflect_threshold,
        "rerank": config.rerank_base_url.is_some(),
        "rerank_model": config.rerank_model,
    })
}

/// Runs the evaluation set with the knowledge base as it is, keeps the run and answers
/// it. An empty set is a run of no queries (every measure 0).
pub async fn evaluate_feedback(
    pool: &DbPool,
    knowledge: &KnowledgeService,
    access: &AccessMap,
    llm: &std::sync::Arc<LlmSettings>,
    rerank: Option<RerankSettings>,
    config: &Config,
) -> Result<FeedbackEvaluation, FeedbackEvalError> {
    let set = stored::evaluation_set(&mut *pool.get().await?).await?;
    let client = LlmClient::new(llm.clone());
    let (mut scored, mut queries) = (Vec::new(), Vec::new());
    for turn in &set {
        let scope = asker_scope(access, turn);
        let searched = SearchQuery {
            text: turn.query.clone(),
            keep: MEASURED_DEPTH,
            scope,
        };
        let outcome = knowledge
            .measured_search(&client, rerank, searched)
            .await
            .map_err(|source| FeedbackEvalError::Search {
                turn_id: turn.turn_id,
                source,
            })?;
        let by_fused: Vec<(i64, i64)> = outcome
            .rankings
            .fused
            .iter()
            .map(|chunk| (chunk.chunk_id, chunk.document_id))
            .collect();
        let as_turned: Vec<(i64, i64)> = outcome
            .retrieval
            .hits
            .iter()
            .map(|hit| (hit.chunk_id, hit.document_id))
            .collect();
        let passage_rank = first_rank(as_turned.iter().map(|(chunk, _)| *chunk), &turn.chunk_ids);
        let grounded = outcome.retrieval.is_grounded(config.deflect_threshold);
        let answered = grounded && passage_rank.is_some_and(|rank| rank <= config.retrieval_top_k);
        scored.push(Scored {
            collections: &turn.collections,
            fused: measures(turn, &by_fused),
            reranked: rerank.map(|_| measures(turn, &as_turned)),
            answered,
        });
        queries.push(QueryOutcome {
            turn_id: turn.turn_id,
            query: turn.query.clone(),
            answered,
            passage_rank,
            document_rank: first_rank(
                distinct(as_turned.iter().map(|(_, document)| *document)),
                &turn.document_ids,
            ),
        });
    }
    let measured = RunMeasures::of(&scored, rerank.is_some());
    let mut conn = pool.get().await?;
    let previous = stored::runs(&mut conn, 1).await?.into_iter().next();
    let run = stored::insert_run(
        &mut conn,
        &retrieval_settings(config),
        i32::try_from(set.len()).unwrap_or(i32::MAX),
        &serde_json::json!(measured),
    )
    .await?;
    Ok(FeedbackEvaluation {
        run,
        queries,
        previous,
    })
}

/// The collections the turn's asker can read now (`None`: every one, an admin's).
fn asker_scope(access: &AccessMap, turn: &ExpectedTurn) -> Option<CollectionFilter> {
    access
        .readable(Some(turn.asker), Role::from_stored(&turn.asker_role))
        .scope(None)
        // Asking for no collection by name is never refused; were it, nothing is read.
        .unwrap_or_else(|_| Some(CollectionFilter::new([])))
}

/// A ranking of (chunk, document) pairs measured against the turn's named passages and
/// their documents (a document counts at the rank of its best chunk).
fn measures(turn: &ExpectedTurn, ranking: &[(i64, i64)]) -> RankingMeasures {
    let judged = |ids: &[i64]| -> Judgements { ids.iter().map(|id| (id.to_string(), 1)).collect() };
    let passages: Vec<String> = ranking.iter().map(|(chunk, _)| chunk.to_string()).collect();
    let documents: Vec<String> = distinct(ranking.iter().map(|(_, document)| *document))
        .map(|id| id.to_string())
        .collect();
    RankingMeasures {
        documents: Measures::of(&documents, &judged(&turn.document_ids)),
        passages: Measures::of(&passages, &judged(&turn.chunk_ids)),
    }
}

/// Each id once, at its first place.
fn distinct(ids: impl Iterator<Item = i64>) -> impl Iterator<Item = i64> {
    let mut seen = HashSet::new();
    ids.filter(move |id| seen.insert(*id))
}

/// The rank (from 1) of the first of `wanted` among the first [`MEASURED_DEPTH`] ids.
fn first_rank(ranked: impl Iterator<Item = i64>, wanted: &[i64]) -> Option<usize> {
    ranked
        .take(MEASURED_DEPTH)
        .position(|id| wanted.contains(&id))
        .map(|index| index + 1)
}

/// Writes the evaluation set in the BEIR layout to `dir` (made when absent): the
/// documents each query's asker can read (`corpus.jsonl`, ids `d<document id>`), the
/// queries (`queries.jsonl`, ids the turns') and the judgements by document
/// (`qrels/test.tsv`), so that `bor eval DIR` measures it on another instance. Returns
/// (queries, documents) written.
pub async fn export(
    pool: &DbPool,
    access: &AccessMap,
    dir: &Path,
) -> Result<(usize, usize), String> {
    let described = |error: &dyn std::error::Error| bor_actors::error_chain(error);
    let mut conn = pool.get().await.map_err(|error| described(&error))?;
    let set = stored::evaluation_set(&mut conn)
        .await
        .map_err(|error| described(&error))?;
    let mut collections: HashSet<i64> = HashSet::new();
    let mut every = false;
    for turn in &set {
        match asker_scope(access, turn) {
            None => every = true,
            Some(scope) => collections.extend(scope.ids().iter().copied()),
        }
    }
    let scope = (!every).then(|| collections.into_iter().collect::<Vec<_>>());
    let documents = crate::db::documents::export_texts(&mut conn, scope.as_deref())
        .await
        .map_err(|error| described(&error))?;
    let write = |name: &str, lines: &mut dyn Iterator<Item = String>| -> Result<(), String> {
        let path = dir.join(name);
        let file = std::fs::File::create(&path)
            .map_err(|error| format!("cannot write {}: {error}", path.display()))?;
        let mut out = std::io::BufWriter::new(file);
        for line in lines {
            writeln!(out, "{line}")
                .map_err(|error| format!("cannot write {}: {error}", path.display()))?;
        }
        out.flush()
            .map_err(|error| format!("cannot write {}: {error}", path.display()))
    };
    std::fs::create_dir_all(dir.join("qrels"))
        .map_err(|error| format!("cannot make {}: {error}", dir.display()))?;
    write(
        "corpus.jsonl",
        &mut documents.iter().map(|(id, title, text)| {
            serde_json::json!({"_id": format!("d{id}"), "title": title, "text": text}).to_string()
        }),
    )?;
    write(
        "queries.jsonl",
        &mut set.iter().map(|turn| {
            serde_json::json!({"_id": turn.turn_id.to_string(), "text": turn.query}).to_string()
        }),
    )?;
    let judgements = std::iter::once("query-id\tcorpus-id\tscore".to_owned()).chain(
        set.iter().flat_map(|turn| {
            turn.document_ids
                .iter()
                .map(move |id| format!("{}\td{id}\t1", turn.turn_id))
        }),
    );
    write("qrels/test.tsv", &mut judgements.into_iter())?;
    Ok((set.len(), documents.len()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn turn(chunk_ids: Vec<i64>, document_ids: Vec<i64>) -> ExpectedTurn {
        ExpectedTurn {
            turn_id: Uuid::nil(),
            query: "q".into(),
            asker: Uuid::nil(),
            asker_role: "member".into(),
            chunk_ids,
            document_ids,
            collections: Vec::new(),
        }
    }

    #[test]
    fn a_query_counts_in_each_collection_of_its_passages() {
        let found = measures(&turn(vec![11], vec![1]), &[(11, 1)]);
        let missed = measures(&turn(vec![99], vec![9]), &[(11, 1)]);
        let (both, hr) = (["default".to_owned(), "hr".to_owned()], ["hr".to_owned()]);
        let scored = [
            Scored {
                collections: &both,
                fused: found,
                reranked: None,
                answered: true,
            },
            Scored {
                collections: &hr,
                fused: missed,
                reranked: None,
                answered: false,
            },
        ];
        let run = RunMeasures::of(&scored, false);
        assert_eq!(run.all.answered, 0.5);
        assert_eq!(run.all.fused.passages.recall_at_10, 0.5);
        let by_collection: Vec<(&str, usize, f64, f64)> = run
            .by_collection
            .iter()
            .map(|c| {
                (
                    c.collection.as_str(),
                    c.queries,
                    c.measures.answered,
                    c.measures.fused.passages.recall_at_10,
                )
            })
            .collect();
        assert_eq!(
            by_collection,
            [("default", 1, 1.0, 1.0), ("hr", 2, 0.5, 0.5)]
        );
        assert!(
            run.by_collection
                .iter()
                .all(|c| c.measures.reranked.is_none())
        );
        let json = serde_json::json!(run);
        assert_eq!(
            json["answered"], 0.5,
            "the whole set's measures at the top: {json}"
        );
        assert_eq!(json["by_collection"][1]["queries"], 2);
        assert_eq!(json["by_collection"][1]["answered"], 0.5);
        assert!(json.get("reranked").is_none());
    }

    #[test]
    fn a_document_counts_at_its_best_chunk_and_a_passage_at_its_own_rank() {
        // chunk 11 (document 1), chunk 21 (document 2), chunk 22 (document 2)
        let ranking = [(11, 1), (21, 2), (22, 2)];
        let measured = measures(&turn(vec![22], vec![2]), &ranking);
        assert_eq!(measured.documents.mrr_at_10, 0.5);
        assert!((measured.passages.mrr_at_10 - 1.0 / 3.0).abs() < 1e-12);
        assert_eq!(first_rank(ranking.iter().map(|(c, _)| *c), &[22]), Some(3));
        assert_eq!(
            first_rank(distinct(ranking.iter().map(|(_, d)| *d)), &[2]),
            Some(2)
        );
        assert_eq!(first_rank(ranking.iter().map(|(c, _)| *c), &[99]), None);
    }
}
