//! Directives: a line `MOCK {json}` in a request's text that tells the mock how to answer.
//! The fields are documented in the crate docs.

use std::time::Duration;

use serde::Deserialize;
use serde_json::Value;

use crate::fixtures::{self, Fixture};

/// What starts a directive line.
const PREFIX: &str = "MOCK ";

/// The endpoints a directive can target.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Endpoint {
    Chat,
    Embeddings,
    Rerank,
}

/// Which endpoint a directive's failure and wire shape apply to.
#[derive(Deserialize, Default, Clone, Copy, Debug, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub(crate) enum Scope {
    #[default]
    Chat,
    Embeddings,
    /// Chat and embeddings.
    Both,
    Rerank,
}

#[derive(Deserialize, Clone, Copy, Debug, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub(crate) enum Garbage {
    InvalidJson,
    HugeLine,
    Html,
}

/// The delta field that carries reasoning text.
#[derive(Deserialize, Default, Clone, Copy, Debug, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub(crate) enum ReasoningField {
    #[default]
    ReasoningContent,
    Reasoning,
}

impl ReasoningField {
    pub(crate) fn key(self) -> &'static str {
        match self {
            ReasoningField::ReasoningContent => "reasoning_content",
            ReasoningField::Reasoning => "reasoning",
        }
    }
}

#[derive(Deserialize, Clone, Debug, PartialEq)]
#[serde(deny_unknown_fields)]
pub(crate) struct ToolCallSpec {
    pub name: String,
    /// An object is sent as its JSON text; a string is sent as it is (so tests can send
    /// malformed arguments).
    #[serde(default = "empty_object")]
    pub arguments: Value,
}

fn empty_object() -> Value {
    Value::Object(serde_json::Map::new())
}

/// A failure to inject; at most one per directive.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Fault {
    Status { code: u16, html: bool },
    Drop,
    Hang,
    DropAfter(usize),
    StallAfter(usize),
    KeepAliveAfter(usize),
    ErrorAfter(usize),
    NoDone,
    Garbage(Garbage),
}

impl Fault {
    /// Faults that only make sense inside an event stream.
    pub(crate) fn streams_only(&self) -> bool {
        matches!(
            self,
            Fault::DropAfter(_)
                | Fault::StallAfter(_)
                | Fault::KeepAliveAfter(_)
                | Fault::ErrorAfter(_)
                | Fault::NoDone
        )
    }
}

/// A parsed and checked directive; the default one asks for nothing special.
#[derive(Debug, Default, PartialEq)]
pub(crate) struct Directive {
    pub fault: Option<Fault>,
    /// The fault applies to the first `times` attempts of the same body; `None` = always.
    pub times: Option<u32>,
    pub scope: Scope,
    pub reply: Option<String>,
    pub chunks: Option<Vec<String>>,
    /// The text answer is streamed this many times over.
    pub repeat: usize,
    pub reasoning: Option<String>,
    pub reasoning_field: ReasoningField,
    pub usage: bool,
    /// Refuse a request that has `stream_options`, as servers that do not know it do.
    pub refuse_stream_options: bool,
    pub tool_calls: Vec<ToolCallSpec>,
    pub tool_rounds: usize,
    pub repeat_ids: bool,
    pub leak: Option<String>,
    pub leak_always: bool,
    pub token_delay: Option<Duration>,
    pub split_writes: bool,
    pub content_type: Option<String>,
    /// A recorded stream replayed instead of the generated answer.
    pub fixture: Option<&'static Fixture>,
}

/// The JSON object of a directive line, as written.
#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct Fields {
    times: Option<u32>,
    on: Option<Scope>,
    status: Option<u16>,
    #[serde(default)]
    html_error: bool,
    #[serde(default)]
    drop: bool,
    #[serde(default)]
    hang: bool,
    drop_after: Option<usize>,
    stall_after: Option<usize>,
    keepalive_after: Option<usize>,
    error_after: Option<usize>,
    #[serde(default)]
    no_done: bool,
    garbage: Option<Garbage>,
    reply: Option<String>,
    chunks: Option<Vec<String>>,
    repeat: Option<usize>,
    reasoning: Option<String>,
    reasoning_field: Option<ReasoningField>,
    #[serde(default)]
    usage: bool,
    #[serde(default)]
    refuse_stream_options: bool,
    tool_calls: Option<Vec<ToolCallSpec>>,
    tool_rounds: Option<usize>,
    #[serde(default)]
    repeat_ids: bool,
    leak: Option<String>,
    #[serde(default)]
    leak_always: bool,
    token_delay_ms: Option<u64>,
    #[serde(default)]
    split_writes: bool,
    content_type: Option<String>,
    fixture: Option<String>,
}

/// The status code of an HTML error page when the directive gives none.
const DEFAULT_HTML_ERROR_STATUS: u16 = 502;

