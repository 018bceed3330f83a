//! Relevance of the two full-text rankers on the sample knowledge base (`docs/sample-kb`,
//! cut as `bor import` cuts it): PostgreSQL's `ts_rank_cd` over
//! `websearch_to_tsquery('english', …)` (every word must match, as retrieval did before
//! the full-text index moved into memory) against BM25 of the in-memory index (any word
//! ranks, every word makes a match). Each question names a phrase of the passage that
//! answers it; a chunk holding that phrase is a right answer.

use bor::db::chunks::{NewChunk, insert_chunks};
use bor::db::documents::{NewDocument, insert_document};
use bor::knowledge::chunking::{ChunkingSettings, TextFormat, chunk_text};
use bor::knowledge::full_text::FullTextIndex;
use bor::testing::TestDatabase;
use diesel::sql_types::{BigInt, Text};
use diesel_async::RunQueryDsl;

/// Questions a reader of the sample knowledge base could ask, each with a phrase of the
/// passage that answers it.
const QUESTIONS: [(&str, &str); 16] = [
    (
        "How does bor retry a failing model?",
        "retried up to `BOR_LLM_RETRIES`",
    ),
    (
        "Which variables configure bor?",
        "The variables you will change first",
    ),
    ("Where is the listen address set?", "`BOR_BIND`"),
    (
        "What happens when every attempt fails?",
        "is not responding",
    ),
    (
        "Why is raw tool call markup removed from answers?",
        "scaffolding filter removes",
    ),
    ("What is a deflected turn?", "the turn is *deflected*"),
    (
        "How many chunks go to the model as context?",
        "`BOR_RETRIEVAL_TOP_K`",
    ),
    ("How do I import my notes?", "`bor import PATH…` imports"),
    (
        "Which actor writes the query log?",
        "one **LogActor** per process",
    ),
    (
        "What frames does the page receive?",
        "`delta` frames with the text",
    ),
    (
        "How long may running turns finish after SIGTERM?",
        "`BOR_SHUTDOWN_GRACE`",
    ),
    ("Is the API key logged?", "never logged or shown"),
    (
        "What does the corrective retry instruction say?",
        "asks\nthe model once more",
    ),
    (
        "Where does bor keep its state?",
        "keeps its state in PostgreSQL",
    ),
    (
        "How big are the chunks documents are cut into?",
        "`BOR_CHUNK_CHARS`",
    ),
    (
        "What is shown while bor waits to retry?",
        "Communication interrupted",
    ),
];

/// Hits at 1, at 5, mean reciprocal rank (to 10), questions with no ranking at all.
pub struct Relevance {
    pub ranker: &'static str,
    pub at_1: usize,
    pub at_5: usize,
    pub mrr: f64,
    pub empty: usize,
}

impl Relevance {
    pub fn row(&self) -> String {
        format!(
            "| {} | {}/{n} | {}/{n} | {:.2} | {} |",
            self.ranker,
            self.at_1,
            self.at_5,
            self.mrr,
            self.empty,
            n = QUESTIONS.len()
        )
    }
}

#[derive(diesel::QueryableByName)]
struct Ranked {
    #[diesel(sql_type = BigInt)]
    id: i64,
}

fn score(ranker: &'static str, rankings: &[(Vec<i64>, Vec<i64>)]) -> Relevance {
    let mut result = Relevance {
        ranker,
        at_1: 0,
        at_5: 0,
        mrr: 0.0,
        empty: 0,
    };
    for (ranked, right) in rankings {
        let first = ranked.iter().take(10).position(|id| right.contains(id));
        result.at_1 += usize::from(first == Some(0));
        result.at_5 += usize::from(first.is_some_and(|rank| rank < 5));
        result.mrr += first.map_or(0.0, |rank| 1.0 / (rank as f64 + 1.0));
        result.empty += usize::from(ranked.is_empty());
    }
    result.mrr /= rankings.len() as f64;
    result
}

