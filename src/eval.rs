//! `bor eval DIR`: measures retrieval on a test collection in the BEIR layout
//! (`beir.rs`). The corpus is imported through the import path (`Ingestor`: once, as
//! every import is idempotent by content), each document as Markdown with its title as
//! its heading; then every judged query is embedded and ranked by the retrieval a turn
//! does (`KnowledgeService::search`), and the measures (`metrics.rs`) of each ranking —
//! full text alone, vectors alone, fused, and fused then re-ranked when a re-ranking
//! server is set — are printed with the latencies.
//!
//! Rankings are of chunks; a document counts at the rank of its best chunk.

mod beir;
pub mod feedback;
pub mod metrics;

use std::collections::{HashMap, HashSet};
use std::path::Path;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Instant;

use bor_actors::llm::LlmClient;
use futures_util::StreamExt;

use crate::auth::AccessMap;
use crate::config::Config;
use crate::db::{self, DbPool};
use crate::import::DocumentSink;
use crate::knowledge::index::CollectionFilter;
use crate::knowledge::ingest::{
    IngestError, IngestOutcome, Ingestor, ModelDimension, SourceDocument, Unobserved, in_order,
};
use crate::knowledge::search::{RerankOutcome, SearchQuery};
use crate::knowledge::{KnowledgeService, RankedChunk};
use crate::state::{chunking_settings, llm_settings, rerank_settings};
use metrics::{Measures, percentile};

/// The depth the measures look at: nDCG@10, Recall@10, MRR@10.
const MEASURED_DEPTH: usize = 10;
/// A progress line every this many documents.
const PROGRESS_EVERY: usize = 500;

/// What the import of the corpus did.
#[derive(Debug, Default, serde::Serialize)]
struct CorpusImport {
    documents: usize,
    imported: usize,
    unchanged: usize,
    skipped: usize,
    chunks: usize,
    seconds: f64,
}

/// Milliseconds at the 50th and 99th percentile.
#[derive(Debug, serde::Serialize)]
struct Latency {
    p50: f64,
    p99: f64,
}

impl Latency {
    fn of(mut milliseconds: Vec<f64>) -> Latency {
        Latency {
            p50: percentile(&mut milliseconds, 50.0),
            p99: percentile(&mut milliseconds, 99.0),
        }
    }
}

#[derive(Debug, serde::Serialize)]
struct Report {
    qrels: String,
    corpus: CorpusImport,
    queries: usize,
    full_text: Measures,
    vectors: Measures,
    fused: Measures,
    /// The fused candidates in the re-ranking server's order; `None` when re-ranking is
    /// off. A query whose re-rank failed counts in its fused order.
    reranked: Option<Measures>,
    /// Queries whose re-rank failed or was too slow.
    rerank_failures: usize,
    /// Ranking in memory (both signals and their fusion), per query.
    retrieval_ms: Latency,
    /// Re-ranking the candidates, per query; `None` when re-ranking is off.
    rerank_ms: Option<Latency>,
    /// Embedding the query, per query.
    embedding_ms: Latency,
}

/// Runs the command: exit 2 for a collection that cannot be read, 1 when the import or
/// a query's embedding fails.
pub async fn run(
    config: &Config,
    dir: &Path,
    qrels: Option<&Path>,
    into: Option<&str>,
    json: bool,
) -> ExitCode {
    if let Some(name) = into.filter(|name| !db::collections::is_valid_name(name)) {
        eprintln!(
            "bor eval: --collection {name:?}: {}",
            db::collections::NAME_RULE
        );
        return ExitCode::from(2);
    }
    let collection = match tokio::task::spawn_blocking({
        let (dir, qrels) = (dir.to_owned(), qrels.map(Path::to_owned));
        move || beir::read(&dir, qrels.as_deref())
    })
    .await
    {
        Ok(Ok(collection)) => collection,
        Ok(Err(error)) => {
            eprintln!("bor eval: {error}");
            return ExitCode::from(2);
        }
        Err(error) => {
            eprintln!("bor eval: reading the collection failed: {error}");
            return ExitCode::FAILURE;
        }
    };
    if collection.unknown_queries > 0 {
        eprintln!(
            "bor eval: note: {} judged queries are not in queries.jsonl and are left out",
            collection.unknown_queries
        );
    }
    match evaluate(config, dir, &collection, into).await {
        Ok(report) => {
            if json {
                println!("{}", serde_json::json!(report));
            } else {
                print!("{}", table(&report));
            }
            ExitCode::SUCCESS
        }
        Err(problem) => {
            eprintln!("bor eval: {problem}");
            ExitCode::FAILURE
        }
    }
}