impl Directive {
    /// The directive in `text`, if a line of it is one. An error explains a malformed one.
    pub(crate) fn find(text: &str) -> Result<Option<Directive>, String> {
        let mut lines = text.lines().filter_map(directive_json);
        let Some(json) = lines.next() else {
            return Ok(None);
        };
        if lines.next().is_some() {
            return Err("more than one MOCK directive line".to_owned());
        }
        let fields: Fields =
            serde_json::from_str(json).map_err(|error| format!("bad MOCK directive: {error}"))?;
        Directive::check(fields)
            .map(Some)
            .map_err(|problem| format!("bad MOCK directive: {problem}"))
    }

    fn check(fields: Fields) -> Result<Directive, String> {
        let mut faults = Vec::new();
        if fields.status.is_some() || fields.html_error {
            let code = fields.status.unwrap_or(DEFAULT_HTML_ERROR_STATUS);
            if !(400..=599).contains(&code) {
                return Err(format!("status {code} is not an error status (400..=599)"));
            }
            faults.push(Fault::Status {
                code,
                html: fields.html_error,
            });
        }
        if fields.drop {
            faults.push(Fault::Drop);
        }
        if fields.hang {
            faults.push(Fault::Hang);
        }
        faults.extend(fields.drop_after.map(Fault::DropAfter));
        faults.extend(fields.stall_after.map(Fault::StallAfter));
        faults.extend(fields.keepalive_after.map(Fault::KeepAliveAfter));
        faults.extend(fields.error_after.map(Fault::ErrorAfter));
        if fields.no_done {
            faults.push(Fault::NoDone);
        }
        faults.extend(fields.garbage.map(Fault::Garbage));
        if faults.len() > 1 {
            return Err(format!("at most one failure per directive, got {faults:?}"));
        }
        let fault = faults.pop();
        let scope = fields.on.unwrap_or_default();
        if fields.times.is_some() && fault.is_none() {
            return Err("`times` needs a failure to count".to_owned());
        }
        if fault.as_ref().is_some_and(Fault::streams_only) && scope != Scope::Chat {
            return Err(
                "drop_after, stall_after, keepalive_after, error_after and no_done apply to chat streams only"
                    .to_owned(),
            );
        }
        if fields.reply.is_some() && fields.chunks.is_some() {
            return Err("give `reply` or `chunks`, not both".to_owned());
        }
        let fixture = match fields.fixture.as_deref() {
            Some(name) => Some(fixtures::find(name).ok_or_else(|| {
                format!("unknown fixture `{name}`; known: {}", fixtures::names())
            })?),
            None => None,
        };
        let tool_calls = fields.tool_calls.unwrap_or_default();
        if fixture.is_some() {
            let generated = fields.chunks.is_some()
                || fields.leak.is_some()
                || !tool_calls.is_empty()
                || fields.reasoning.is_some()
                || fields.usage
                || fields.content_type.is_some();
            if generated || fault.as_ref().is_some_and(Fault::streams_only) {
                return Err(
                    "`fixture` replaces the generated stream: give only `reply`, \
                     `tool_rounds`, pacing or a failure outside the stream with it"
                        .to_owned(),
                );
            }
        }
        if tool_calls.is_empty() && fixture.is_none() && fields.tool_rounds.is_some() {
            return Err("`tool_rounds` needs `tool_calls` or `fixture`".to_owned());
        }
        if tool_calls.is_empty() && fields.repeat_ids {
            return Err("`repeat_ids` needs `tool_calls`".to_owned());
        }
        if fields.repeat == Some(0) {
            return Err("`repeat` must be at least 1".to_owned());
        }
        if fields.leak_always && fields.leak.is_none() {
            return Err("`leak_always` needs `leak`".to_owned());
        }
        if fields.reasoning_field.is_some() && fields.reasoning.is_none() {
            return Err("`reasoning_field` needs `reasoning`".to_owned());
        }
        Ok(Directive {
            fault,
            times: fields.times,
            scope,
            reply: fields.reply,
            chunks: fields.chunks,
            repeat: fields.repeat.unwrap_or(1),
            reasoning: fields.reasoning,
            reasoning_field: fields.reasoning_field.unwrap_or_default(),
            usage: fields.usage,
            refuse_stream_options: fields.refuse_stream_options,
            tool_calls,
            tool_rounds: fields.tool_rounds.unwrap_or(1),
            repeat_ids: fields.repeat_ids,
            leak: fields.leak,
            leak_always: fields.leak_always,
            token_delay: fields.token_delay_ms.map(Duration::from_millis),
            split_writes: fields.split_writes,
            content_type: fields.content_type,
            fixture,
        })
    }

    /// Whether the failure and wire shape of this directive target `endpoint`.
    pub(crate) fn targets(&self, endpoint: Endpoint) -> bool {
        matches!(
            (self.scope, endpoint),
            (Scope::Both, Endpoint::Chat | Endpoint::Embeddings)
                | (Scope::Chat, Endpoint::Chat)
                | (Scope::Embeddings, Endpoint::Embeddings)
                | (Scope::Rerank, Endpoint::Rerank)
        )
    }

