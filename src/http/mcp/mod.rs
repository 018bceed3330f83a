//! `POST /mcp`: bor as a Model Context Protocol server (docs/MCP.md). The Streamable
//! HTTP transport in its stateless form: every POST carries one JSON-RPC message and
//! gets its answer as JSON, so any instance answers any request and no session is kept
//! (a client's `Mcp-Session-Id` is read by nobody). Who asks is decided by the same
//! door as `/api` (`http/door.rs`); a request without a caller never gets here.
//!
//! - `jsonrpc.rs`: one message read from the body, answers and errors written
//! - `tools.rs`: `search`, `fetch`, `list_collections`
//! - `resource.rs`: the protected-resource metadata and the 401's challenge

mod jsonrpc;
mod resource;
mod tools;

use std::time::Instant;

use actix_web::http::header;
use actix_web::{HttpRequest, HttpResponse, ResponseError, post, web};
use serde_json::{Map, Value, json};

use super::body::read_json_bytes;
use super::error::ApiError;
use super::question::MAX_BODY_BYTES;
use crate::auth::{Caller, public_base};
use crate::state::AppState;
use jsonrpc::{INVALID_PARAMS, INVALID_REQUEST, METHOD_NOT_FOUND, Message, RpcError};
use tools::{Context, Outcome, Tool};

pub use resource::{
    METADATA_PATH, challenge, protected_resource, protected_resource_of_mcp, resource_url,
};

/// Where MCP clients connect.
pub const MCP_PATH: &str = "/mcp";

/// The protocol versions of the `initialize` handshake bor speaks, oldest first. A
/// client asking for another is offered the last.
const PROTOCOL_VERSIONS: [&str; 3] = ["2025-03-26", "2025-06-18", "2025-11-25"];

/// The header a client names its protocol version in after the handshake.
const PROTOCOL_VERSION_HEADER: &str = "mcp-protocol-version";

/// What a client's model is told about bor when it connects.
const INSTRUCTIONS: &str = "bor holds a team's documents. Use `search` to find passages \
    about a question, `fetch` to read one with its context, and cite each passage by its \
    `url`. `list_collections` names the collections you may read.";

/// One JSON-RPC message (docs/MCP.md): a request gets its response as
/// `application/json`; a notification or a response is accepted with 202.
#[utoipa::path(
    tag = "mcp",
    request_body(content = Object, content_type = "application/json",
        description = "one JSON-RPC 2.0 message: `initialize`, `ping`, `tools/list`, `tools/call`, or a notification"),
    responses(
        (status = 200, description = "the JSON-RPC response: a result, or an error (-32601 unknown method, -32602 invalid params)", body = Object),
        (status = 202, description = "a notification or a response, accepted"),
        (status = 400, description = "a JSON-RPC error: -32700 not JSON, -32600 not one JSON-RPC message (a batch, say) or an unsupported `MCP-Protocol-Version`", body = Object),
        (status = 401, description = "`unauthorized`, with `WWW-Authenticate: Bearer resource_metadata=\"…\"`", body = super::error::ErrorBody),
        (status = 413, description = "a JSON-RPC error -32600: the body is over 256 KiB", body = Object),
        (status = 415, description = "a JSON-RPC error -32600: the body is not JSON", body = Object),
    )
)]
#[post("/mcp")]
pub async fn mcp(
    caller: Caller,
    request: HttpRequest,
    payload: web::Payload,
    state: web::Data<AppState>,
) -> HttpResponse {
    let read = read_json_bytes(
        &request,
        payload,
        MAX_BODY_BYTES,
        state.config.request_body_timeout,
    )
    .await;
    let body = match read {
        Ok(body) if super::nul::holds_nul(&body) => {
            return refused(&ApiError::NulCharacter("the body"));
        }
        Ok(body) => body,
        Err(refusal) => return refused(&refusal),
    };
    let version = request
        .headers()
        .get(PROTOCOL_VERSION_HEADER)
        .map(|value| value.to_str().unwrap_or_default());
    if let Some(version) = version
        && !PROTOCOL_VERSIONS.contains(&version)
    {
        let error = RpcError::new(
            INVALID_REQUEST,
            format!(
                "unsupported MCP-Protocol-Version `{version}`; bor speaks {}",
                PROTOCOL_VERSIONS.join(", ")
            ),
        );
        return HttpResponse::BadRequest().json(jsonrpc::error(Value::Null, &error));
    }
    let (id, method, params) = match jsonrpc::parse(&body) {
        Ok(Message::Request { id, method, params }) => (id, method, params),
        Ok(Message::Accepted) => return HttpResponse::Accepted().finish(),
        Err(unreadable) => {
            return HttpResponse::BadRequest()
                .json(jsonrpc::error(unreadable.id, &unreadable.error));
        }
    };
    let answered = match method.as_str() {
        "initialize" => initialize(&params),
        "ping" => Ok(json!({})),
        "tools/list" => Ok(json!({"tools": Tool::ALL.map(Tool::definition)})),
        "tools/call" => call_tool(&state, &caller, &request, params).await,
        other => Err(RpcError::new(
            METHOD_NOT_FOUND,
            format!("bor does not serve `{other}`"),
        )),
    };
    HttpResponse::Ok().json(match answered {
        Ok(result) => jsonrpc::result(id, result),
        Err(error) => jsonrpc::error(id, &error),
    })
}