/// `bor eval --feedback`: runs the instance's evaluation set (or, with `export`, writes
/// it in the BEIR layout); exit 1 when the database or a query's search fails.
pub async fn run_feedback(config: &Config, export: Option<&Path>, json: bool) -> ExitCode {
    match evaluate_feedback_set(config, export, json).await {
        Ok(report) => {
            print!("{report}");
            ExitCode::SUCCESS
        }
        Err(problem) => {
            eprintln!("bor eval: {problem}");
            ExitCode::FAILURE
        }
    }
}

async fn evaluate_feedback_set(
    config: &Config,
    export: Option<&Path>,
    json: bool,
) -> Result<String, String> {
    let described = |error: &dyn std::error::Error| bor_actors::error_chain(error);
    db::run_migrations(&config.database_url)
        .await
        .map_err(|error| format!("the database is not usable: {}", described(&error)))?;
    let pool = DbPool::new(&config.database_url, 2).map_err(|error| error.to_string())?;
    let access = AccessMap::load(pool.clone())
        .await
        .map_err(|error| format!("reading the collections' grants: {}", described(&error)))?;
    if let Some(dir) = export {
        let (queries, documents) = feedback::export(&pool, &access, dir).await?;
        return Ok(format!(
            "wrote {queries} queries and {documents} documents to {} (bor eval {} measures them)\n",
            dir.display(),
            dir.display()
        ));
    }
    let llm = Arc::new(llm_settings(config));
    let knowledge = KnowledgeService::load(
        pool.clone(),
        LlmClient::new(llm.clone()),
        chunking_settings(config),
    )
    .await
    .map_err(|error| format!("loading the knowledge base: {}", described(&error)))?;
    let evaluation = feedback::evaluate_feedback(
        &pool,
        &knowledge,
        &access,
        &llm,
        rerank_settings(config),
        config,
    )
    .await
    .map_err(|error| described(&error))?;
    if json {
        return Ok(format!("{}\n", serde_json::json!(evaluation)));
    }
    let mut conn = pool.get().await.map_err(|error| described(&error))?;
    let runs = db::feedback::runs(&mut conn, RUNS_SHOWN)
        .await
        .map_err(|error| described(&error))?;
    Ok(feedback_table(&evaluation, &runs))
}

/// Runs shown by `bor eval --feedback`, the newest last.
const RUNS_SHOWN: i64 = 5;

/// The runs as a before/after table (oldest first, the one just made last), the one just
/// made by collection, then the queries a turn would not answer from a named passage.
fn feedback_table(
    evaluation: &feedback::FeedbackEvaluation,
    runs: &[db::feedback::EvalRun],
) -> String {
    let mut out = format!(
        "evaluation set  {} queries (rated turns given the passages that should have been found)\n\n\
         {:>4}  {:<16}  {:<22} {:>6} {:<10}  {:>10} {:>10} {:>10} {:>10} {:>9}\n",
        evaluation.run.queries,
        "run",
        "when (UTC)",
        "embedding model",
        "chunk",
        "re-rank",
        "doc nDCG",
        "doc R@10",
        "pass. R@10",
        "pass. MRR",
        "answered",
    );
    for run in runs.iter().rev() {
        let setting = |name: &str| match &run.settings[name] {
            serde_json::Value::String(text) => text.clone(),
            serde_json::Value::Null => "-".to_owned(),
            other => other.to_string(),
        };
        out.push_str(&format!(
            "{:>4}  {:<16}  {:<22} {:>6} {:<10}  {}\n",
            run.id,
            run.created_at.format("%Y-%m-%d %H:%M"),
            setting("embedding_model"),
            setting("chunk_chars"),
            match (&run.settings["rerank"], setting("rerank_model")) {
                (serde_json::Value::Bool(true), model) if model == "-" => "on".to_owned(),
                (serde_json::Value::Bool(true), model) => model,
                _ => "-".to_owned(),
            },
            measure_columns(&run.measures),
        ));
    }
    out.push_str(&by_collection_table(&evaluation.run));
    let missed: Vec<&feedback::QueryOutcome> = evaluation
        .queries
        .iter()
        .filter(|query| !query.answered)
        .collect();
    if !missed.is_empty() {
        out.push_str(&format!(
            "\nnot answered from a named passage ({}: deflected, or none among the passages a turn gives the model):\n",
            missed.len()
        ));
        for query in missed {
            out.push_str(&format!("  {}  {}\n", query.turn_id, query.query));
        }
    }
    out
}

