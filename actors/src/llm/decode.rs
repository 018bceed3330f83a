//! Decoding of OpenAI-compatible streaming chunks (the JSON after `data:`) into the
//! pieces bor forwards and the completion it ends with. Pure logic, no I/O.

use std::collections::BTreeMap;

use serde::Deserialize;
use serde_json::Value;

use super::error::AttemptError;
use super::types::{ChatCompletion, FunctionCall, ToolCall, Usage};

/// Text the model produced, forwarded to the requester as it arrives.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StreamPiece {
    Content(String),
    /// `reasoning_content` or `reasoning` deltas.
    Reasoning(String),
}

/// The most text the tool calls of one answer may hold, names and arguments together;
/// past it the answer is unreadable rather than a growing buffer (docs/LIMITS.md).
pub const MAX_TOOL_CALL_BYTES: usize = 1024 * 1024;

/// The terminator some servers send instead of (or after) a `finish_reason`.
pub const DONE_MARKER: &str = "[DONE]";

/// State of one streamed chat completion: pieces go out as they are decoded, tool calls
/// are assembled from their fragments and handed over at the end.
#[derive(Debug, Default)]
pub struct ChatStreamDecoder {
    tool_calls: ToolCallAssembler,
    finish_reason: Option<String>,
    usage: Option<Usage>,
    saw_done: bool,
    /// Events that carried something of the answer (text, reasoning, a tool-call
    /// fragment, a finish reason): what the read timeout measures silence by.
    progress: u64,
}

impl ChatStreamDecoder {
    /// Decodes the data of one event, appending the pieces it carries to `out`.
    pub fn decode(&mut self, data: &str, out: &mut Vec<StreamPiece>) -> Result<(), AttemptError> {
        let data = data.trim();
        if data == DONE_MARKER {
            self.saw_done = true;
            return Ok(());
        }
        if data.is_empty() {
            return Ok(());
        }
        let chunk: Chunk = serde_json::from_str(data).map_err(|err| {
            AttemptError::Invalid(format!(
                "a stream chunk is not valid JSON ({err}): {}",
                cut(data)
            ))
        })?;
        if let Some(error) = chunk.error {
            return Err(AttemptError::InStream(error_message(&error)));
        }
        if let Some(usage) = chunk.usage {
            self.usage = Some(usage);
        }
        let Some(choice) = chunk
            .choices
            .into_iter()
            .find(|c| c.index.unwrap_or(0) == 0)
        else {
            return Ok(());
        };
        if let Some(delta) = choice.delta.or(choice.message) {
            for reasoning in [delta.reasoning_content, delta.reasoning]
                .into_iter()
                .flatten()
            {
                if !reasoning.is_empty() {
                    self.progress += 1;
                    out.push(StreamPiece::Reasoning(reasoning));
                }
            }
            if let Some(content) = delta.content.filter(|c| !c.is_empty()) {
                self.progress += 1;
                out.push(StreamPiece::Content(content));
            }
            for (position, fragment) in delta.tool_calls.into_iter().flatten().enumerate() {
                self.progress += 1;
                self.tool_calls.add(position, fragment);
            }
            if self.tool_calls.bytes > MAX_TOOL_CALL_BYTES {
                return Err(AttemptError::Invalid(format!(
                    "the tool calls are longer than {MAX_TOOL_CALL_BYTES} bytes"
                )));
            }
        }
        if let Some(reason) = choice.finish_reason.filter(|r| !r.is_empty()) {
            self.progress += 1;
            self.finish_reason = Some(reason);
        }
        Ok(())
    }

    /// How many events so far carried something of the answer.
    pub fn progress(&self) -> u64 {
        self.progress
    }

    /// `[DONE]` arrived: nothing more is to be read.
    pub fn saw_done(&self) -> bool {
        self.saw_done
    }

    /// The stream told how it ended (`[DONE]` or a `finish_reason`), so its end is a
    /// complete answer rather than a break.
    pub fn is_complete(&self) -> bool {
        self.saw_done || self.finish_reason.is_some()
    }

    pub fn finish(self) -> ChatCompletion {
        ChatCompletion {
            tool_calls: self.tool_calls.finish(),
            finish_reason: self.finish_reason,
            usage: self.usage,
        }
    }
}

/// Joins tool-call fragments by their `index`. Ids and names are taken once (some
/// servers repeat them in every fragment); arguments are appended.
#[derive(Debug, Default)]
struct ToolCallAssembler {
    calls: BTreeMap<usize, PartialCall>,
    /// Bytes of ids, names and arguments held.
    bytes: usize,
}