/// Any other method on `/mcp`: 405. Stateless, bor opens no stream for a `GET` and
/// has no session for a `DELETE` to end.
pub async fn not_allowed() -> HttpResponse {
    HttpResponse::MethodNotAllowed()
        .insert_header((header::ALLOW, "POST"))
        .finish()
}

/// A body refused before it is read as JSON-RPC: its status, and a JSON-RPC error.
fn refused(refusal: &ApiError) -> HttpResponse {
    let error = RpcError::new(INVALID_REQUEST, refusal.to_string());
    HttpResponse::build(refusal.status_code()).json(jsonrpc::error(Value::Null, &error))
}

/// The handshake: the client's protocol version when bor speaks it, else bor's latest.
fn initialize(params: &Map<String, Value>) -> Result<Value, RpcError> {
    let Some(asked) = params.get("protocolVersion").and_then(Value::as_str) else {
        return Err(RpcError::new(
            INVALID_PARAMS,
            "`protocolVersion` must be a string",
        ));
    };
    let latest = PROTOCOL_VERSIONS[PROTOCOL_VERSIONS.len() - 1];
    let version = PROTOCOL_VERSIONS
        .into_iter()
        .find(|known| *known == asked)
        .unwrap_or(latest);
    Ok(json!({
        "protocolVersion": version,
        "capabilities": {"tools": {"listChanged": false}},
        "serverInfo": {"name": "bor", "title": "bor", "version": env!("CARGO_PKG_VERSION")},
        "instructions": INSTRUCTIONS,
    }))
}

/// `tools/call`: the tool's result as text (its JSON) and as `structuredContent`, or
/// its refusal with `isError`. An unknown tool is a JSON-RPC error.
async fn call_tool(
    state: &AppState,
    caller: &Caller,
    request: &HttpRequest,
    params: Map<String, Value>,
) -> Result<Value, RpcError> {
    let started = Instant::now();
    let name = params.get("name").and_then(Value::as_str).unwrap_or("");
    let Some(tool) = Tool::named(name) else {
        bor_actors::metrics::metrics().observe_mcp_call("unknown", "tool_error", started.elapsed());
        return Err(RpcError::new(
            INVALID_PARAMS,
            format!("there is no tool `{name}`"),
        ));
    };
    let arguments = match params.get("arguments") {
        None | Some(Value::Null) => Map::new(),
        Some(Value::Object(arguments)) => arguments.clone(),
        Some(_) => {
            return Err(RpcError::new(
                INVALID_PARAMS,
                "`arguments` must be an object",
            ));
        }
    };
    let Some(public) = public_base(request, state.config.public_url.as_ref()) else {
        return Err(RpcError::new(
            INVALID_REQUEST,
            "the request has no Host to make addresses with",
        ));
    };
    let context = Context {
        state,
        caller,
        public: &public,
    };
    let outcome = tools::call(&context, tool, arguments).await;
    let elapsed = started.elapsed();
    bor_actors::metrics::metrics().observe_mcp_call(tool.name(), outcome.label(), elapsed);
    tracing::info!(
        tool = tool.name(),
        outcome = outcome.label(),
        ms = elapsed.as_secs_f64() * 1e3,
        "mcp tool call"
    );
    Ok(match outcome {
        Outcome::Done(result) => json!({
            "content": [{"type": "text", "text": result.to_string()}],
            "structuredContent": result,
            "isError": false,
        }),
        Outcome::Refused(message) | Outcome::Unavailable(message) => json!({
            "content": [{"type": "text", "text": message}],
            "isError": true,
        }),
    })
}
