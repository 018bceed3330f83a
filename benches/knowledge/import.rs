//! Import throughput: Markdown files through `bor import`'s code path (chunking,
//! embeddings from the mock LLM server over HTTP, PostgreSQL writes).

use std::sync::Arc;
use std::time::{Duration, Instant};

use bor::config::Config;
use bor::import::import_paths;
use bor::knowledge::ingest::{Ingestor, ModelDimension};
use bor::state::{chunking_settings, llm_settings};
use bor::testing::TestDatabase;
use bor_actors::llm::LlmClient;
use bor_mock_llm::MockLlm;

use super::search::DIMENSION;

const DOCUMENTS: usize = 200;
const PARAGRAPHS: usize = 12;

pub struct ImportResult {
    pub documents: usize,
    pub chunks: usize,
    pub elapsed: Duration,
}

impl ImportResult {
    pub fn chunks_per_second(&self) -> f64 {
        self.chunks as f64 / self.elapsed.as_secs_f64()
    }

    pub fn row(&self) -> String {
        format!(
            "| {} | {} | {:.2} s | {:.0} |",
            self.documents,
            self.chunks,
            self.elapsed.as_secs_f64(),
            self.chunks_per_second()
        )
    }
}

const WORDS: [&str; 16] = [
    "index",
    "vector",
    "chunk",
    "retrieval",
    "model",
    "answer",
    "question",
    "document",
    "server",
    "stream",
    "token",
    "policy",
    "retry",
    "context",
    "search",
    "embedding",
];

fn document(n: usize) -> String {
    let mut text = format!("# Document {n}\n\n");
    for p in 0..PARAGRAPHS {
        if p % 4 == 0 {
            text.push_str(&format!("## Part {p}\n\n"));
        }
        let sentence: Vec<&str> = (0..24)
            .map(|w| WORDS[(n * 7 + p * 3 + w * 5) % WORDS.len()])
            .collect();
        for _ in 0..4 {
            text.push_str(&sentence.join(" "));
            text.push_str(". ");
        }
        text.push_str("\n\n");
    }
    text
}

pub fn run() -> ImportResult {
    let folder = std::env::temp_dir().join(format!("bor-bench-{}", std::process::id()));
    std::fs::create_dir_all(&folder).expect("a temporary folder");
    for n in 0..DOCUMENTS {
        std::fs::write(folder.join(format!("doc-{n:04}.md")), document(n)).expect("a file");
    }
    let result = actix_web::rt::System::new().block_on(async {
        let db = TestDatabase::migrated().await;
        let mock = MockLlm::builder()
            .embedding_dim(DIMENSION)
            .start()
            .expect("the mock LLM starts");
        let config = Config::from_vars([
            ("BOR_DATABASE_URL".to_owned(), db.url().to_owned()),
            ("BOR_LLM_BASE_URL".to_owned(), mock.base_url()),
        ])
        .expect("a valid configuration");
        let ingestor = Ingestor::new(
            db.pool(),
            LlmClient::new(Arc::new(llm_settings(&config))),
            chunking_settings(&config),
            Arc::new(ModelDimension::default()),
        );
        let started = Instant::now();
        let summary = import_paths(&ingestor, std::slice::from_ref(&folder))
            .await
            .unwrap_or_else(|(_, error)| panic!("the import failed: {error}"));
        ImportResult {
            documents: summary.imported,
            chunks: summary.chunks,
            elapsed: started.elapsed(),
        }
    });
    let _ = std::fs::remove_dir_all(&folder);
    result
}
