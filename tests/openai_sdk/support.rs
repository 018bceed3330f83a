//! The official `openai` Python SDK (`client.py`, run with the interpreter
//! `BOR_TEST_OPENAI_PYTHON` names) as the client of a [`TestApp`].

use std::path::Path;

use bor_test_support::{TestApp, python_scenario};
use serde_json::Value;

/// Runs one scenario of `client.py` against `app` and returns what it printed.
pub async fn sdk(app: &TestApp, scenario: &str, question: &str) -> Value {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/openai_sdk/client.py");
    let args = [app.address.as_str(), scenario, question];
    python_scenario("BOR_TEST_OPENAI_PYTHON", &script, &args).await
}
