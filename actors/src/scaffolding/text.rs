//! Answer text: scanning for trigger bytes and deciding what starts at each.

use super::calls::{CallScan, Verdict};
use super::matcher::{Marker, TABLES};
use super::registry::{End, FAMILIES, Position, Role};
use super::{FilterEvent, Flow, ScaffoldingFilter, State};

/// What the text at a trigger byte turned out to be.
enum Decision {
    /// Plain text: scanning goes on here.
    Text(usize),
    /// It may still become markup: hold the text from here back.
    Hold(usize),
    /// Markup (or code) starting here.
    Act { start: usize, action: Action },
}

enum Action {
    /// Drop the marker ending here (framing, wrapper tags, lone reasoning closers).
    Drop { end: usize },
    /// Remove the tool-call markup ending here.
    Strip { end: usize },
    /// Enter the family's span; its opener ends here.
    Span { family: usize, end: usize },
    /// Hold the text while the recogniser decides whether it is a call.
    Candidate {
        family: usize,
        opener_len: usize,
        scan: Box<CallScan>,
    },
    /// Code markup: visible up to `end`, then `state`.
    Code { end: usize, state: State },
}

/// Whether a marker matches at a position.
enum Match {
    No,
    /// Only a part of it has arrived.
    Partial,
    Yes(Action),
}

impl ScaffoldingFilter {
    pub(super) fn text_step(&mut self, at_end: bool, out: &mut Vec<FilterEvent>) -> (State, Flow) {
        if self.fresh
            && let Some(decision) = self.message_start(at_end)
            && let Err(step) = self.decide(decision, out)
        {
            return step;
        }
        let triggers = &TABLES.triggers;
        let mut from = self.pos;
        loop {
            let bytes = self.buf.as_bytes();
            let Some(offset) = bytes[from..]
                .iter()
                .position(|&byte| triggers[usize::from(byte)])
            else {
                break;
            };
            let decision = self.at_trigger(from + offset, at_end);
            match self.decide(decision, out) {
                Ok(next) => from = next,
                Err(step) => return step,
            }
        }
        let end = if at_end {
            self.buf.len()
        } else {
            TABLES.held_tail(self.buf.as_bytes(), self.pos)
        };
        self.visible_to(end, out);
        (State::Text, Flow::Wait)
    }

    /// Carries out a decision: `Ok` with where scanning goes on, or `Err` with the step's
    /// outcome.
    fn decide(
        &mut self,
        decision: Decision,
        out: &mut Vec<FilterEvent>,
    ) -> Result<usize, (State, Flow)> {
        let (start, action) = match decision {
            Decision::Text(next) => return Ok(next),
            Decision::Hold(from) => {
                self.visible_to(from, out);
                return Err((State::Text, Flow::Wait));
            }
            Decision::Act { start, action } => (start, action),
        };
        self.visible_to(start, out);
        self.fresh = false;
        let state = match action {
            Action::Drop { end } => {
                self.pos = end;
                self.removed();
                State::Text
            }
            Action::Strip { end } => {
                self.strip_to(end, out);
                State::Text
            }
            Action::Span { family, end } => {
                let markup = if FAMILIES[family].role == Role::ToolCall {
                    self.buf[start..end].to_owned()
                } else {
                    self.removed();
                    String::new()
                };
                self.pos = end;
                State::Span { family, markup }
            }
            Action::Candidate {
                family,
                opener_len,
                scan,
            } => State::Candidate {
                family,
                opener_len,
                scan,
            },
            Action::Code { end, state } => {
                self.visible_to(end, out);
                state
            }
        };
        Err((state, Flow::Continue))
    }

    /// At the first non-whitespace of the message: the markers that only count there.
    fn message_start(&mut self, at_end: bool) -> Option<Decision> {
        let bytes = self.buf.as_bytes();
        let first = self.pos
            + bytes[self.pos..]
                .iter()
                .position(|byte| !byte.is_ascii_whitespace())?;
        let rest = &self.buf[first..];
        for marker in &TABLES.message_start {
            let Position::MessageStart(followed_by) = FAMILIES[marker.family].at else {
                continue;
            };
            if !rest.as_bytes().starts_with(marker.text) {
                if !at_end && marker.text.starts_with(rest.as_bytes()) {
                    return Some(Decision::Hold(first));
                }
                continue;
            }
            let end = first + marker.text.len();
            match self.buf[end..].chars().next() {
                None if !at_end => return Some(Decision::Hold(first)),
                Some(next) if followed_by(next) => {
                    if let Some(action) =
                        self.marker_action(marker.family, marker.text, end, at_end)
                    {
                        return Some(Decision::Act {
                            start: first,
                            action,
                        });
                    }
                }
                _ => {}
            }
        }
        self.fresh = false;
        None
    }

    fn at_trigger(&self, trigger: usize, at_end: bool) -> Decision {
        let bytes = self.buf.as_bytes();
        if self.not_call_at != Some(trigger) {
            for marker in &TABLES.by_anchor[usize::from(bytes[trigger])] {
                let Some(start) = trigger.checked_sub(marker.anchor) else {
                    continue;
                };
                if start < self.pos {
                    continue;
                }
                match self.match_marker(marker, start, at_end) {
                    Match::No => {}
                    Match::Partial => return Decision::Hold(start),
                    Match::Yes(action) => return Decision::Act { start, action },
                }
            }
        }
        match bytes[trigger] {
            b'`' | b'~' => self.code_at(trigger, at_end),
            _ => Decision::Text(trigger + 1),
        }
    }

