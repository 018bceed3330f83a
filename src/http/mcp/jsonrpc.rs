//! JSON-RPC 2.0 as MCP's Streamable HTTP transport carries it: one message per POST
//! (batches were dropped from the protocol in 2025-06-18), read into what it is, and the
//! responses and errors written back. Nothing here knows MCP's methods.

use serde::Serialize;
use serde_json::{Map, Value};

/// The body is not JSON.
pub const PARSE_ERROR: i64 = -32700;
/// JSON that is not one JSON-RPC request, notification or response.
pub const INVALID_REQUEST: i64 = -32600;
/// A method bor does not serve.
pub const METHOD_NOT_FOUND: i64 = -32601;
/// Parameters that do not fit the method.
pub const INVALID_PARAMS: i64 = -32602;

/// One message a client posted.
#[derive(Debug, PartialEq)]
pub enum Message {
    /// A request: it gets a response with its id.
    Request {
        id: Value,
        method: String,
        /// `{}` when the request has none.
        params: Map<String, Value>,
    },
    /// A notification (no id), or the client's response to a request of a server (bor
    /// sends none): accepted, never answered.
    Accepted,
}

/// A JSON-RPC error object.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RpcError {
    pub code: i64,
    pub message: String,
}

impl RpcError {
    pub fn new(code: i64, message: impl Into<String>) -> RpcError {
        RpcError {
            code,
            message: message.into(),
        }
    }
}

/// A message that cannot be answered as a request: its error, and its id when one
/// could be read (else the response's id is `null`).
#[derive(Debug, PartialEq)]
pub struct Unreadable {
    pub id: Value,
    pub error: RpcError,
}

/// Reads one message from a body.
pub fn parse(body: &[u8]) -> Result<Message, Unreadable> {
    let unreadable = |id: Value, code, message: &str| Unreadable {
        id,
        error: RpcError::new(code, message),
    };
    let value: Value = serde_json::from_slice(body)
        .map_err(|error| unreadable(Value::Null, PARSE_ERROR, &format!("not JSON: {error}")))?;
    let object = match value {
        Value::Object(object) => object,
        Value::Array(_) => {
            return Err(unreadable(
                Value::Null,
                INVALID_REQUEST,
                "batches are not accepted: send one JSON-RPC message per request",
            ));
        }
        _ => {
            return Err(unreadable(
                Value::Null,
                INVALID_REQUEST,
                "a JSON-RPC message is a JSON object",
            ));
        }
    };
    let id = match object.get("id") {
        None => None,
        Some(id @ (Value::String(_) | Value::Number(_))) => Some(id.clone()),
        Some(_) => {
            return Err(unreadable(
                Value::Null,
                INVALID_REQUEST,
                "`id` must be a string or a number",
            ));
        }
    };
    let answer_id = id.clone().unwrap_or(Value::Null);
    if object.get("jsonrpc") != Some(&Value::from("2.0")) {
        return Err(unreadable(
            answer_id,
            INVALID_REQUEST,
            "`jsonrpc` must be \"2.0\"",
        ));
    }
    let method = match object.get("method") {
        Some(Value::String(method)) => method.clone(),
        Some(_) => {
            return Err(unreadable(
                answer_id,
                INVALID_REQUEST,
                "`method` must be a string",
            ));
        }
        None if id.is_some() && (object.contains_key("result") || object.contains_key("error")) => {
            return Ok(Message::Accepted);
        }
        None => {
            return Err(unreadable(
                answer_id,
                INVALID_REQUEST,
                "a request needs a `method`",
            ));
        }
    };
    let params = match object.get("params") {
        None | Some(Value::Null) => Map::new(),
        Some(Value::Object(params)) => params.clone(),
        Some(_) => {
            return Err(unreadable(
                answer_id,
                INVALID_PARAMS,
                "`params` must be an object",
            ));
        }
    };
    match id {
        Some(id) => Ok(Message::Request { id, method, params }),
        None => Ok(Message::Accepted),
    }
}

/// The response to the request `id`.
pub fn result(id: Value, result: impl Serialize) -> Value {
    serde_json::json!({"jsonrpc": "2.0", "id": id, "result": result})
}

/// The error answering the request `id` (`null` when it had none that could be read).
pub fn error(id: Value, error: &RpcError) -> Value {
    serde_json::json!({"jsonrpc": "2.0", "id": id, "error": error})
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn refused(body: &str) -> (Value, i64) {
        let unreadable = parse(body.as_bytes()).unwrap_err();
        (unreadable.id, unreadable.error.code)
    }

    #[test]
    fn a_request_is_read_with_its_id_method_and_params() {
        let read = parse(br#"{"jsonrpc":"2.0","id":"a1","method":"tools/list"}"#).unwrap();
        assert_eq!(
            read,
            Message::Request {
                id: json!("a1"),
                method: "tools/list".to_owned(),
                params: Map::new(),
            }
        );
        let read = parse(br#"{"jsonrpc":"2.0","id":7,"method":"ping","params":{"x":1}}"#).unwrap();
        let Message::Request { id, params, .. } = read else {
            panic!("a request");
        };
        assert_eq!((id, params["x"].clone()), (json!(7), json!(1)));
    }

    #[test]
    fn notifications_and_responses_are_accepted_without_an_answer() {
        for body in [
            r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
            r#"{"jsonrpc":"2.0","id":3,"result":{}}"#,
            r#"{"jsonrpc":"2.0","id":3,"error":{"code":1,"message":"no"}}"#,
        ] {
            assert_eq!(parse(body.as_bytes()), Ok(Message::Accepted), "{body}");
        }
    }

    #[test]
    fn garbage_is_a_parse_error_or_an_invalid_request() {
        assert_eq!(refused("{not json"), (Value::Null, PARSE_ERROR));
        assert_eq!(refused(""), (Value::Null, PARSE_ERROR));
        assert_eq!(
            refused(r#"[{"jsonrpc":"2.0","id":1,"method":"ping"}]"#),
            (Value::Null, INVALID_REQUEST)
        );
        assert_eq!(refused("7"), (Value::Null, INVALID_REQUEST));
        assert_eq!(
            refused(r#"{"jsonrpc":"2.0","id":null,"method":"ping"}"#),
            (Value::Null, INVALID_REQUEST)
        );
        assert_eq!(
            refused(r#"{"jsonrpc":"1.0","id":2,"method":"ping"}"#),
            (json!(2), INVALID_REQUEST)
        );
        assert_eq!(
            refused(r#"{"jsonrpc":"2.0","id":2,"method":5}"#),
            (json!(2), INVALID_REQUEST)
        );
        assert_eq!(
            refused(r#"{"jsonrpc":"2.0","id":2}"#),
            (json!(2), INVALID_REQUEST)
        );
        assert_eq!(
            refused(r#"{"jsonrpc":"2.0","id":2,"method":"ping","params":[1]}"#),
            (json!(2), INVALID_PARAMS)
        );
    }
}
