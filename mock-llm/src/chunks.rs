//! The JSON of OpenAI chat completions: streamed chunks and whole completions.

use serde_json::{Value, json};

use crate::directive::ReasoningField;

/// A fixed creation time, so replies are byte-for-byte reproducible.
const CREATED: u64 = 1_700_000_000;
/// Characters of a tool call's arguments per streamed fragment.
const ARGUMENT_FRAGMENT_CHARS: usize = 8;

/// The end of an OpenAI event stream.
pub(crate) const DONE: &str = "data: [DONE]\n\n";

pub(crate) struct ToolCall {
    pub id: String,
    pub name: String,
    /// The arguments as JSON text.
    pub arguments: String,
}

/// What the assistant says: reasoning first, then text or tool calls.
pub(crate) struct Answer {
    pub reasoning: Vec<String>,
    pub reasoning_field: ReasoningField,
    pub body: AnswerBody,
}

pub(crate) enum AnswerBody {
    /// Content pieces, one per chunk.
    Text(Vec<String>),
    ToolCalls {
        calls: Vec<ToolCall>,
        repeat_ids: bool,
    },
}

impl Answer {
    fn finish_reason(&self) -> &'static str {
        match self.body {
            AnswerBody::Text(_) => "stop",
            AnswerBody::ToolCalls { .. } => "tool_calls",
        }
    }
}

/// Builds the chunks of one completion.
pub(crate) struct Completion<'a> {
    pub id: String,
    pub model: &'a str,
    pub prompt_tokens: usize,
}

/// A completion as an event stream, in parts that failures can cut apart.
pub(crate) struct StreamParts {
    /// The role-only first chunk.
    pub role: String,
    /// One chunk per reasoning token, content piece or tool-call fragment.
    pub pieces: Vec<String>,
    /// The finish chunk and, when asked, the usage chunk.
    pub tail: Vec<String>,
}

impl Completion<'_> {
    /// One SSE event carrying a `chat.completion.chunk`.
    pub(crate) fn event(&self, choices: Value, usage: Option<Value>) -> String {
        let mut chunk = json!({
            "id": self.id,
            "object": "chat.completion.chunk",
            "created": CREATED,
            "model": self.model,
            "choices": choices,
        });
        if let Some(usage) = usage {
            chunk["usage"] = usage;
        }
        format!("data: {chunk}\n\n")
    }

    pub(crate) fn delta(&self, delta: Value) -> String {
        self.event(
            json!([{"index": 0, "delta": delta, "logprobs": null, "finish_reason": null}]),
            None,
        )
    }

    fn usage(&self, completion_tokens: usize) -> Value {
        json!({
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": completion_tokens,
            "total_tokens": self.prompt_tokens + completion_tokens,
        })
    }

    pub(crate) fn stream(&self, answer: &Answer, with_usage: bool) -> StreamParts {
        let role = self.delta(json!({"role": "assistant"}));
        let mut pieces: Vec<String> = answer
            .reasoning
            .iter()
            .map(|token| self.delta(json!({answer.reasoning_field.key(): token})))
            .collect();
        match &answer.body {
            AnswerBody::Text(text) => pieces.extend(
                text.iter()
                    .map(|piece| self.delta(json!({"content": piece}))),
            ),
            AnswerBody::ToolCalls { calls, repeat_ids } => pieces.extend(
                tool_call_fragments(calls, *repeat_ids)
                    .into_iter()
                    .map(|fragment| self.delta(json!({"tool_calls": [fragment]}))),
            ),
        }
        let finish = self.event(
            json!([{"index": 0, "delta": {}, "logprobs": null, "finish_reason": answer.finish_reason()}]),
            None,
        );
        let mut tail = vec![finish];
        if with_usage {
            tail.push(self.event(json!([]), Some(self.usage(pieces.len()))));
        }
        StreamParts { role, pieces, tail }
    }

    /// The answer as one `chat.completion` object, for `stream: false`.
    pub(crate) fn whole(&self, answer: &Answer) -> Value {
        let mut message = json!({"role": "assistant", "content": null});
        if !answer.reasoning.is_empty() {
            message[answer.reasoning_field.key()] = json!(answer.reasoning.concat());
        }
        let completion_tokens = answer.reasoning.len()
            + match &answer.body {
                AnswerBody::Text(text) => {
                    message["content"] = json!(text.concat());
                    text.len()
                }
                AnswerBody::ToolCalls { calls, .. } => {
                    let calls: Vec<Value> = calls
                        .iter()
                        .map(|call| {
                            json!({
                                "id": call.id,
                                "type": "function",
                                "function": {"name": call.name, "arguments": call.arguments},
                            })
                        })
                        .collect();
                    let count = calls.len();
                    message["tool_calls"] = Value::Array(calls);
                    count
                }
            };
        json!({
            "id": self.id,
            "object": "chat.completion",
            "created": CREATED,
            "model": self.model,
            "choices": [{
                "index": 0,
                "message": message,
                "logprobs": null,
                "finish_reason": answer.finish_reason(),
            }],
            "usage": self.usage(completion_tokens),
        })
    }
}

/// Tool calls as OpenAI stream fragments: per call, a first fragment with the id, type,
/// name and empty arguments, then the arguments text in pieces. With `repeat_ids`, every
/// fragment repeats the id, type and name, as llama.cpp's server does.
fn tool_call_fragments(calls: &[ToolCall], repeat_ids: bool) -> Vec<Value> {
    let mut fragments = Vec::new();
    for (index, call) in calls.iter().enumerate() {
        let full = |arguments: &str| {
            json!({
                "index": index,
                "id": call.id,
                "type": "function",
                "function": {"name": call.name, "arguments": arguments},
            })
        };
        fragments.push(full(""));
        let characters: Vec<char> = call.arguments.chars().collect();
        for piece in characters.chunks(ARGUMENT_FRAGMENT_CHARS) {
            let piece: String = piece.iter().collect();
            fragments.push(if repeat_ids {
                full(&piece)
            } else {
                json!({"index": index, "function": {"arguments": piece}})
            });
        }
    }
    fragments
}

#[cfg(test)]
mod tests {
    use super::*;

    fn call(arguments: &str) -> ToolCall {
        ToolCall {
            id: "call_0_0".to_owned(),
            name: "search_documents".to_owned(),
            arguments: arguments.to_owned(),
        }
    }

    #[test]
    fn fragments_carry_the_id_once_and_split_the_arguments() {
        let arguments = r#"{"query":"bor réseau","limit":3}"#;
        let fragments = tool_call_fragments(&[call(arguments)], false);
        assert!(fragments.len() > 3);
        assert_eq!(fragments[0]["id"], "call_0_0");
        assert_eq!(fragments[0]["function"]["arguments"], "");
        assert!(fragments[1..].iter().all(|f| f.get("id").is_none()));
        let joined: String = fragments
            .iter()
            .filter_map(|f| f["function"]["arguments"].as_str())
            .collect();
        assert_eq!(joined, arguments);
    }

    #[test]
    fn repeated_ids_appear_in_every_fragment() {
        let fragments = tool_call_fragments(&[call("{}"), call(r#"{"document_id":7}"#)], true);
        assert!(
            fragments
                .iter()
                .all(|f| f["id"] == "call_0_0" && f["type"] == "function")
        );
        assert_eq!(fragments.last().unwrap()["index"], 1);
    }
}