pub async fn run() -> Vec<Relevance> {
    let db = TestDatabase::migrated().await;
    let pool = db.pool();
    let mut conn = pool.get().await.expect("a connection");
    let text_index = FullTextIndex::new().expect("a full-text index");
    let folder = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/sample-kb");
    let mut chunks: Vec<(i64, String)> = Vec::new();
    let mut files: Vec<_> = std::fs::read_dir(&folder)
        .expect("the sample knowledge base")
        .filter_map(Result::ok)
        .map(|entry| entry.path())
        .collect();
    files.sort();
    for path in files {
        let content = std::fs::read_to_string(&path).expect("a sample document");
        let name = path.display().to_string();
        let document = insert_document(&mut conn, &NewDocument::new(&name, None, &content))
            .await
            .expect("stored");
        let settings = ChunkingSettings {
            max_chars: 1200,
            overlap: 150,
        };
        let pieces = chunk_text(&content, TextFormat::Markdown, settings);
        let rows: Vec<NewChunk> = pieces
            .iter()
            .zip(0..)
            .map(|(piece, ord)| NewChunk {
                document_id: document,
                ord,
                text: piece.text,
                heading: "",
                page: None,
                embedder: None,
                embedding: &[1.0],
            })
            .collect();
        insert_chunks(&mut conn, &rows).await.expect("stored");
    }
    let stored: Vec<(i64, i64, i64, String)> = {
        use bor::db::schema::{chunks::dsl, documents};
        use diesel::QueryDsl;
        dsl::chunks
            .inner_join(documents::table)
            .select((
                dsl::id,
                dsl::document_id,
                documents::collection_id,
                dsl::text,
            ))
            .order(dsl::id)
            .load(&mut conn)
            .await
            .expect("the chunks")
    };
    for (id, document_id, collection_id, text) in &stored {
        text_index
            .add(*id, *document_id, *collection_id, text)
            .expect("indexed");
        chunks.push((*id, text.clone()));
    }
    text_index.commit().expect("committed");

    let mut postgres = Vec::new();
    let mut bm25 = Vec::new();
    for (question, phrase) in QUESTIONS {
        let right: Vec<i64> = chunks
            .iter()
            .filter(|(_, text)| text.contains(phrase))
            .map(|(id, _)| *id)
            .collect();
        assert!(!right.is_empty(), "no chunk holds {phrase:?}");
        let ranked: Vec<Ranked> = diesel::sql_query(
            "SELECT c.id FROM chunks c, websearch_to_tsquery('english', $1) AS q \
             WHERE c.tsv @@ q ORDER BY ts_rank_cd(c.tsv, q) DESC, c.id LIMIT 50",
        )
        .bind::<Text, _>(question)
        .load(&mut conn)
        .await
        .expect("ranked");
        postgres.push((ranked.into_iter().map(|r| r.id).collect(), right.clone()));
        let found = text_index.search(question, 50, None).expect("searched");
        bm25.push((found.ranked.iter().map(|(id, _)| *id).collect(), right));
    }
    vec![
        score("PostgreSQL ts_rank_cd, every word", &postgres),
        score("BM25 (tantivy), any word", &bm25),
    ]
}

/// Memory of the full-text index over real paragraphs (`PREFIX.txt`, one per line):
/// (chunks, mean text bytes, index bytes per chunk).
pub fn full_text_memory(prefix: &str) -> Option<(usize, f64, f64)> {
    let texts = std::fs::read_to_string(format!("{prefix}.txt")).ok()?;
    let index = FullTextIndex::new().ok()?;
    let mut chunks = 0usize;
    let mut text_bytes = 0usize;
    for (id, line) in texts.lines().enumerate() {
        index.add(id as i64, id as i64 / 8, 0, line).ok()?;
        chunks += 1;
        text_bytes += line.len();
    }
    index.commit().ok()?;
    let per_chunk = |bytes: usize| bytes as f64 / chunks.max(1) as f64;
    Some((
        chunks,
        per_chunk(text_bytes),
        per_chunk(index.memory_bytes()),
    ))
}