/// The run's measures by collection, in the columns of the runs' table; empty when its
/// named passages are in one collection only, which the run's own row already shows.
fn by_collection_table(run: &db::feedback::EvalRun) -> String {
    let Some(collections) = run.measures["by_collection"].as_array() else {
        return String::new();
    };
    if collections.len() < 2 {
        return String::new();
    }
    let mut out = format!(
        "\nrun {} by the collection of the named passages:\n{:<28} {:>7}  {:>10} {:>10} {:>10} {:>10} {:>9}\n",
        run.id,
        "collection",
        "queries",
        "doc nDCG",
        "doc R@10",
        "pass. R@10",
        "pass. MRR",
        "answered",
    );
    for measures in collections {
        out.push_str(&format!(
            "{:<28} {:>7}  {}\n",
            measures["collection"].as_str().unwrap_or("-"),
            measures["queries"].as_u64().unwrap_or(0),
            measure_columns(measures),
        ));
    }
    out
}

/// The measures' columns of a table row: the re-ranked ranking's when there is one, else
/// the fused one's.
fn measure_columns(measures: &serde_json::Value) -> String {
    let ranking = if measures["reranked"].is_object() {
        "reranked"
    } else {
        "fused"
    };
    let measure = |level: &str, name: &str| measures[ranking][level][name].as_f64().unwrap_or(0.0);
    format!(
        "{:>10.4} {:>10.4} {:>10.4} {:>10.4} {:>8.0}%",
        measure("documents", "ndcg_at_10"),
        measure("documents", "recall_at_10"),
        measure("passages", "recall_at_10"),
        measure("passages", "mrr_at_10"),
        100.0 * measures["answered"].as_f64().unwrap_or(0.0),
    )
}

/// Imports the corpus (into the collection `into`, else `default`) and ranks every query
/// (among `into`'s documents only, else among all).
async fn evaluate(
    config: &Config,
    dir: &Path,
    collection: &beir::Collection,
    into: Option<&str>,
) -> Result<Report, String> {
    let described = |error: &dyn std::error::Error| bor_actors::error_chain(error);
    db::run_migrations(&config.database_url)
        .await
        .map_err(|error| format!("the database is not usable: {}", described(&error)))?;
    let pool = DbPool::new(&config.database_url, 2).map_err(|error| error.to_string())?;
    let llm = LlmClient::new(Arc::new(llm_settings(config)));
    let ingestor = Ingestor::new(
        pool.clone(),
        llm.clone(),
        chunking_settings(config),
        Arc::new(ModelDimension::default()),
    );
    let into = match into {
        Some(name) => {
            let mut conn = pool.get().await.map_err(|error| error.to_string())?;
            let made = db::collections::get_or_create(&mut conn, name)
                .await
                .map_err(|error| format!("the collection {name}: {}", described(&error)))?;
            Some(made.id)
        }
        None => None,
    };
    let scope = into.map(|id| CollectionFilter::new([id]));
    let (corpus, corpus_of_document) = import_corpus(&ingestor, dir, collection, into)
        .await
        .map_err(|error| format!("the import stopped: {}", described(&error)))?;
    let knowledge = KnowledgeService::load(pool, llm.clone(), chunking_settings(config))
        .await
        .map_err(|error| format!("loading the knowledge base: {}", described(&error)))?;
    let others = knowledge
        .index()
        .stats()
        .documents
        .saturating_sub(corpus_of_document.len());
    if others > 0 && into.is_none() {
        eprintln!(
            "bor eval: note: the knowledge base holds {others} documents besides the corpus; they are ranked too and skipped when measuring, which moves the corpus documents below them up (a database of its own keeps the figures comparable)"
        );
    }

    let rerank = rerank_settings(config);
    let (mut full_text, mut vectors, mut fused) = (Vec::new(), Vec::new(), Vec::new());
    let (mut reranked, mut rerank_ms, mut rerank_failures) = (Vec::new(), Vec::new(), 0);
    let (mut retrieval_ms, mut embedding_ms) = (Vec::new(), Vec::new());
    let as_corpus_ids = |ranking: &[RankedChunk]| corpus_ranking(ranking, &corpus_of_document);
    for query in &collection.queries {
        let searched = SearchQuery {
            text: query.text.clone(),
            keep: MEASURED_DEPTH,
            scope: scope.clone(),
        };
        let outcome = knowledge
            .measured_search(&llm, rerank, searched)
            .await
            .map_err(|error| format!("searching query {}: {}", query.id, described(&error)))?;
        embedding_ms.push(outcome.embedding_ms);
        retrieval_ms.push(outcome.retrieval_ms);
        let rankings = &outcome.rankings;
        let judged = collection.qrels.get(&query.id).cloned().unwrap_or_default();
        full_text.push(Measures::of(&as_corpus_ids(&rankings.by_text), &judged));
        vectors.push(Measures::of(&as_corpus_ids(&rankings.by_cosine), &judged));
        fused.push(Measures::of(&as_corpus_ids(&rankings.fused), &judged));
        if rerank.is_none() {
            continue;
        }
        if let Some(ms) = outcome.rerank.ms() {
            rerank_ms.push(ms);
        }
        if let RerankOutcome::Failed { failure, .. } = &outcome.rerank {
            rerank_failures += 1;
            eprintln!(
                "bor eval: query {}: {failure}; its fused order counts",
                query.id
            );
        }
        let ranking: Vec<RankedChunk> = outcome
            .retrieval
            .hits
            .iter()
            .map(|hit| RankedChunk {
                chunk_id: hit.chunk_id,
                document_id: hit.document_id,
                score: f64::from(hit.score),
            })
            .collect();
        reranked.push(Measures::of(&as_corpus_ids(&ranking), &judged));
    }
    Ok(Report {
        qrels: collection.qrels_path.display().to_string(),
        corpus,
        queries: collection.queries.len(),
        full_text: Measures::mean(&full_text),
        vectors: Measures::mean(&vectors),
        fused: Measures::mean(&fused),
        reranked: rerank.map(|_| Measures::mean(&reranked)),
        rerank_failures,
        retrieval_ms: Latency::of(retrieval_ms),
        rerank_ms: rerank.map(|_| Latency::of(rerank_ms)),
        embedding_ms: Latency::of(embedding_ms),
    })
}

