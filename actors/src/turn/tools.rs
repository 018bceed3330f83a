//! The document tools offered to the model (docs/PROTOCOL.md, "Document tools"): their
//! JSON-schema definitions, the parsing of a call's arguments, and the JSON text of
//! results.

use serde::Deserialize;
use serde_json::{Value, json};

use crate::knowledge::ChunkHit;

pub const SEARCH_DOCUMENTS: &str = "search_documents";
pub const READ_DOCUMENT: &str = "read_document";
pub const LIST_DOCUMENTS: &str = "list_documents";

/// Every tool name, for the scaffolding filter's name-aware formats.
pub const TOOL_NAMES: [&str; 3] = [SEARCH_DOCUMENTS, READ_DOCUMENT, LIST_DOCUMENTS];

/// The `tool` label of a call in the metrics: the tool's name when it is one of bor's,
/// else `unknown`, so that names a model invents add no series.
pub fn metric_label(name: &str) -> &'static str {
    TOOL_NAMES
        .iter()
        .find(|known| **known == name)
        .copied()
        .unwrap_or("unknown")
}

/// `search_documents` returns this many chunks unless asked otherwise.
pub const DEFAULT_SEARCH_LIMIT: usize = 5;
pub const MAX_SEARCH_LIMIT: usize = 10;

/// The `tools` array of a chat request.
pub fn definitions() -> Vec<Value> {
    vec![
        function(
            SEARCH_DOCUMENTS,
            "Search the user's knowledge base. Returns the best matching passages with the number to cite each by ([n]), their document ids, titles, headings, pages, similarity scores and text.",
            json!({
                "type": "object",
                "properties": {
                    "query": {"type": "string", "description": "What to look for."},
                    "limit": {"type": "integer", "minimum": 1, "maximum": MAX_SEARCH_LIMIT,
                              "description": "How many passages to return (default 5)."}
                },
                "required": ["query"]
            }),
        ),
        function(
            READ_DOCUMENT,
            "Read one document of the knowledge base by its id. Long documents are cut; `truncated` says so.",
            json!({
                "type": "object",
                "properties": {
                    "document_id": {"type": "integer", "description": "The document's id."}
                },
                "required": ["document_id"]
            }),
        ),
        function(
            LIST_DOCUMENTS,
            "List the documents of the knowledge base: their ids, titles and short summaries.",
            json!({"type": "object", "properties": {}}),
        ),
    ]
}

fn function(name: &str, description: &str, parameters: Value) -> Value {
    json!({
        "type": "function",
        "function": {"name": name, "description": description, "parameters": parameters}
    })
}

/// A tool call whose arguments made sense.
#[derive(Debug, Clone, PartialEq)]
pub enum ToolInvocation {
    Search { query: String, limit: usize },
    Read { document_id: i64 },
    List,
}

/// Parses a call; the error text goes back to the model as the tool's result.
pub fn parse_call(name: &str, arguments: &str) -> Result<ToolInvocation, String> {
    let arguments = if arguments.trim().is_empty() {
        Value::Object(Default::default())
    } else {
        serde_json::from_str::<Value>(arguments)
            .map_err(|err| format!("the arguments are not valid JSON: {err}"))?
    };
    match name {
        SEARCH_DOCUMENTS => {
            let args: SearchArguments = from_value(arguments)?;
            let query = args.query.trim().to_owned();
            if query.is_empty() {
                return Err("`query` must not be empty".to_owned());
            }
            let limit = args
                .limit
                .map(|limit| limit.as_usize().clamp(1, MAX_SEARCH_LIMIT))
                .unwrap_or(DEFAULT_SEARCH_LIMIT);
            Ok(ToolInvocation::Search { query, limit })
        }
        READ_DOCUMENT => {
            let args: ReadArguments = from_value(arguments)?;
            Ok(ToolInvocation::Read {
                document_id: args.document_id.as_i64()?,
            })
        }
        LIST_DOCUMENTS => Ok(ToolInvocation::List),
        other => Err(format!(
            "unknown tool `{other}`; the tools are {}",
            TOOL_NAMES.join(", ")
        )),
    }
}

fn from_value<T: for<'de> Deserialize<'de>>(value: Value) -> Result<T, String> {
    serde_json::from_value(value).map_err(|err| format!("bad arguments: {err}"))
}

