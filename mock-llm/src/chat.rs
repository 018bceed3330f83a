//! `POST /v1/chat/completions`: the default answer, directives, and OpenAI streaming.

use std::time::Duration;

use serde_json::{Value, json};

use crate::chunks::{Answer, AnswerBody, Completion, DONE, StreamParts, ToolCall};
use crate::config::Config;
use crate::directive::{self, Directive, Endpoint, Fault, Garbage};
use crate::reply::{EventStream, Reply, Response, StreamEnd};
use crate::text::{tokens, words};
use crate::wire;

/// The phrase of bor's correction instruction: a system message that contains it marks
/// the recovery request, which no longer gets `leak` text.
const CORRECTION_PHRASE: &str = "raw tool-call markup";

/// Words of the question quoted by the default answer.
const QUOTED_WORDS: usize = 12;

pub(crate) fn respond(config: &Config, body: &Value, body_hash: u64, attempt: u32) -> Response {
    let Some(messages) = body.get("messages").and_then(Value::as_array) else {
        return Reply::error(400, "`messages` must be an array").into();
    };
    let question = messages
        .iter()
        .rev()
        .find(|message| message["role"] == "user")
        .map(message_text)
        .unwrap_or_default();
    let directive = match Directive::find(&question) {
        Ok(directive) => directive,
        Err(problem) => return Reply::error(400, problem).into(),
    };
    let streaming = body.get("stream").and_then(Value::as_bool) == Some(true);
    let completion = Completion {
        id: format!("chatcmpl-{body_hash:016x}"),
        model: body
            .get("model")
            .and_then(Value::as_str)
            .unwrap_or(&config.chat_model),
        prompt_tokens: messages.iter().map(|m| words(&message_text(m)).len()).sum(),
    };
    // No directive answers like an empty one: the default text, no failure.
    let directive = directive.unwrap_or_default();
    if directive.refuse_stream_options && body.get("stream_options").is_some() {
        return Reply::error(
            400,
            "Unrecognized request argument supplied: stream_options",
        )
        .into();
    }
    let with_usage =
        directive.usage || body["stream_options"]["include_usage"].as_bool() == Some(true);
    let answer = directed_answer(&directive, &question, messages, body);
    let fault = directive.fault_for(Endpoint::Chat, attempt);
    let replay = directive
        .fixture
        .filter(|_| tool_rounds_done(messages) < directive.tool_rounds);
    if !streaming {
        if replay.is_some() {
            return Reply::error(400, "bad MOCK directive: fixtures need `stream: true`").into();
        }
        if directive.fault.as_ref().is_some_and(Fault::streams_only) {
            return Reply::error(
                400,
                "bad MOCK directive: stream failures need `stream: true`",
            )
            .into();
        }
        let whole = Reply::json(200, &completion.whole(&answer));
        return wire::shape(&directive, Endpoint::Chat, attempt, whole);
    }
    let token_delay = directive.token_delay.unwrap_or(config.token_delay);
    let reply = match fault {
        Some(Fault::Garbage(kind)) => garbage_stream(&completion, *kind),
        Some(fault) => wire::fault_reply(fault).unwrap_or_else(|| {
            stream_reply(&completion, &answer, with_usage, Some(fault), token_delay)
        }),
        None => match replay {
            Some(fixture) => fixture.replay(token_delay),
            None => stream_reply(&completion, &answer, with_usage, None, token_delay),
        },
    };
    wire::on_the_wire(&directive, Endpoint::Chat, reply)
}

/// The text of a message: its `content` string, or the text parts of a content array.
fn message_text(message: &Value) -> String {
    match &message["content"] {
        Value::String(text) => text.clone(),
        Value::Array(parts) => parts
            .iter()
            .filter_map(|part| part["text"].as_str())
            .collect::<Vec<_>>()
            .join("\n"),
        _ => String::new(),
    }
}

/// `Mock answer: ` and the first words of the question without its directive line, as
/// tokens.
fn default_text(question: &str) -> Vec<String> {
    let question = directive::strip(question);
    let quoted: Vec<&str> = question.split_whitespace().take(QUOTED_WORDS).collect();
    if quoted.is_empty() {
        tokens("Mock answer: nothing was asked.")
    } else {
        tokens(&format!("Mock answer: {}", quoted.join(" ")))
    }
}