#[derive(Debug, Default)]
struct PartialCall {
    id: String,
    name: String,
    arguments: String,
}

impl ToolCallAssembler {
    fn add(&mut self, position: usize, fragment: ToolCallFragment) {
        let call = self
            .calls
            .entry(fragment.index.unwrap_or(position))
            .or_default();
        if let Some(id) = fragment.id.filter(|id| !id.is_empty())
            && call.id.is_empty()
        {
            self.bytes += id.len();
            call.id = id;
        }
        let Some(function) = fragment.function else {
            return;
        };
        if let Some(name) = function.name.filter(|n| !n.is_empty())
            && call.name.is_empty()
        {
            self.bytes += name.len();
            call.name = name;
        }
        match function.arguments {
            Some(Value::String(text)) => {
                self.bytes += text.len();
                call.arguments.push_str(&text);
            }
            // A few servers send the arguments as an object rather than JSON text.
            Some(value @ Value::Object(_)) => {
                call.arguments = value.to_string();
                self.bytes += call.arguments.len();
            }
            _ => {}
        }
    }

    fn finish(self) -> Vec<ToolCall> {
        self.calls
            .into_iter()
            .map(|(index, call)| ToolCall {
                id: if call.id.is_empty() {
                    format!("call_{index}")
                } else {
                    call.id
                },
                kind: "function".to_owned(),
                function: FunctionCall {
                    name: call.name,
                    arguments: call.arguments,
                },
            })
            .collect()
    }
}

/// The readable message of an error object (`{"message": …}`, or a bare string).
pub(crate) fn error_message(error: &Value) -> String {
    let message = match error {
        Value::String(text) => text.clone(),
        Value::Object(fields) => fields
            .get("message")
            .and_then(Value::as_str)
            .map(str::to_owned)
            .unwrap_or_else(|| error.to_string()),
        other => other.to_string(),
    };
    cut(&message)
}

/// Shortens server text quoted in errors and logs.
pub(crate) fn cut(text: &str) -> String {
    const LIMIT: usize = 300;
    let kept = crate::text::prefix_chars(text, LIMIT);
    if kept.len() < text.len() {
        format!("{kept}…")
    } else {
        text.to_owned()
    }
}

#[derive(Deserialize)]
struct Chunk {
    #[serde(default)]
    choices: Vec<Choice>,
    usage: Option<Usage>,
    error: Option<Value>,
}

#[derive(Deserialize)]
struct Choice {
    index: Option<u32>,
    delta: Option<Delta>,
    /// Non-streaming completions carry `message` instead of `delta`.
    message: Option<Delta>,
    finish_reason: Option<String>,
}

#[derive(Deserialize)]
struct Delta {
    content: Option<String>,
    reasoning_content: Option<String>,
    reasoning: Option<String>,
    tool_calls: Option<Vec<ToolCallFragment>>,
}

#[derive(Deserialize)]
struct ToolCallFragment {
    index: Option<usize>,
    id: Option<String>,
    function: Option<FunctionFragment>,
}

#[derive(Deserialize)]
struct FunctionFragment {
    name: Option<String>,
    arguments: Option<Value>,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decode_all(lines: &[&str]) -> (Vec<StreamPiece>, ChatStreamDecoder) {
        let mut decoder = ChatStreamDecoder::default();
        let mut pieces = Vec::new();
        for line in lines {
            decoder.decode(line, &mut pieces).unwrap();
        }
        (pieces, decoder)
    }

    #[test]
    fn content_and_reasoning_are_separated() {
        let (pieces, decoder) = decode_all(&[
            r#"{"choices":[{"index":0,"delta":{"role":"assistant"}}]}"#,
            r#"{"choices":[{"index":0,"delta":{"reasoning_content":"let me think"}}]}"#,
            r#"{"choices":[{"index":0,"delta":{"reasoning":" more"}}]}"#,
            r#"{"choices":[{"index":0,"delta":{"content":"Hello"}}]}"#,
            r#"{"choices":[{"index":0,"delta":{"content":""}}]}"#,
            r#"{"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}"#,
        ]);
        assert_eq!(
            pieces,
            vec![
                StreamPiece::Reasoning("let me think".into()),
                StreamPiece::Reasoning(" more".into()),
                StreamPiece::Content("Hello".into()),
            ]
        );
        assert!(decoder.is_complete());
        assert!(!decoder.saw_done());
        assert_eq!(decoder.finish().finish_reason.as_deref(), Some("stop"));
    }

