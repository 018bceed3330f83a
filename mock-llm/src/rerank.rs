//! `POST /v1/rerank`: a deterministic cross-encoder in the shape llama.cpp, vLLM, Jina
//! and Cohere serve (`{"query", "documents"}` → `{"results": [{"index",
//! "relevance_score"}]}`, best first). TEI's request names the texts `texts`; a request
//! with `texts` gets TEI's answer, a bare array of `{"index", "score"}`.
//!
//! A document's score is the share of the query's distinct words (stop words left out)
//! that it holds, less a thousandth per word of the document: the document holding most
//! of the query, then the shorter, comes first. A directive line in the query applies
//! to this endpoint with `"on": "rerank"`.

use std::collections::HashSet;

use serde_json::{Value, json};

use crate::directive::{Directive, Endpoint};
use crate::embeddings::STOP_WORDS;
use crate::reply::{Reply, Response};
use crate::text::words;
use crate::wire;

/// The score the mock gives `document` for `query`.
pub(crate) fn score(query: &str, document: &str) -> f64 {
    let asked: HashSet<String> = words(query)
        .into_iter()
        .filter(|word| !STOP_WORDS.contains(&word.as_str()))
        .collect();
    let held = words(document);
    let present: HashSet<&String> = held.iter().filter(|word| asked.contains(*word)).collect();
    let share = if asked.is_empty() {
        0.0
    } else {
        present.len() as f64 / asked.len() as f64
    };
    share - held.len() as f64 / 1000.0
}

pub(crate) fn respond(body: &Value, attempt: u32) -> Response {
    let Some(query) = body.get("query").and_then(Value::as_str) else {
        return Reply::error(400, "`query` must be a string").into();
    };
    let tei = body.get("texts").is_some();
    let documents = body.get(if tei { "texts" } else { "documents" });
    let documents: Vec<&str> = match documents {
        Some(Value::Array(items)) if items.iter().all(Value::is_string) => {
            items.iter().filter_map(Value::as_str).collect()
        }
        _ => return Reply::error(400, "`documents` must be an array of strings").into(),
    };
    let directive = match Directive::find(query) {
        Ok(directive) => directive,
        Err(problem) => return Reply::error(400, problem).into(),
    };
    let query = crate::directive::strip(query);
    let mut scored: Vec<(usize, f64)> = documents
        .iter()
        .enumerate()
        .map(|(index, document)| (index, score(&query, document)))
        .collect();
    scored.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    let answer = if tei {
        let results: Vec<Value> = scored
            .iter()
            .map(|(index, score)| json!({"index": index, "score": score}))
            .collect();
        json!(results)
    } else {
        let results: Vec<Value> = scored
            .iter()
            .map(|(index, score)| json!({"index": index, "relevance_score": score}))
            .collect();
        json!({"model": body.get("model"), "results": results})
    };
    let answer = Reply::json(200, &answer);
    match directive {
        None => answer.into(),
        Some(directive) => wire::shape(&directive, Endpoint::Rerank, attempt, answer),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_document_holding_more_of_the_query_then_the_shorter_scores_higher() {
        let query = "What is oolong tea?";
        assert!(score(query, "Oolong tea is partly oxidised.") > score(query, "Green tea."));
        assert!(score(query, "Oolong tea.") > score(query, "Oolong tea, brewed hot."));
        assert!(score("the of", "anything") < 0.0);
    }
}
