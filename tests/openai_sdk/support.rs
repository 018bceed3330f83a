//! bor on port 0 with the mock LLM and a fresh database, and the official `openai`
//! Python SDK (`client.py`, run with the interpreter `BOR_TEST_OPENAI_PYTHON` names) as
//! its client.

use std::path::Path;
use std::time::Duration;

use actix_web::web;
use bor::db::DbPool;
use bor::db::query_log::QueryLogEntry;
use bor::state::AppState;
use bor::testing::{TestDatabase, build_application};
use bor_mock_llm::MockLlm;
use bor_test_support::{eventually, mock_embedding, wait_for_rows};
use serde_json::Value;

/// The longest one SDK scenario may take.
const SCENARIO_TIMEOUT: Duration = Duration::from_secs(60);

pub struct SdkApp {
    pub address: String,
    pub mock: MockLlm,
    state: web::Data<AppState>,
    pool: DbPool,
    _db: TestDatabase,
}

impl SdkApp {
    pub async fn spawn(vars: &[(&str, &str)]) -> SdkApp {
        let db = TestDatabase::migrated().await;
        let mock = MockLlm::start().expect("the mock LLM starts");
        let mock_url = mock.base_url();
        let defaults = [
            ("BOR_BIND", "127.0.0.1:0"),
            ("BOR_DATABASE_URL", db.url()),
            ("BOR_LLM_BASE_URL", mock_url.as_str()),
            ("BOR_LLM_RETRY_DELAY", "0"),
            ("BOR_SSE_KEEPALIVE", "1"),
        ];
        let application = build_application(&defaults, vars).await;
        let address = format!("http://127.0.0.1:{}", application.port());
        let state = application.state();
        actix_web::rt::spawn(application.run_until_stopped());
        SdkApp {
            address,
            mock,
            state,
            pool: db.pool(),
            _db: db,
        }
    }

    /// Runs one scenario of `client.py` against this bor and returns what it printed.
    pub async fn sdk(&self, scenario: &str, question: &str) -> Value {
        let python = std::env::var("BOR_TEST_OPENAI_PYTHON").expect(
            "BOR_TEST_OPENAI_PYTHON names a Python with the openai SDK; `make test-openai-sdk` sets it",
        );
        let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/openai_sdk/client.py");
        let run = tokio::process::Command::new(python)
            .arg(script)
            .args([self.address.as_str(), scenario, question])
            .kill_on_drop(true)
            .output();
        let output = tokio::time::timeout(SCENARIO_TIMEOUT, run)
            .await
            .expect("the SDK scenario ended in time")
            .expect("the SDK scenario runs");
        let stdout = String::from_utf8_lossy(&output.stdout);
        assert!(
            output.status.success(),
            "{scenario} failed: {}\n{stdout}",
            String::from_utf8_lossy(&output.stderr)
        );
        serde_json::from_str(&stdout).unwrap_or_else(|_| panic!("{scenario} printed {stdout}"))
    }

    /// The `query_log` rows once there are `n`.
    pub async fn rows(&self, n: usize) -> Vec<QueryLogEntry> {
        wait_for_rows(&self.pool, n).await
    }

    /// Turns holding a slot right now.
    pub fn turns_in_flight(&self) -> usize {
        bor::health::turns_in_flight(&self.state)
    }

    /// Stores a document of one chunk embedded as the mock embeds its text, and waits
    /// until bor's index has it.
    pub async fn insert_document(&self, title: &str, text: &str) -> i64 {
        let embedding = mock_embedding(&self.mock, text).await;
        let (document_id, _) =
            bor::testing::insert_one_chunk_document(&self.pool, title, text, &embedding).await;
        let index = self.state.library.index();
        assert!(
            eventually(async || index.chunk_count(document_id) == 1).await,
            "bor's index picked up document {document_id}"
        );
        document_id
    }
}
