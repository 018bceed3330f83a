//! `/mcp` as an MCP client speaks it: one JSON-RPC message per POST.

use awc::http::Method;
use serde_json::{Value, json};

use super::{Credential, Reply, TestApp};

impl TestApp {
    /// `POST /mcp` with one JSON-RPC message as `credential`.
    pub async fn mcp(&self, credential: &Credential, message: Value) -> Reply {
        self.call(Method::POST, "/mcp", credential, Some(message))
            .await
    }

    /// `tools/call` of `tool` with `arguments` as `credential`: the call's `result`
    /// (`content`, `structuredContent`, `isError`), after checking that the call was
    /// answered with one.
    pub async fn mcp_tool(&self, credential: &Credential, tool: &str, arguments: Value) -> Value {
        let message = json!({
            "jsonrpc": "2.0", "id": 1, "method": "tools/call",
            "params": {"name": tool, "arguments": arguments}
        });
        let reply = self.mcp(credential, message).await;
        assert_eq!(reply.status, 200, "{tool}: {}", reply.text());
        let answer = reply.json();
        assert_eq!(answer["id"], 1, "{answer}");
        answer
            .get("result")
            .cloned()
            .unwrap_or_else(|| panic!("{tool} has a result: {answer}"))
    }
}