/// The JSON text of a search's results: each hit with the number `[n]` it is cited by
/// (`numbers[i]` is the number of `hits[i]`).
pub fn search_result(hits: &[ChunkHit], numbers: &[u32]) -> Result<String, String> {
    let results: Vec<Value> = hits
        .iter()
        .zip(numbers)
        .map(|(hit, n)| {
            json!({
                "n": n,
                "document_id": hit.document_id,
                "chunk_id": hit.chunk_id,
                "title": hit.title,
                "heading": hit.heading,
                "page": hit.page,
                "score": hit.score,
                "text": hit.text,
            })
        })
        .collect();
    Ok(json!({ "results": results }).to_string())
}

/// The JSON text of a failed tool call.
pub fn error_result(message: &str) -> String {
    json!({ "error": message }).to_string()
}

#[derive(Deserialize)]
struct SearchArguments {
    query: String,
    limit: Option<Number>,
}

#[derive(Deserialize)]
struct ReadArguments {
    document_id: Number,
}

/// Small models write numbers as strings now and then: accept both.
#[derive(Deserialize)]
#[serde(untagged)]
enum Number {
    Int(i64),
    Float(f64),
    Text(String),
}

impl Number {
    fn as_i64(&self) -> Result<i64, String> {
        match self {
            Self::Int(n) => Ok(*n),
            Self::Float(f) if f.fract() == 0.0 => Ok(*f as i64),
            Self::Text(text) => text
                .trim()
                .parse()
                .map_err(|_| format!("`{text}` is not a whole number")),
            Self::Float(f) => Err(format!("`{f}` is not a whole number")),
        }
    }

    fn as_usize(&self) -> usize {
        self.as_i64().unwrap_or(DEFAULT_SEARCH_LIMIT as i64).max(0) as usize
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn metric_labels_are_the_tool_names_or_unknown() {
        for name in TOOL_NAMES {
            assert_eq!(metric_label(name), name);
        }
        assert_eq!(metric_label("rm_rf"), "unknown");
        assert_eq!(metric_label(""), "unknown");
    }

    #[test]
    fn definitions_name_every_tool_once() {
        let names: Vec<String> = definitions()
            .iter()
            .map(|d| d["function"]["name"].as_str().unwrap().to_owned())
            .collect();
        assert_eq!(names, TOOL_NAMES);
        for definition in definitions() {
            assert_eq!(definition["type"], "function");
            assert_eq!(definition["function"]["parameters"]["type"], "object");
        }
    }

    #[test]
    fn search_arguments_are_parsed_and_bounded() {
        assert_eq!(
            parse_call(SEARCH_DOCUMENTS, r#"{"query":" refunds "}"#),
            Ok(ToolInvocation::Search {
                query: "refunds".into(),
                limit: 5
            })
        );
        assert_eq!(
            parse_call(SEARCH_DOCUMENTS, r#"{"query":"x","limit":50}"#),
            Ok(ToolInvocation::Search {
                query: "x".into(),
                limit: 10
            })
        );
        assert_eq!(
            parse_call(SEARCH_DOCUMENTS, r#"{"query":"x","limit":"2"}"#),
            Ok(ToolInvocation::Search {
                query: "x".into(),
                limit: 2
            })
        );
        assert!(parse_call(SEARCH_DOCUMENTS, r#"{"query":"  "}"#).is_err());
        assert!(parse_call(SEARCH_DOCUMENTS, r#"{}"#).is_err());
    }

    #[test]
    fn read_accepts_numbers_written_as_text() {
        assert_eq!(
            parse_call(READ_DOCUMENT, r#"{"document_id":"7"}"#),
            Ok(ToolInvocation::Read { document_id: 7 })
        );
        assert_eq!(
            parse_call(READ_DOCUMENT, r#"{"document_id":7.0}"#),
            Ok(ToolInvocation::Read { document_id: 7 })
        );
        assert!(parse_call(READ_DOCUMENT, r#"{"document_id":"seven"}"#).is_err());
        assert!(parse_call(READ_DOCUMENT, r#"{"document_id":1.5}"#).is_err());
    }

    #[test]
    fn list_takes_empty_arguments_and_unknown_tools_are_errors() {
        assert_eq!(parse_call(LIST_DOCUMENTS, ""), Ok(ToolInvocation::List));
        assert_eq!(parse_call(LIST_DOCUMENTS, "{}"), Ok(ToolInvocation::List));
        let err = parse_call("web_search", "{}").unwrap_err();
        assert!(err.contains("unknown tool `web_search`"), "{err}");
        assert!(
            parse_call(READ_DOCUMENT, "{oops")
                .unwrap_err()
                .contains("not valid JSON")
        );
    }

    #[test]
    fn error_results_are_json() {
        let value: Value = serde_json::from_str(&error_result("no such document")).unwrap();
        assert_eq!(value, json!({"error": "no such document"}));
    }
}
