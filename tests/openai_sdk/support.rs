//! The official `openai` Python SDK (`client.py`, run with the interpreter
//! `BOR_TEST_OPENAI_PYTHON` names) as the client of a [`TestApp`].

use std::path::Path;
use std::time::Duration;

use bor_test_support::TestApp;
use serde_json::Value;

/// The longest one SDK scenario may take.
const SCENARIO_TIMEOUT: Duration = Duration::from_secs(60);

/// Runs one scenario of `client.py` against `app` and returns what it printed.
pub async fn sdk(app: &TestApp, scenario: &str, question: &str) -> Value {
    let python = std::env::var("BOR_TEST_OPENAI_PYTHON").expect(
        "BOR_TEST_OPENAI_PYTHON names a Python with the openai SDK; `make test-openai-sdk` sets it",
    );
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/openai_sdk/client.py");
    let run = tokio::process::Command::new(python)
        .arg(script)
        .args([app.address.as_str(), scenario, question])
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