    #[test]
    fn tool_calls_are_assembled_from_fragments_by_index() {
        let (pieces, decoder) = decode_all(&[
            r#"{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_a","type":"function","function":{"name":"search_documents","arguments":""}}]}}]}"#,
            r#"{"choices":[{"index":0,"delta":{"tool_calls":[{"index":1,"id":"call_b","type":"function","function":{"name":"list_documents","arguments":"{}"}}]}}]}"#,
            r#"{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{\"query\":"}}]}}]}"#,
            r#"{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":" \"refunds\"}"}}]}}]}"#,
            r#"{"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}"#,
            "[DONE]",
        ]);
        assert!(pieces.is_empty());
        assert!(decoder.saw_done());
        let completion = decoder.finish();
        assert_eq!(completion.tool_calls.len(), 2);
        assert_eq!(completion.tool_calls[0].id, "call_a");
        assert_eq!(completion.tool_calls[0].function.name, "search_documents");
        assert_eq!(
            completion.tool_calls[0].function.arguments,
            r#"{"query": "refunds"}"#
        );
        assert_eq!(completion.tool_calls[1].function.name, "list_documents");
        assert_eq!(completion.tool_calls[1].function.arguments, "{}");
    }

    #[test]
    fn repeated_ids_and_names_are_taken_once() {
        let fragment = |args: &str| {
            format!(
                r#"{{"choices":[{{"index":0,"delta":{{"tool_calls":[{{"index":0,"id":"call_x","type":"function","function":{{"name":"read_document","arguments":{}}}}}]}}}}]}}"#,
                serde_json::to_string(args).unwrap()
            )
        };
        let lines = [fragment("{\"document_id\""), fragment(": 7}")];
        let (_, decoder) = decode_all(&[&lines[0], &lines[1]]);
        let calls = decoder.finish().tool_calls;
        assert_eq!(calls.len(), 1);
        assert_eq!(calls[0].id, "call_x");
        assert_eq!(calls[0].function.name, "read_document");
        assert_eq!(calls[0].function.arguments, "{\"document_id\": 7}");
    }

    #[test]
    fn missing_ids_get_one_and_object_arguments_become_text() {
        let (_, decoder) = decode_all(&[
            r#"{"choices":[{"delta":{"tool_calls":[{"function":{"name":"list_documents","arguments":{"a":1}}}]}}]}"#,
        ]);
        let calls = decoder.finish().tool_calls;
        assert_eq!(calls[0].id, "call_0");
        assert_eq!(calls[0].function.arguments, r#"{"a":1}"#);
    }

    #[test]
    fn usage_only_chunk_with_empty_choices_is_kept() {
        let (pieces, decoder) = decode_all(&[
            r#"{"choices":[{"index":0,"delta":{"content":"hi"},"finish_reason":"stop"}]}"#,
            r#"{"choices":[],"usage":{"prompt_tokens":5,"completion_tokens":1,"total_tokens":6}}"#,
        ]);
        assert_eq!(pieces, vec![StreamPiece::Content("hi".into())]);
        assert_eq!(decoder.finish().usage.map(|u| u.total_tokens), Some(6));
    }

    #[test]
    fn error_objects_in_the_stream_are_failures() {
        let mut decoder = ChatStreamDecoder::default();
        let err = decoder
            .decode(
                r#"{"error":{"message":"model overloaded","type":"server_error"}}"#,
                &mut Vec::new(),
            )
            .unwrap_err();
        assert_eq!(err, AttemptError::InStream("model overloaded".into()));
        let err = decoder
            .decode(r#"{"error":"boom"}"#, &mut Vec::new())
            .unwrap_err();
        assert_eq!(err, AttemptError::InStream("boom".into()));
    }

    #[test]
    fn invalid_json_is_an_invalid_response() {
        let mut decoder = ChatStreamDecoder::default();
        let err = decoder.decode("{not json", &mut Vec::new()).unwrap_err();
        assert!(matches!(err, AttemptError::Invalid(_)), "{err:?}");
    }

    #[test]
    fn a_stream_without_terminator_is_not_complete() {
        let (_, decoder) = decode_all(&[r#"{"choices":[{"index":0,"delta":{"content":"par"}}]}"#]);
        assert!(!decoder.is_complete());
    }

    #[test]
    fn cut_respects_character_boundaries() {
        let long = "é".repeat(400);
        let shortened = cut(&long);
        assert_eq!(shortened.chars().count(), 301);
        assert!(shortened.ends_with('…'));
    }
}