    /// The fault to inject into attempt `attempt` (1-based) of a request to `endpoint`.
    pub(crate) fn fault_for(&self, endpoint: Endpoint, attempt: u32) -> Option<&Fault> {
        let counted_in = self.times.is_none_or(|times| attempt <= times);
        self.fault
            .as_ref()
            .filter(|_| counted_in && self.targets(endpoint))
    }
}

/// The JSON text of a directive line.
fn directive_json(line: &str) -> Option<&str> {
    line.trim_start().strip_prefix(PREFIX)
}

/// `text` without its directive lines (and without the trailing whitespace they leave).
pub(crate) fn strip(text: &str) -> String {
    let kept: Vec<&str> = text
        .lines()
        .filter(|line| directive_json(line).is_none())
        .collect();
    kept.join("\n").trim_end().to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<Option<Directive>, String> {
        Directive::find(text)
    }

    #[test]
    fn text_without_a_directive_has_none() {
        assert_eq!(parse("What is MOCK?\nA MOCK {\"a\":1} in a line"), Ok(None));
    }

    #[test]
    fn a_directive_line_is_parsed_and_stripped() {
        let text = "What is bor?\nMOCK {\"status\":503,\"times\":2}";
        let directive = parse(text).unwrap().unwrap();
        assert_eq!(
            directive.fault,
            Some(Fault::Status {
                code: 503,
                html: false
            })
        );
        assert_eq!(directive.times, Some(2));
        assert_eq!(strip(text), "What is bor?");
    }

    #[test]
    fn faults_count_attempts_and_respect_the_scope() {
        let directive = parse("MOCK {\"drop\":true,\"times\":2}").unwrap().unwrap();
        assert!(directive.fault_for(Endpoint::Chat, 1).is_some());
        assert!(directive.fault_for(Endpoint::Chat, 2).is_some());
        assert!(directive.fault_for(Endpoint::Chat, 3).is_none());
        assert!(directive.fault_for(Endpoint::Embeddings, 1).is_none());
        let always = parse("MOCK {\"hang\":true,\"on\":\"both\"}")
            .unwrap()
            .unwrap();
        assert!(always.fault_for(Endpoint::Embeddings, 99).is_some());
        assert!(always.fault_for(Endpoint::Chat, 99).is_some());
    }

    #[test]
    fn mistakes_are_refused_with_an_explanation() {
        let cases = [
            ("MOCK {\"stauts\":503}", "unknown field `stauts`"),
            ("MOCK {\"status\":503", "EOF"),
            ("MOCK {\"status\":200}", "not an error status"),
            ("MOCK {\"drop\":true,\"hang\":true}", "at most one failure"),
            ("MOCK {\"times\":1}", "`times` needs a failure"),
            (
                "MOCK {\"no_done\":true,\"on\":\"both\"}",
                "chat streams only",
            ),
            ("MOCK {\"reply\":\"a\",\"chunks\":[\"b\"]}", "not both"),
            ("MOCK {\"repeat_ids\":true}", "needs `tool_calls`"),
            (
                "MOCK {\"tool_rounds\":2}",
                "needs `tool_calls` or `fixture`",
            ),
            (
                "MOCK {\"fixture\":\"nope\"}",
                "unknown fixture `nope`; known: openai-text",
            ),
            (
                "MOCK {\"fixture\":\"openai-text\",\"chunks\":[\"a\"]}",
                "replaces the generated stream",
            ),
            (
                "MOCK {\"fixture\":\"openai-text\",\"drop_after\":1}",
                "replaces the generated stream",
            ),
            ("MOCK {\"leak_always\":true}", "needs `leak`"),
            ("MOCK {\"repeat\":0}", "at least 1"),
            (
                "MOCK {\"reasoning_field\":\"reasoning\"}",
                "needs `reasoning`",
            ),
            ("MOCK {\"garbage\":\"noise\"}", "unknown variant"),
            ("MOCK {}\nMOCK {}", "more than one"),
        ];
        for (text, expected) in cases {
            let error = parse(text).unwrap_err();
            assert!(error.contains(expected), "{text}: {error}");
        }
    }

    #[test]
    fn a_fixture_is_found_by_name_and_counts_tool_rounds() {
        let directive =
            parse("MOCK {\"fixture\":\"ollama-tool-call\",\"tool_rounds\":2,\"reply\":\"ok\"}")
                .unwrap()
                .unwrap();
        assert_eq!(directive.fixture.map(|f| f.name), Some("ollama-tool-call"));
        assert_eq!(directive.tool_rounds, 2);
        assert_eq!(directive.reply.as_deref(), Some("ok"));
    }

    #[test]
    fn html_errors_default_to_a_bad_gateway() {
        let directive = parse("MOCK {\"html_error\":true}").unwrap().unwrap();
        assert_eq!(
            directive.fault,
            Some(Fault::Status {
                code: 502,
                html: true
            })
        );
    }
}
