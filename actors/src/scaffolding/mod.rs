//! The streaming scaffolding filter (docs/PROTOCOL.md, "Scaffolding guardrail";
//! every format: docs/SCAFFOLDING.md): separates what a model said to the user from the
//! machinery around it — tool-call markup, reasoning, answer wrappers and
//! end-of-turn residue — while the content streams in.
//!
//! The filter decides text as soon as it can and holds back only what may still become a
//! marker, so its output does not depend on how the content was cut into chunks. The
//! markup it knows is the table in [`registry::FAMILIES`].
//!
//! Decisions beyond the table:
//! - Only tool-call markup counts as stripped (`stripped_chars`, `Stripped`). Reasoning
//!   tags, answer wrappers and turn framing are dropped silently, so a reply of reasoning
//!   and an end-of-turn token has nothing stripped.
//! - Markdown code is not markup: inside inline code (which ends at its closing backticks
//!   or at the end of the line) and inside fenced blocks nothing is removed, except that a
//!   ```` ``` ````/```` ```json ```` fence whose whole body is a call to one of bor's tools
//!   is a call.
//! - Models open fences right after their sentence: a tool-call fence (and a JSON call
//!   fence) counts after text on its line too, when nothing follows its info string;
//!   backticks followed by more text on the line are inline code.
//! - Whitespace right after removed markup is dropped while nothing visible has been sent
//!   yet, so an answer does not start with the blank lines that followed its reasoning.
//! - Reasoning runs to its closer: markup inside it stays in the reasoning text. The one
//!   exception is Kimi K2's tool-call section, which those models open from inside
//!   reasoning they never close: it ends the reasoning and is removed.
//! - Where a marker may start (line start, word start) is judged on the visible text:
//!   markup removed just before it does not count.

mod calls;
mod matcher;
pub mod registry;
mod spans;
#[cfg(test)]
mod tests;
mod text;

use calls::CallScan;

/// One decided piece of a model's content stream, in order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FilterEvent {
    /// Text the user should see (goes out as a `delta` frame).
    Visible(String),
    /// Reasoning text (goes out as a `thinking` frame).
    Thinking(String),
    /// A removed markup span (opener to closer, as the model wrote it), for the WARN log.
    Stripped(String),
}

/// The streaming filter of one chat request (a fresh one per request).
#[derive(Debug)]
pub struct ScaffoldingFilter {
    /// Content received and not yet turned into events, from `pos` on; what lies before
    /// `pos` is decided and is dropped from the buffer after each call.
    buf: String,
    pos: usize,
    state: State,
    tools: Box<[Box<str>]>,
    /// The visible text sent so far, as far as position rules need it.
    before: Before,
    /// Nothing but whitespace has been read yet (markers that only count at the start of
    /// a message are still possible).
    fresh: bool,
    /// A call recogniser rejected the text starting here: only code markup may start at it.
    not_call_at: Option<usize>,
    visible: VisibleText,
    stripped_chars: usize,
    stripped_spans: Vec<String>,
}

/// Where the filter is in the content.
#[derive(Debug, Default)]
enum State {
    /// Answer text.
    #[default]
    Text,
    /// Inside inline code opened by this many backticks.
    InlineCode { ticks: usize },
    /// Inside a fenced code block opened by `len` times the byte `fence`.
    Fence {
        fence: u8,
        len: usize,
        line_start: bool,
    },
    /// Inside the span of a tool-call or reasoning family (index in `FAMILIES`); `markup`
    /// gathers a tool-call span as written.
    Span { family: usize, markup: String },
    /// Holding text from `pos` that may be a call to one of bor's tools.
    Candidate {
        family: usize,
        opener_len: usize,
        scan: Box<CallScan>,
    },
}

/// What a step of the state machine leaves to do.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Flow {
    /// Take another step.
    Continue,
    /// Everything that can be decided is decided: wait for more content.
    Wait,
}

/// The end of the visible text sent so far (markup removed from it does not count:
/// position rules follow what the reader sees).
#[derive(Debug)]
struct Before {
    last_byte: Option<u8>,
    /// It ends at the start of a line, possibly followed by spaces or tabs.
    at_line_start: bool,
}

/// Whitespace tidying of the visible text.
#[derive(Debug)]
struct VisibleText {
    /// Something other than whitespace has been made visible.
    started: bool,
    /// Markup was removed before the answer started: drop the whitespace that follows it.
    trim_leading: bool,
}