/// Imports every corpus document (several prepared at a time by [`in_order`], stored in
/// the corpus's order); returns the counts and, per stored document, the corpus ids it holds
/// (two corpus documents of the same text are one document).
async fn import_corpus(
    ingestor: &Ingestor,
    dir: &Path,
    collection: &beir::Collection,
    into: Option<i64>,
) -> Result<(CorpusImport, HashMap<i64, Vec<String>>), IngestError> {
    let started = Instant::now();
    let corpus_path = std::fs::canonicalize(dir)
        .unwrap_or_else(|_| dir.to_owned())
        .join("corpus.jsonl");
    let mut counts = CorpusImport {
        documents: collection.corpus.len(),
        ..CorpusImport::default()
    };
    let mut corpus_of_document: HashMap<i64, Vec<String>> = HashMap::new();
    let mut outcomes = in_order(&collection.corpus, |document, turn| {
        let source = corpus_source(document, &corpus_path, into);
        async move {
            let outcome = ingestor.store_in_turn(&source, &Unobserved, turn).await;
            (document, outcome)
        }
    })
    .enumerate();
    while let Some((done, (document, outcome))) = outcomes.next().await {
        if done > 0 && done % PROGRESS_EVERY == 0 {
            eprintln!(
                "bor eval: {done} of {} documents imported",
                counts.documents
            );
        }
        match outcome {
            Ok(outcome) => {
                match outcome {
                    IngestOutcome::Unchanged { .. } => counts.unchanged += 1,
                    _ => {
                        counts.imported += 1;
                        counts.chunks += outcome.chunks();
                    }
                }
                corpus_of_document
                    .entry(outcome.id())
                    .or_default()
                    .push(document.id.clone());
            }
            Err(error @ (IngestError::Embedding(_) | IngestError::Database(_))) => {
                return Err(error);
            }
            Err(error) => {
                counts.skipped += 1;
                eprintln!("bor eval: skipped corpus document {}: {error}", document.id);
            }
        }
    }
    counts.seconds = started.elapsed().as_secs_f64();
    Ok((counts, corpus_of_document))
}

/// A corpus document as it is imported: Markdown with its title (else its id) as its
/// heading, its source the corpus file and its id.
fn corpus_source(
    document: &beir::CorpusDocument,
    corpus_path: &Path,
    into: Option<i64>,
) -> SourceDocument {
    let title = if document.title.trim().is_empty() {
        document.id.clone()
    } else {
        document.title.clone()
    };
    SourceDocument::markdown(
        title.clone(),
        Some(format!("{}#{}", corpus_path.display(), document.id)),
        format!("# {title}\n\n{}", document.text),
    )
    .in_collection(into)
}

