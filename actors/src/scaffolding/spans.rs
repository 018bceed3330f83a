//! The states inside something: inline code, a code fence, a markup span, a possible call.

use super::calls::{CallScan, Verdict};
use super::matcher::{SpanEndKind, TABLES};
use super::registry::{End, FAMILIES, Role};
use super::{FilterEvent, Flow, ScaffoldingFilter, State};

/// Whether a line closes a code fence.
enum FenceLine {
    /// Yes; the closing line is this long (its newline included).
    Closes(usize),
    No,
    /// The line has not arrived far enough to tell.
    Undecided,
}

impl ScaffoldingFilter {
    pub(super) fn inline_code_step(
        &mut self,
        ticks: usize,
        at_end: bool,
        out: &mut Vec<FilterEvent>,
    ) -> (State, Flow) {
        let bytes = self.buf.as_bytes();
        let Some(offset) = memchr::memchr2(b'`', b'\n', &bytes[self.pos..]) else {
            self.visible_to(bytes.len(), out);
            return (State::InlineCode { ticks }, Flow::Wait);
        };
        let at = self.pos + offset;
        if bytes[at] == b'\n' {
            self.visible_to(at + 1, out);
            return (State::Text, Flow::Continue);
        }
        let run = bytes[at..].iter().take_while(|&&byte| byte == b'`').count();
        if at + run == bytes.len() && !at_end {
            self.visible_to(at, out);
            return (State::InlineCode { ticks }, Flow::Wait);
        }
        self.visible_to(at + run, out);
        if run == ticks {
            (State::Text, Flow::Continue)
        } else {
            (State::InlineCode { ticks }, Flow::Continue)
        }
    }

    pub(super) fn fence_step(
        &mut self,
        fence: u8,
        len: usize,
        mut line_start: bool,
        at_end: bool,
        out: &mut Vec<FilterEvent>,
    ) -> (State, Flow) {
        let wait = |line_start| {
            (
                State::Fence {
                    fence,
                    len,
                    line_start,
                },
                Flow::Wait,
            )
        };
        loop {
            let rest = &self.buf.as_bytes()[self.pos..];
            if rest.is_empty() {
                return wait(line_start);
            }
            if line_start {
                match closing_fence(rest, fence, len, at_end) {
                    FenceLine::Closes(line) => {
                        self.visible_to(self.pos + line, out);
                        return (State::Text, Flow::Continue);
                    }
                    FenceLine::Undecided => return wait(true),
                    FenceLine::No => {}
                }
            }
            let Some(offset) = memchr::memchr(b'\n', rest) else {
                self.visible_to(self.buf.len(), out);
                return wait(false);
            };
            self.visible_to(self.pos + offset + 1, out);
            line_start = true;
        }
    }

    pub(super) fn span_step(
        &mut self,
        family: usize,
        mut markup: String,
        at_end: bool,
        out: &mut Vec<FilterEvent>,
    ) -> (State, Flow) {
        let is_tool = FAMILIES[family].role == Role::ToolCall;
        if let End::EndOfMessage = FAMILIES[family].end {
            self.span_content_to(self.buf.len(), is_tool, &mut markup, out);
            return (State::Span { family, markup }, Flow::Wait);
        }
        let ends = &TABLES.span_ends[family];
        let mut from = self.pos;
        'candidates: loop {
            let bytes = self.buf.as_bytes();
            let Some(offset) = ends.next_candidate(&bytes[from..]) else {
                self.span_content_to(bytes.len(), is_tool, &mut markup, out);
                return (State::Span { family, markup }, Flow::Wait);
            };
            let at = from + offset;
            let arrived = &bytes[at..];
            for &(text, kind) in &ends.ends {
                if !(arrived.starts_with(text) || (!at_end && text.starts_with(arrived))) {
                    continue;
                }
                let complete = arrived.len() >= text.len();
                self.span_content_to(at, is_tool, &mut markup, out);
                if !complete {
                    return (State::Span { family, markup }, Flow::Wait);
                }
                match kind {
                    SpanEndKind::Nested => {
                        self.pos = at + text.len();
                        from = self.pos;
                        continue 'candidates;
                    }
                    SpanEndKind::Close => {
                        if is_tool {
                            markup.push_str(&self.buf[at..at + text.len()]);
                        }
                        self.pos = at + text.len();
                    }
                    SpanEndKind::Stop => {}
                }
                if is_tool {
                    self.strip(markup, out);
                }
                return (State::Text, Flow::Continue);
            }
            from = at + 1;
        }
    }

    /// Consumes `buf[pos..end]` as span content: tool-call markup, or reasoning.
    fn span_content_to(
        &mut self,
        end: usize,
        is_tool: bool,
        markup: &mut String,
        out: &mut Vec<FilterEvent>,
    ) {
        if is_tool {
            markup.push_str(&self.buf[self.pos..end]);
            self.pos = end;
        } else {
            self.thinking_to(end, out);
        }
    }

    pub(super) fn candidate_step(
        &mut self,
        family: usize,
        opener_len: usize,
        mut scan: Box<CallScan>,
        at_end: bool,
        out: &mut Vec<FilterEvent>,
    ) -> (State, Flow) {
        let call_start = self.pos + opener_len;
        let verdict = match scan.feed(&self.buf.as_bytes()[call_start..], &self.tools) {
            Verdict::Pending if at_end => scan.finish(),
            verdict => verdict,
        };
        match verdict {
            Verdict::Pending => (
                State::Candidate {
                    family,
                    opener_len,
                    scan,
                },
                Flow::Wait,
            ),
            Verdict::Call(len) => {
                self.strip_to(call_start + len, out);
                (State::Text, Flow::Continue)
            }
            Verdict::NotCall => {
                self.not_call_at = Some(self.pos);
                (State::Text, Flow::Continue)
            }
        }
    }
}

/// Whether `line` (from the start of a line in a fence) closes a fence of `len` × `fence`.
fn closing_fence(line: &[u8], fence: u8, len: usize, at_end: bool) -> FenceLine {
    let is_blank = |byte: &u8| matches!(byte, b' ' | b'\t' | b'\r');
    let indent = line.iter().take_while(|byte| is_blank(byte)).count();
    let run = line[indent..]
        .iter()
        .take_while(|&&byte| byte == fence)
        .count();
    let trailing = line[indent + run..]
        .iter()
        .take_while(|byte| is_blank(byte))
        .count();
    let end = indent + run + trailing;
    match line.get(end) {
        None if !at_end => FenceLine::Undecided,
        None if run >= len => FenceLine::Closes(end),
        Some(b'\n') if run >= len => FenceLine::Closes(end + 1),
        _ => FenceLine::No,
    }
}