impl ScaffoldingFilter {
    /// `tool_names`: the names of bor's tools; brace-only and call-syntax formats are
    /// removed only when they name one of these.
    /// `thinking_forced_open`: content is reasoning until the first `</think>`.
    pub fn new(tool_names: &[&str], thinking_forced_open: bool) -> Self {
        let state = if thinking_forced_open {
            State::Span {
                family: registry::FORCED_OPEN_FAMILY,
                markup: String::new(),
            }
        } else {
            State::Text
        };
        ScaffoldingFilter {
            buf: String::new(),
            pos: 0,
            state,
            tools: tool_names.iter().map(|name| Box::from(*name)).collect(),
            before: Before {
                last_byte: None,
                at_line_start: true,
            },
            fresh: !thinking_forced_open,
            not_call_at: None,
            visible: VisibleText {
                started: false,
                trim_leading: thinking_forced_open,
            },
            stripped_chars: 0,
            stripped_spans: Vec::new(),
        }
    }

    /// Feeds the next piece of content as it arrived; appends decided events to `out`.
    pub fn push(&mut self, chunk: &str, out: &mut Vec<FilterEvent>) {
        self.buf.push_str(chunk);
        self.run(false, out);
        self.drop_decided();
    }

    /// End of stream: releases held-back text and drops an unterminated span.
    pub fn finish(&mut self, out: &mut Vec<FilterEvent>) {
        self.run(true, out);
        if let State::Span { markup, .. } = std::mem::take(&mut self.state)
            && !markup.is_empty()
        {
            self.strip(markup, out);
        }
        self.drop_decided();
    }

    /// Unicode scalar values of removed markup so far (reasoning is not counted). A span
    /// still open counts once it closes or the stream ends.
    pub fn stripped_chars(&self) -> usize {
        self.stripped_chars
    }

    /// The removed spans so far.
    pub fn stripped_spans(&self) -> &[String] {
        &self.stripped_spans
    }

    fn run(&mut self, at_end: bool, out: &mut Vec<FilterEvent>) {
        loop {
            let (state, flow) = match std::mem::take(&mut self.state) {
                State::Text => self.text_step(at_end, out),
                State::InlineCode { ticks } => self.inline_code_step(ticks, at_end, out),
                State::Fence {
                    fence,
                    len,
                    line_start,
                } => self.fence_step(fence, len, line_start, at_end, out),
                State::Span { family, markup } => self.span_step(family, markup, at_end, out),
                State::Candidate {
                    family,
                    opener_len,
                    scan,
                } => self.candidate_step(family, opener_len, scan, at_end, out),
            };
            self.state = state;
            if flow == Flow::Wait {
                return;
            }
        }
    }

    /// Drops the decided content from the buffer.
    fn drop_decided(&mut self) {
        self.buf.drain(..self.pos);
        self.not_call_at = self.not_call_at.and_then(|at| at.checked_sub(self.pos));
        self.pos = 0;
    }

    /// Makes `buf[pos..end]` visible.
    fn visible_to(&mut self, end: usize, out: &mut Vec<FilterEvent>) {
        let mut text = &self.buf[self.pos..end];
        self.pos = end;
        if let Some(&last) = text.as_bytes().last() {
            self.before.last_byte = Some(last);
            if let Some(at) = text.bytes().rposition(|byte| !matches!(byte, b' ' | b'\t')) {
                self.before.at_line_start = text.as_bytes()[at] == b'\n';
            }
        }
        if self.visible.trim_leading {
            text = text.trim_start();
        }
        if text.is_empty() {
            return;
        }
        if !self.visible.started && !text.trim_start().is_empty() {
            self.visible.started = true;
            self.visible.trim_leading = false;
        }
        match out.last_mut() {
            Some(FilterEvent::Visible(last)) => last.push_str(text),
            _ => out.push(FilterEvent::Visible(text.to_owned())),
        }
    }

    /// Sends `buf[pos..end]` out as reasoning.
    fn thinking_to(&mut self, end: usize, out: &mut Vec<FilterEvent>) {
        let text = &self.buf[self.pos..end];
        self.pos = end;
        if text.is_empty() {
            return;
        }
        match out.last_mut() {
            Some(FilterEvent::Thinking(last)) => last.push_str(text),
            _ => out.push(FilterEvent::Thinking(text.to_owned())),
        }
    }

    /// Notes that markup was removed (or routed to reasoning).
    fn removed(&mut self) {
        if !self.visible.started {
            self.visible.trim_leading = true;
        }
    }

    /// Removes a tool-call span: counted, kept, reported.
    fn strip(&mut self, span: String, out: &mut Vec<FilterEvent>) {
        self.stripped_chars += span.chars().count();
        out.push(FilterEvent::Stripped(span.clone()));
        self.stripped_spans.push(span);
        self.removed();
    }

    /// Removes `buf[pos..end]` as a tool-call span.
    fn strip_to(&mut self, end: usize, out: &mut Vec<FilterEvent>) {
        let span = self.buf[self.pos..end].to_owned();
        self.pos = end;
        self.strip(span, out);
    }
}