    fn match_marker(&self, marker: &Marker, start: usize, at_end: bool) -> Match {
        let bytes = self.buf.as_bytes();
        let family = &FAMILIES[marker.family];
        let text = marker.text;
        let arrived = text.len().min(bytes.len() - start);
        // Byte by byte: markers mostly differ within their first bytes.
        if !bytes[start..start + arrived]
            .iter()
            .zip(text)
            .all(|(a, b)| a == b)
        {
            return Match::No;
        }
        if !marker.lone_closer && !self.position_allows(family.at, start) {
            return Match::No;
        }
        if arrived < text.len() {
            return if at_end { Match::No } else { Match::Partial };
        }
        let end = start + text.len();
        if marker.lone_closer {
            return Match::Yes(if family.role == Role::ToolCall {
                Action::Strip { end }
            } else {
                Action::Drop { end }
            });
        }
        match family.at {
            Position::MessageEnd => {
                if !bytes[end..].iter().all(u8::is_ascii_whitespace) {
                    return Match::No;
                }
                if !at_end {
                    return Match::Partial;
                }
            }
            Position::FenceOpen if !self.at_line_start(start) => {
                match rest_of_line_is_blank(&bytes[end..]) {
                    Some(true) => {}
                    Some(false) => return Match::No,
                    None if at_end => return Match::No,
                    None => return Match::Partial,
                }
            }
            _ => {}
        }
        match self.marker_action(marker.family, text, end, at_end) {
            Some(action) => Match::Yes(action),
            None => Match::No,
        }
    }

    /// What the opener `text` of `FAMILIES[family]`, ending at `end`, starts; `None` when
    /// it is a call shape that names none of bor's tools.
    fn marker_action(
        &self,
        family: usize,
        text: &'static [u8],
        end: usize,
        at_end: bool,
    ) -> Option<Action> {
        match (FAMILIES[family].role, FAMILIES[family].end) {
            (_, End::Call(shape)) => {
                let mut scan = CallScan::new(shape, text);
                let verdict = match scan.feed(&self.buf.as_bytes()[end..], &self.tools) {
                    Verdict::Pending if at_end => scan.finish(),
                    verdict => verdict,
                };
                match verdict {
                    Verdict::Call(len) => Some(Action::Strip { end: end + len }),
                    Verdict::NotCall => None,
                    Verdict::Pending => Some(Action::Candidate {
                        family,
                        opener_len: text.len(),
                        scan: Box::new(scan),
                    }),
                }
            }
            (Role::ToolCall, End::Token) => Some(Action::Strip { end }),
            (Role::ToolCall | Role::Reasoning, End::Closers { .. } | End::EndOfMessage) => {
                Some(Action::Span { family, end })
            }
            (Role::Reasoning | Role::Answer | Role::Framing, _) => Some(Action::Drop { end }),
        }
    }

    fn position_allows(&self, position: Position, start: usize) -> bool {
        match position {
            Position::Anywhere | Position::MessageEnd => true,
            Position::WordStart => !self
                .byte_before(start)
                .is_some_and(|byte| byte.is_ascii_alphanumeric() || byte == b'_'),
            Position::LineStart => self.at_line_start(start),
            // At a line start always; elsewhere decided once the opener has arrived.
            Position::FenceOpen => true,
            Position::MessageStart(_) => false,
        }
    }

    /// The visible byte before `at` (text from `pos` on is visible up to a marker).
    fn byte_before(&self, at: usize) -> Option<u8> {
        if at > self.pos {
            Some(self.buf.as_bytes()[at - 1])
        } else {
            self.before.last_byte
        }
    }

    /// Only spaces or tabs precede `at` on its visible line.
    fn at_line_start(&self, at: usize) -> bool {
        let before = &self.buf.as_bytes()[self.pos..at];
        match before
            .iter()
            .rposition(|byte| !matches!(byte, b' ' | b'\t'))
        {
            Some(last) => before[last] == b'\n',
            None => self.before.at_line_start,
        }
    }

    /// Backticks or tildes that no marker claimed: inline code, a code fence, or text. At
    /// the start of a line, three or more open a fence whatever follows on the line.
    fn code_at(&self, at: usize, at_end: bool) -> Decision {
        let bytes = self.buf.as_bytes();
        let fence = bytes[at];
        let run = bytes[at..]
            .iter()
            .take_while(|&&byte| byte == fence)
            .count();
        let after = at + run;
        if after == bytes.len() && !at_end {
            return Decision::Hold(at);
        }
        if run >= 3 && self.at_line_start(at) {
            // The rest of the opening line (the info string) is part of the block.
            let state = State::Fence {
                fence,
                len: run,
                line_start: false,
            };
            return Decision::Act {
                start: at,
                action: Action::Code { end: after, state },
            };
        }
        if fence == b'`' {
            let state = State::InlineCode { ticks: run };
            return Decision::Act {
                start: at,
                action: Action::Code { end: after, state },
            };
        }
        Decision::Text(after)
    }
}

/// Whether nothing but spaces, tabs and carriage returns come before the next newline;
/// `None` while no newline has arrived.
fn rest_of_line_is_blank(rest: &[u8]) -> Option<bool> {
    let blanks = rest
        .iter()
        .take_while(|byte| matches!(byte, b' ' | b'\t' | b'\r'))
        .count();
    rest.get(blanks).map(|&byte| byte == b'\n')
}
