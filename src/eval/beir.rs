//! A test collection in the BEIR layout (docs/RETRIEVAL.md, "Measuring it"):
//! `corpus.jsonl` (`{"_id", "title", "text"}` a line), `queries.jsonl` (`{"_id",
//! "text"}`) and the judgements `qrels/test.tsv` (a header line, then `query-id
//! corpus-id score`, tab-separated),
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

#[cfg(test)]
mod tests {
    use super::*;

    /// A scratch collection of these files, removed when dropped.
    struct Scratch(PathBuf);

    impl Scratch {
        fn with(name: &str, files: &[(&str, &str)]) -> Scratch {
            let dir = std::env::temp_dir().join(format!("bor-beir-{name}-{}", std::process::id()));
            std::fs::create_dir_all(dir.join("qrels")).unwrap();
            for (path, text) in files {
                std::fs::write(dir.join(path), text).unwrap();
            }
            Scratch(dir)
        }
    }

    impl Drop for Scratch {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }

    const CORPUS: &str = "{\"_id\": \"d1\", \"title\": \"T\", \"text\": \"x\"}\n\n{\"_id\": \"d2\", \"text\": \"y\"}\n";
    const QUERIES: &str = "{\"_id\": \"q1\", \"text\": \"a\", \"metadata\": {}}\n{\"_id\": \"q2\", \"text\": \"b\"}\n";

    #[test]
    fn the_judged_queries_are_read_with_the_train_split_when_there_is_no_test_split() {
        let scratch = Scratch::with(
            "train",
            &[
                ("corpus.jsonl", CORPUS),
                ("queries.jsonl", QUERIES),
                (
                    "qrels/train.tsv",
                    "query-id\tcorpus-id\tscore\nq1\td1\t1\nq1 d2 2\nq9\td1\t1\n",
                ),
            ],
        );
        let collection = read(&scratch.0, None).unwrap();
        assert!(collection.qrels_path.ends_with("qrels/train.tsv"));
        assert_eq!(collection.corpus.len(), 2);
        assert_eq!(collection.corpus[1].title, "", "a title is optional");
        let ids: Vec<&str> = collection.queries.iter().map(|q| q.id.as_str()).collect();
        assert_eq!(ids, vec!["q1"], "q2 has no judgements");
        assert_eq!(collection.unknown_queries, 1, "q9 is not in queries.jsonl");
        assert_eq!(
            collection.qrels["q1"]["d2"], 2,
            "spaces separate fields too"
        );

        std::fs::write(
            scratch.0.join("qrels/test.tsv"),
            "query-id\tcorpus-id\tscore\nq2\td2\t1\n",
        )
        .unwrap();
        let collection = read(&scratch.0, None).unwrap();
        assert!(
            collection.qrels_path.ends_with("qrels/test.tsv"),
            "the test split first"
        );
        let named = scratch.0.join("qrels/train.tsv");
        assert_eq!(read(&scratch.0, Some(&named)).unwrap().qrels_path, named);
    }

    #[test]
    fn a_broken_line_is_named_with_its_file_and_number() {
        let scratch = Scratch::with(
            "broken",
            &[
                (
                    "corpus.jsonl",
                    "{\"_id\": \"d1\", \"text\": \"x\"}\n{\"_id\": 7}\n",
                ),
                ("queries.jsonl", QUERIES),
                (
                    "qrels/test.tsv",
                    "query-id\tcorpus-id\tscore\nq1\td1\tmany\n",
                ),
            ],
        );
        let error = read(&scratch.0, None).unwrap_err().to_string();
        assert!(
            error.contains("test.tsv, line 2: expected `query-id corpus-id score`"),
            "{error}"
        );
        std::fs::write(
            scratch.0.join("qrels/test.tsv"),
            "query-id\tcorpus-id\tscore\nq1\td1\t1\n",
        )
        .unwrap();
        let error = read(&scratch.0, None).unwrap_err().to_string();
        assert!(error.contains("corpus.jsonl, line 2: "), "{error}");
        std::fs::remove_file(scratch.0.join("qrels/test.tsv")).unwrap();
        let error = read(&scratch.0, None).unwrap_err().to_string();
        assert!(error.contains("--qrels"), "{error}");
    }
}
