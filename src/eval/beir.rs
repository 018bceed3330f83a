//! A test collection in the BEIR layout (SPEC §16): `corpus.jsonl` (`{"_id", "title",
//! "text"}` a line), `queries.jsonl` (`{"_id", "text"}`) and the judgements
//! `qrels/test.tsv` (a header line, then `query-id corpus-id score`, tab-separated),
//! `qrels/train.tsv` when there is no test split, or a file named by `--qrels`. Other
//! fields (`metadata`) are ignored.

use std::collections::HashMap;
use std::io::BufRead;
use std::path::{Path, PathBuf};

use super::metrics::Judgements;

#[derive(Debug, serde::Deserialize)]
pub struct CorpusDocument {
    #[serde(rename = "_id")]
    pub id: String,
    #[serde(default)]
    pub title: String,
    pub text: String,
}

#[derive(Debug, serde::Deserialize)]
pub struct Query {
    #[serde(rename = "_id")]
    pub id: String,
    pub text: String,
}

#[derive(Debug)]
pub struct Collection {
    pub corpus: Vec<CorpusDocument>,
    /// The judged queries, in the order of `queries.jsonl`.
    pub queries: Vec<Query>,
    /// Query id → its judgements.
    pub qrels: HashMap<String, Judgements>,
    pub qrels_path: PathBuf,
    /// Judged query ids that `queries.jsonl` does not hold.
    pub unknown_queries: usize,
}

#[derive(Debug, thiserror::Error)]
pub enum CollectionError {
    #[error("cannot read {}: {source}", path.display())]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{}, line {line}: {problem}", path.display())]
    Line {
        path: PathBuf,
        line: usize,
        problem: String,
    },
    #[error(
        "{} holds no qrels/test.tsv nor qrels/train.tsv: name the judgements with --qrels FILE",
        .0.display()
    )]
    NoQrels(PathBuf),
}

/// The judgements of `dir`: `qrels` when given, else `qrels/test.tsv`, else
/// `qrels/train.tsv`.
pub fn qrels_path(dir: &Path, qrels: Option<&Path>) -> Result<PathBuf, CollectionError> {
    if let Some(path) = qrels {
        return Ok(path.to_owned());
    }
    ["test.tsv", "train.tsv"]
        .into_iter()
        .map(|name| dir.join("qrels").join(name))
        .find(|path| path.is_file())
        .ok_or_else(|| CollectionError::NoQrels(dir.to_owned()))
}

pub fn read(dir: &Path, qrels: Option<&Path>) -> Result<Collection, CollectionError> {
    let qrels_path = qrels_path(dir, qrels)?;
    let judgements = read_qrels(&qrels_path)?;
    let corpus: Vec<CorpusDocument> = read_json_lines(&dir.join("corpus.jsonl"))?;
    let all_queries: Vec<Query> = read_json_lines(&dir.join("queries.jsonl"))?;
    let queries: Vec<Query> = all_queries
        .into_iter()
        .filter(|query| judgements.contains_key(&query.id))
        .collect();
    let unknown_queries = judgements.len() - queries.len();
    Ok(Collection {
        corpus,
        queries,
        qrels: judgements,
        qrels_path,
        unknown_queries,
    })
}

/// The lines of `path`, numbered from 1.
fn lines_of(
    path: &Path,
) -> Result<impl Iterator<Item = Result<(usize, String), CollectionError>>, CollectionError> {
    let io_error = |source| CollectionError::Io {
        path: path.to_owned(),
        source,
    };
    let file = std::fs::File::open(path).map_err(io_error)?;
    let path = path.to_owned();
    Ok(std::io::BufReader::new(file)
        .lines()
        .enumerate()
        .map(move |(index, line)| {
            line.map(|text| (index + 1, text))
                .map_err(|source| CollectionError::Io {
                    path: path.clone(),
                    source,
                })
        }))
}

fn read_json_lines<T: serde::de::DeserializeOwned>(path: &Path) -> Result<Vec<T>, CollectionError> {
    let mut items = Vec::new();
    for numbered in lines_of(path)? {
        let (line, text) = numbered?;
        if text.trim().is_empty() {
            continue;
        }
        let item = serde_json::from_str(&text).map_err(|error| CollectionError::Line {
            path: path.to_owned(),
            line,
            problem: error.to_string(),
        })?;
        items.push(item);
    }
    Ok(items)
}

/// `query-id corpus-id score` lines after a header, split on tabs or spaces.
fn read_qrels(path: &Path) -> Result<HashMap<String, Judgements>, CollectionError> {
    let mut qrels: HashMap<String, Judgements> = HashMap::new();
    for numbered in lines_of(path)?.skip(1) {
        let (line, text) = numbered?;
        let fields: Vec<&str> = text.split_whitespace().collect();
        let parsed = match fields.as_slice() {
            [] => continue,
            [query, document, score] => score
                .parse::<i32>()
                .ok()
                .map(|score| (query, document, score)),
            _ => None,
        };
        let Some((query, document, score)) = parsed else {
            return Err(CollectionError::Line {
                path: path.to_owned(),
                line,
                problem: "expected `query-id corpus-id score` with a whole-number score".to_owned(),
            });
        };
        qrels
            .entry((*query).to_owned())
            .or_default()
            .insert((*document).to_owned(), score);
    }
    Ok(qrels)
}