/// The corpus ids of a chunk ranking, each once at the rank of its best chunk; chunks
/// of documents that are not the corpus's are left out.
fn corpus_ranking(
    ranking: &[RankedChunk],
    corpus_of_document: &HashMap<i64, Vec<String>>,
) -> Vec<String> {
    let mut seen = HashSet::new();
    ranking
        .iter()
        .filter(|chunk| seen.insert(chunk.document_id))
        .filter_map(|chunk| corpus_of_document.get(&chunk.document_id))
        .flatten()
        .cloned()
        .collect()
}

fn table(report: &Report) -> String {
    let corpus = &report.corpus;
    let mut out = format!(
        "corpus     {} documents: {} imported ({} chunks), {} unchanged, {} skipped, in {:.1} s\n\
         queries    {} judged ({})\n\n\
         {:<10} {:>8} {:>10} {:>9} {:>8}\n",
        corpus.documents,
        corpus.imported,
        corpus.chunks,
        corpus.unchanged,
        corpus.skipped,
        corpus.seconds,
        report.queries,
        report.qrels,
        "ranking",
        "nDCG@10",
        "Recall@10",
        "Recall@5",
        "MRR@10",
    );
    let rows = [
        ("full text", Some(&report.full_text)),
        ("vectors", Some(&report.vectors)),
        ("fused", Some(&report.fused)),
        ("re-ranked", report.reranked.as_ref()),
    ];
    for (name, measures) in rows
        .into_iter()
        .filter_map(|(name, measures)| Some((name, measures?)))
    {
        out.push_str(&format!(
            "{name:<10} {:>8.4} {:>10.4} {:>9.4} {:>8.4}\n",
            measures.ndcg_at_10, measures.recall_at_10, measures.recall_at_5, measures.mrr_at_10
        ));
    }
    out.push_str(&format!(
        "\nlatency    retrieval p50 {:.2} ms, p99 {:.2} ms; embedding a query p50 {:.2} ms, p99 {:.2} ms\n",
        report.retrieval_ms.p50,
        report.retrieval_ms.p99,
        report.embedding_ms.p50,
        report.embedding_ms.p99
    ));
    if let Some(rerank) = &report.rerank_ms {
        out.push_str(&format!(
            "re-ranking p50 {:.2} ms, p99 {:.2} ms; {} queries kept their fused order (the re-rank failed)\n",
            rerank.p50, rerank.p99, report.rerank_failures
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(by_collection: serde_json::Value) -> db::feedback::EvalRun {
        let ranking = |ndcg: f64, mrr: f64| {
            serde_json::json!({
                "documents": {"ndcg_at_10": ndcg, "recall_at_10": 1.0},
                "passages": {"recall_at_10": 1.0, "mrr_at_10": mrr},
            })
        };
        let mut measures = serde_json::json!({"answered": 0.5, "fused": ranking(0.8, 0.75)});
        if let serde_json::Value::Array(collections) = by_collection {
            measures["by_collection"] = collections
                .into_iter()
                .map(|collection| {
                    let mut entry = collection;
                    entry["fused"] = ranking(0.9, 0.5);
                    entry
                })
                .collect();
        }
        db::feedback::EvalRun {
            id: 4,
            created_at: chrono::Utc::now(),
            settings: serde_json::json!({}),
            queries: 2,
            measures,
        }
    }

    #[test]
    fn a_run_reads_by_collection_only_when_its_passages_are_in_several() {
        let two = by_collection_table(&run(serde_json::json!([
            {"collection": "default", "queries": 1, "answered": 1.0},
            {"collection": "hr", "queries": 1, "answered": 0.0},
        ])));
        let lines: Vec<&str> = two.lines().collect();
        assert_eq!(lines[1], "run 4 by the collection of the named passages:");
        assert!(lines[3].starts_with("default                            1      0.9000     1.0000     1.0000     0.5000      100%"), "{two}");
        assert!(lines[4].starts_with("hr "), "{two}");
        assert!(lines[4].ends_with(" 0%"), "{two}");
        let one =
            run(serde_json::json!([{"collection": "default", "queries": 2, "answered": 0.5}]));
        assert_eq!(by_collection_table(&one), "");
        assert_eq!(by_collection_table(&run(serde_json::Value::Null)), "");
    }
}
