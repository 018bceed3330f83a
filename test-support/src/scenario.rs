//! An official SDK as the client of a [`TestApp`](super::TestApp): a script of
//! scenarios under `tests/` runs one scenario and prints one JSON object, what the SDK
//! made of bor's answers (`make test-openai-sdk`, `make test-mcp-sdk`).

use std::path::Path;
use std::time::Duration;

use serde_json::Value;

/// The longest one SDK scenario may take.
const SCENARIO_TIMEOUT: Duration = Duration::from_secs(60);

/// Runs the Python `script` with `args` under the interpreter the environment variable
/// `interpreter` names (a virtual environment with the SDK); what it printed.
pub async fn python_scenario(interpreter: &str, script: &Path, args: &[&str]) -> Value {
    let python = std::env::var(interpreter).unwrap_or_else(|_| {
        panic!("{interpreter} names a Python with the SDK; its make target sets it")
    });
    scenario(&python, script, args).await
}

/// Runs the JavaScript module `script` with `args` under Node.js (its packages from
/// the repository's `node_modules`, which `scripts/ensure-node.sh` installs); what it
/// printed.
pub async fn node_scenario(script: &Path, args: &[&str]) -> Value {
    scenario("node", script, args).await
}

/// Runs `program script args…`; the test fails when it fails or prints no JSON.
async fn scenario(program: &str, script: &Path, args: &[&str]) -> Value {
    let run = tokio::process::Command::new(program)
        .arg(script)
        .args(args)
        .kill_on_drop(true)
        .output();
    let output = tokio::time::timeout(SCENARIO_TIMEOUT, run)
        .await
        .expect("the SDK scenario ended in time")
        .expect("the SDK scenario runs");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "{args:?} failed: {}\n{stdout}",
        String::from_utf8_lossy(&output.stderr)
    );
    serde_json::from_str(&stdout).unwrap_or_else(|_| panic!("{args:?} printed {stdout}"))
}
