//! Recorded-shape event streams: what real OpenAI-compatible servers send, written by
//! hand after their published formats (and, for llama-cpp-python, after what its server
//! sent in bor's real-model suite) and replayed byte for byte by the `fixture` directive. The files live in
//! `fixtures/`; each entry below says which shapes it carries.

use std::time::Duration;

use crate::reply::{EventStream, Reply, StreamEnd};

/// One recorded stream.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Fixture {
    pub name: &'static str,
    /// The content type the server sends with it.
    pub content_type: &'static str,
    /// The body as the file holds it: SSE events separated by blank lines.
    pub body: &'static str,
}

const SSE: &str = "text/event-stream";
const SSE_UTF8: &str = "text/event-stream; charset=utf-8";

macro_rules! fixture {
    ($name:literal, $content_type:expr) => {
        Fixture {
            name: $name,
            content_type: $content_type,
            body: include_str!(concat!("../fixtures/", $name, ".sse")),
        }
    };
}

/// Every fixture, by name.
pub(crate) const FIXTURES: &[Fixture] = &[
    // OpenAI: role-only first chunk with `content: ""` and `refusal`, `usage: null` on
    // every chunk, a usage-only final chunk with empty `choices`, `[DONE]`.
    fixture!("openai-text", SSE_UTF8),
    // OpenAI: two parallel calls; id, type and name only in each call's first fragment,
    // arguments in later fragments keyed by `index`; finish `tool_calls`.
    fixture!("openai-tool-call", SSE_UTF8),
    // OpenAI: an error object as the first event, no `[DONE]`.
    fixture!("openai-error", SSE_UTF8),
    // vLLM with a reasoning parser: `reasoning_content` deltas, then content; a finish
    // chunk with `stop_reason`; a usage-only chunk.
    fixture!("vllm-reasoning", SSE_UTF8),
    // vLLM: content before the call; the first fragment has a name but no `arguments`.
    fixture!("vllm-tool-call", SSE_UTF8),
    // vLLM: an error object after some content, then `[DONE]`.
    fixture!("vllm-error-mid-stream", SSE_UTF8),
    // Ollama: `role` in every chunk, reasoning in `reasoning`, usage-only final chunk.
    fixture!("ollama-reasoning", SSE),
    // Ollama: the whole call (arguments included) in one chunk.
    fixture!("ollama-tool-call", SSE),
    // llama.cpp's server: `content: null` in the role chunk, `reasoning_content`, usage
    // and `timings` inside the finish chunk.
    fixture!("llamacpp-reasoning", SSE),
    // llama.cpp's server: id and name in the first fragment, arguments split mid-word.
    fixture!("llamacpp-tool-call", SSE),
    // llama-cpp-python: nulls in the role chunk, every fragment repeats index, id, type
    // and name next to a legacy `function_call`, a keep-alive comment, no usage chunk.
    fixture!("llama-cpp-python-tool-call", SSE_UTF8),
    // A server that closes the body after the finish chunk, without `[DONE]`.
    fixture!("finish-without-done", SSE),
    // A stream cut off mid-answer: no finish chunk, no `[DONE]`, the body ends properly.
    fixture!("cut-off-mid-answer", SSE),
];

/// The fixture called `name`.
pub(crate) fn find(name: &str) -> Option<&'static Fixture> {
    FIXTURES.iter().find(|fixture| fixture.name == name)
}

/// The names of all fixtures, for error messages.
pub(crate) fn names() -> String {
    FIXTURES
        .iter()
        .map(|fixture| fixture.name)
        .collect::<Vec<_>>()
        .join(", ")
}

impl Fixture {
    /// The events of the body, each with its blank line.
    pub(crate) fn events(&self) -> Vec<String> {
        self.body
            .split("\n\n")
            .filter(|event| !event.trim().is_empty())
            .map(|event| format!("{event}\n\n"))
            .collect()
    }

    /// The fixture as a streamed 200 response, one HTTP chunk per event.
    pub(crate) fn replay(&self, token_delay: Duration) -> Reply {
        Reply::Stream(EventStream {
            content_type: self.content_type.to_owned(),
            events: self.events(),
            end: StreamEnd::Complete,
            token_delay,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_fixture_is_a_stream_of_json_or_done_events() {
        for fixture in FIXTURES {
            let events = fixture.events();
            assert!(!events.is_empty(), "{}", fixture.name);
            for event in events {
                assert!(event.ends_with("\n\n"), "{}: {event:?}", fixture.name);
                for line in event.lines().filter(|line| !line.trim().is_empty()) {
                    if line.starts_with(':') {
                        continue;
                    }
                    let data = line
                        .strip_prefix("data: ")
                        .unwrap_or_else(|| panic!("{}: not a data line: {line}", fixture.name));
                    if data.trim() != "[DONE]" {
                        serde_json::from_str::<serde_json::Value>(data)
                            .unwrap_or_else(|e| panic!("{}: {e}: {data}", fixture.name));
                    }
                }
            }
        }
    }

    #[test]
    fn names_are_unique_and_found() {
        for fixture in FIXTURES {
            assert_eq!(find(fixture.name), Some(fixture));
        }
        assert_eq!(find("no-such-server"), None);
        assert!(names().contains("ollama-tool-call"));
    }
}