fn directed_answer(
    directive: &Directive,
    question: &str,
    messages: &[Value],
    body: &Value,
) -> Answer {
    let offers_tools = body
        .get("tools")
        .and_then(Value::as_array)
        .is_some_and(|tools| !tools.is_empty());
    let tool_rounds_done = tool_rounds_done(messages);
    let reasoning = directive
        .reasoning
        .as_deref()
        .map(tokens)
        .unwrap_or_default();
    let answer = |body| Answer {
        reasoning: reasoning.clone(),
        reasoning_field: directive.reasoning_field,
        body,
    };
    if offers_tools && !directive.tool_calls.is_empty() && tool_rounds_done < directive.tool_rounds
    {
        let calls = directive
            .tool_calls
            .iter()
            .enumerate()
            .map(|(index, spec)| ToolCall {
                id: format!("call_{tool_rounds_done}_{index}"),
                name: spec.name.clone(),
                arguments: match &spec.arguments {
                    Value::String(text) => text.clone(),
                    other => other.to_string(),
                },
            })
            .collect();
        return answer(AnswerBody::ToolCalls {
            calls,
            repeat_ids: directive.repeat_ids,
        });
    }
    let corrected = messages.iter().any(|message| {
        message["role"] == "system" && message_text(message).contains(CORRECTION_PHRASE)
    });
    let text = match (&directive.leak, &directive.chunks, &directive.reply) {
        (Some(leak), _, _) if directive.leak_always || !corrected => tokens(leak),
        (_, Some(chunks), _) => chunks.clone(),
        (_, _, Some(reply)) => tokens(reply),
        _ => default_text(question),
    };
    let text = if directive.repeat > 1 {
        let tokens = text.len() * directive.repeat;
        text.into_iter().cycle().take(tokens).collect()
    } else {
        text
    };
    answer(AnswerBody::Text(text))
}

/// Assistant messages with tool calls in the request: the tool rounds already done.
fn tool_rounds_done(messages: &[Value]) -> usize {
    messages
        .iter()
        .filter(|message| {
            message["role"] == "assistant"
                && message["tool_calls"]
                    .as_array()
                    .is_some_and(|calls| !calls.is_empty())
        })
        .count()
}

/// The answer as an event stream, cut as `fault` asks.
fn stream_reply(
    completion: &Completion,
    answer: &Answer,
    with_usage: bool,
    fault: Option<&Fault>,
    token_delay: Duration,
) -> Reply {
    let StreamParts { role, pieces, tail } = completion.stream(answer, with_usage);
    let first = |count: usize| pieces.iter().take(count).cloned();
    let mut events = vec![role];
    let end = match fault {
        Some(Fault::DropAfter(count)) => {
            events.extend(first(*count));
            StreamEnd::Break
        }
        Some(Fault::StallAfter(count)) => {
            events.extend(first(*count));
            StreamEnd::Stall
        }
        Some(Fault::KeepAliveAfter(count)) => {
            events.extend(first(*count));
            StreamEnd::KeepAlive
        }
        Some(Fault::ErrorAfter(count)) => {
            events.extend(first(*count));
            let error = json!({"error": {
                "message": format!("mock failure after {count} chunks as the MOCK directive asked"),
                "type": "server_error",
                "param": null,
                "code": 500,
            }});
            events.push(format!("data: {error}\n\n"));
            events.push(DONE.to_owned());
            StreamEnd::Complete
        }
        Some(Fault::NoDone) => {
            events.extend(pieces.iter().chain(&tail).cloned());
            StreamEnd::Complete
        }
        _ => {
            events.extend(pieces.iter().chain(&tail).cloned());
            events.push(DONE.to_owned());
            StreamEnd::Complete
        }
    };
    Reply::Stream(EventStream {
        content_type: "text/event-stream".to_owned(),
        events,
        end,
        token_delay,
    })
}

/// A 200 stream that a client cannot use as a chat completion.
fn garbage_stream(completion: &Completion, kind: Garbage) -> Reply {
    let events = match kind {
        Garbage::InvalidJson => vec![
            "data: {not json}\n\n".to_owned(),
            "data: {\"choices\": [{\"delta\": \n\n".to_owned(),
            "data: ]]\n\n".to_owned(),
            DONE.to_owned(),
        ],
        Garbage::HugeLine => {
            let content = "x".repeat(wire::HUGE_LINE_BYTES);
            vec![
                completion.delta(json!({"role": "assistant"})),
                completion.delta(json!({"content": content})),
                completion.event(
                    json!([{"index": 0, "delta": {}, "logprobs": null, "finish_reason": "stop"}]),
                    None,
                ),
                DONE.to_owned(),
            ]
        }
        Garbage::Html => return Reply::html(200, wire::HTML_PAGE.to_owned()),
    };
    Reply::Stream(EventStream {
        content_type: "text/event-stream".to_owned(),
        events,
        end: StreamEnd::Complete,
        token_delay: Duration::ZERO,
    })
}
