//! Recognisers for the call-syntax formats that are markup only when they name one of
//! bor's tools (`{"name": …}`, `[N(…)]`, `call:N{…}`, a fenced JSON call).
//!
//! Each shape is a small program of [`Op`]s run byte by byte by [`CallScan`], which keeps
//! its place between chunks, so held-back text is never scanned twice.

use super::registry::CallShape;

/// One step of a recogniser program.
#[derive(Debug, Clone, Copy)]
enum Op {
    /// Any amount of ASCII whitespace.
    Ws,
    /// Any amount of spaces, tabs and carriage returns.
    Blanks,
    /// Exactly these bytes.
    Lit(&'static [u8]),
    /// An identifier that is one of bor's tool names.
    ToolName,
    /// Marks the call as recognised: cut off by the end of the message, it is still a call.
    Confirm,
    /// Right after an opening bracket: everything up to the matching closing bracket, with
    /// strings in the given quote bytes skipped.
    Balanced { quotes: &'static [u8] },
    /// `then` if the next byte is `byte`, else `otherwise` (the byte is not consumed).
    Peek {
        byte: u8,
        then: &'static [Op],
        otherwise: &'static [Op],
    },
    /// Another program, inline.
    Sub(&'static [Op]),
    /// Items separated by commas (whitespace allowed around them), up to `close`.
    List { item: &'static [Op], close: u8 },
    /// A newline, or the end of the message.
    EolOrEnd,
    /// The next byte, if any, is not this one (not consumed).
    NotFollowedBy(u8),
    /// The closing tag of the opener (`</t>` after `<t>`).
    ClosingTag,
}

use Op::{
    Balanced, Blanks, ClosingTag, Confirm, EolOrEnd, List, Lit, NotFollowedBy, Peek, Sub, ToolName,
    Ws,
};

/// A call object's members after `{"`: `name": N, "arguments"|"parameters": …}`.
const NAME_AND_ARGUMENTS: &[Op] = &[
    Lit(b"name\""),
    Ws,
    Lit(b":"),
    Ws,
    Lit(b"\""),
    ToolName,
    Lit(b"\""),
    Ws,
    Lit(b","),
    Ws,
    Lit(b"\""),
    Peek {
        byte: b'a',
        then: &[Lit(b"arguments\"")],
        otherwise: &[Lit(b"parameters\"")],
    },
    Ws,
    Lit(b":"),
    Confirm,
    Balanced { quotes: b"\"" },
];

/// `ype": "function", "name": …}` — Llama 3.x's typed call, after `{"t`.
const TYPED_CALL: &[Op] = &[
    Lit(b"ype\""),
    Ws,
    Lit(b":"),
    Ws,
    Lit(b"\"function\""),
    Ws,
    Lit(b","),
    Ws,
    Lit(b"\""),
    Sub(NAME_AND_ARGUMENTS),
];

/// A call object's members after its `{`.
const CALL_MEMBERS: &[Op] = &[
    Ws,
    Lit(b"\""),
    Peek {
        byte: b't',
        then: &[Lit(b"t"), Sub(TYPED_CALL)],
        otherwise: NAME_AND_ARGUMENTS,
    },
];

/// `{"name": …}`, a JSON call object.
const CALL_OBJECT: &[Op] = &[Lit(b"{"), Sub(CALL_MEMBERS)];

/// `ool_call": {…}}` or `ool_calls": [{…}, …]}` — a call object or a list of them in a
/// wrapper object, after `{"t`.
const WRAPPED_CALLS: &[Op] = &[
    Lit(b"ool_call"),
    Peek {
        byte: b's',
        then: &[
            Lit(b"s\""),
            Ws,
            Lit(b":"),
            Ws,
            Lit(b"["),
            List {
                item: CALL_OBJECT,
                close: b']',
            },
            Ws,
            Lit(b"}"),
        ],
        otherwise: &[
            Lit(b"\""),
            Ws,
            Lit(b":"),
            Ws,
            Sub(CALL_OBJECT),
            Ws,
            Lit(b"}"),
        ],
    },
];

/// A JSON call object after its `{`, or a wrapper object of calls.
const JSON_CALL: &[Op] = &[
    Ws,
    Lit(b"\""),
    Peek {
        byte: b't',
        then: &[
            Lit(b"t"),
            Peek {
                byte: b'y',
                then: TYPED_CALL,
                otherwise: WRAPPED_CALLS,
            },
        ],
        otherwise: NAME_AND_ARGUMENTS,
    },
];

/// `N(…)`, a pythonic call.
const PYTHONIC_CALL: &[Op] = &[
    ToolName,
    Blanks,
    Lit(b"("),
    Confirm,
    Balanced { quotes: b"\"'" },
];

/// One item of a call list: a JSON call object or a pythonic call.
const CALL_ITEM: &[Op] = &[Peek {
    byte: b'{',
    then: CALL_OBJECT,
    otherwise: PYTHONIC_CALL,
}];

/// `N{…}` — after `call:`.
const CALL_BRACES: &[Op] = &[ToolName, Lit(b"{"), Confirm, Balanced { quotes: b"\"" }];

/// `…]` — after the opening `[`.
const CALL_LIST: &[Op] = &[
    List {
        item: CALL_ITEM,
        close: b']',
    },
    NotFollowedBy(b'('),
];

/// `\n{call}\n```\n` or with a list of calls — after the backticks and the info string.
const JSON_FENCE: &[Op] = &[
    Blanks,
    Lit(b"\n"),
    Ws,
    Peek {
        byte: b'[',
        then: &[
            Lit(b"["),
            List {
                item: CALL_ITEM,
                close: b']',
            },
        ],
        otherwise: CALL_OBJECT,
    },
    Ws,
    Lit(b"```"),
    Blanks,
    EolOrEnd,
];

/// `{call}</t>` — after the tag `<t>`.
const TAGGED_JSON: &[Op] = &[Ws, Sub(CALL_OBJECT), Ws, ClosingTag];

/// `N<|message|>` — after `to=`.
const RECIPIENT: &[Op] = &[ToolName, Lit(b"<|message|>")];

/// `N\n{arguments}` after the `>>>` that marks a recipient.
const RECIPIENT_LINE: &[Op] = &[
    ToolName,
    Blanks,
    Lit(b"\n"),
    Ws,
    Lit(b"{"),
    Confirm,
    Balanced { quotes: b"\"" },
];

/// `N\n{arguments}` with nothing before it: the arguments must be a JSON object, empty
/// or opening with a key, so that a message that starts with a tool's name and goes on
/// with braces is left alone.
const RECIPIENT_LINE_AT_START: &[Op] = &[
    ToolName,
    Blanks,
    Lit(b"\n"),
    Ws,
    Lit(b"{"),
    Ws,
    Peek {
        byte: b'"',
        then: &[Confirm, Balanced { quotes: b"\"" }],
        otherwise: &[Confirm, Lit(b"}")],
    },
];

fn program(shape: CallShape) -> &'static [Op] {
    match shape {
        CallShape::JsonObject => JSON_CALL,
        CallShape::CallList => CALL_LIST,
        CallShape::CallBraces => CALL_BRACES,
        CallShape::JsonFence => JSON_FENCE,
        CallShape::TaggedJson => TAGGED_JSON,
        CallShape::Recipient => RECIPIENT,
        CallShape::RecipientLine => RECIPIENT_LINE,
        CallShape::RecipientLineAtStart => RECIPIENT_LINE_AT_START,
    }
}

/// What a recogniser has decided so far.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Verdict {
    /// Not decided yet: feed more.
    Pending,
    /// A call, this many bytes long (after the opener).
    Call(usize),
    /// Not a call to one of bor's tools.
    NotCall,
}

/// A place in a program.
#[derive(Debug, Clone, Copy)]
struct Frame {
    ops: &'static [Op],
    pc: usize,
    /// In a `List`: an item has been read and a comma or the close is expected.
    after_item: bool,
}

/// Outcome of offering one byte to the current op.
enum Offer {
    Consumed,
    /// The op finished without the byte: offer it to the next one.
    Passed,
    Failed,
}

/// How deeply programs may nest (the deepest, `JSON_FENCE`, needs 4: a sub-program in
/// last place replaces its finished parent).
const MAX_DEPTH: usize = 8;

const NO_FRAME: Frame = Frame {
    ops: &[],
    pc: 0,
    after_item: false,
};

/// A recogniser run, resumable across chunks.
#[derive(Debug)]
pub(super) struct CallScan {
    /// The program and the sub-programs it is in, outermost first.
    frames: [Frame; MAX_DEPTH],
    open_frames: usize,
    /// Bytes consumed so far.
    consumed: usize,
    confirmed: bool,
    /// The opener the call follows (for `ClosingTag`).
    opener: &'static [u8],
    /// Progress inside the current `Lit` or `ClosingTag`.
    literal_at: usize,
    /// Where the identifier of the current `ToolName` starts.
    name_start: Option<usize>,
    /// The current `Balanced`: bracket depth, open quote, and whether the last byte was a
    /// backslash inside that quote.
    depth: usize,
    quote: Option<u8>,
    escaped: bool,
}

impl CallScan {
    pub fn new(shape: CallShape, opener: &'static [u8]) -> Self {
        CallScan {
            opener,
            frames: [Frame {
                ops: program(shape),
                ..NO_FRAME
            }; MAX_DEPTH],
            open_frames: 1,
            consumed: 0,
            confirmed: false,
            literal_at: 0,
            name_start: None,
            depth: 1,
            quote: None,
            escaped: false,
        }
    }

    /// Reads on in `text`, everything after the opener that has arrived so far (it
    /// starts with the bytes already read).
    pub fn feed(&mut self, text: &[u8], tools: &[Box<str>]) -> Verdict {
        while self.consumed < text.len() {
            loop {
                if self.unwind() {
                    return Verdict::Call(self.consumed);
                }
                match self.offer(text, tools) {
                    Offer::Consumed => break,
                    Offer::Passed => continue,
                    Offer::Failed => return Verdict::NotCall,
                }
            }
            self.consumed += 1;
        }
        if self.unwind() {
            Verdict::Call(self.consumed)
        } else {
            Verdict::Pending
        }
    }

    /// The message ended: a recognised call runs to the end, anything else is not a call.
    pub fn finish(&mut self) -> Verdict {
        if self.confirmed || self.unwind() {
            Verdict::Call(self.consumed)
        } else {
            Verdict::NotCall
        }
    }

    fn top(&mut self) -> Option<&mut Frame> {
        let open = self.open_frames.checked_sub(1)?;
        self.frames.get_mut(open)
    }

    /// Closes finished frames; true when the whole program has finished.
    fn unwind(&mut self) -> bool {
        while let Some(frame) = self.top() {
            if frame.pc < frame.ops.len() {
                return false;
            }
            self.open_frames -= 1;
        }
        true
    }

    /// Moves past the current op.
    fn next_op(&mut self) {
        if let Some(frame) = self.top() {
            frame.pc += 1;
            frame.after_item = false;
        }
        self.literal_at = 0;
        self.name_start = None;
        self.depth = 1;
        self.quote = None;
        self.escaped = false;
    }

    /// Runs `ops` as a sub-program, in place of the current frame when that one has
    /// finished; false when programs nest too deeply.
    fn enter(&mut self, ops: &'static [Op]) -> bool {
        if let Some(top) = self.top()
            && top.pc >= top.ops.len()
        {
            *top = Frame { ops, ..NO_FRAME };
            return true;
        }
        let Some(frame) = self.frames.get_mut(self.open_frames) else {
            return false;
        };
        *frame = Frame { ops, ..NO_FRAME };
        self.open_frames += 1;
        true
    }

    /// Offers the next byte of `text` to the current op.
    fn offer(&mut self, text: &[u8], tools: &[Box<str>]) -> Offer {
        let byte = text[self.consumed];
        let Some(&mut Frame {
            ops,
            pc,
            after_item,
        }) = self.top()
        else {
            return Offer::Failed;
        };
        match ops[pc] {
            Ws => self.skip_while(byte.is_ascii_whitespace()),
            Blanks => self.skip_while(matches!(byte, b' ' | b'\t' | b'\r')),
            Lit(text) => self.literal(text, byte),
            ClosingTag => self.closing_tag(byte),
            ToolName => self.tool_name(text, tools),
            Confirm => {
                self.confirmed = true;
                self.next_op();
                Offer::Passed
            }
            Balanced { quotes } => {
                self.balanced(byte, quotes);
                Offer::Consumed
            }
            Peek {
                byte: expected,
                then,
                otherwise,
            } => {
                self.next_op();
                self.run_sub(if byte == expected { then } else { otherwise })
            }
            Sub(program) => {
                self.next_op();
                self.run_sub(program)
            }
            List { .. } if byte.is_ascii_whitespace() => Offer::Consumed,
            List { item, .. } if !after_item => {
                self.set_after_item(true);
                self.run_sub(item)
            }
            List { .. } if byte == b',' => {
                self.set_after_item(false);
                Offer::Consumed
            }
            List { close, .. } if byte == close => {
                self.next_op();
                Offer::Consumed
            }
            List { .. } => Offer::Failed,
            EolOrEnd if byte == b'\n' => {
                self.next_op();
                Offer::Consumed
            }
            EolOrEnd => Offer::Failed,
            NotFollowedBy(refused) if byte == refused => Offer::Failed,
            NotFollowedBy(_) => {
                self.next_op();
                Offer::Passed
            }
        }
    }

    fn set_after_item(&mut self, after_item: bool) {
        if let Some(frame) = self.top() {
            frame.after_item = after_item;
        }
    }

    fn run_sub(&mut self, ops: &'static [Op]) -> Offer {
        if self.enter(ops) {
            Offer::Passed
        } else {
            Offer::Failed
        }
    }

    fn skip_while(&mut self, matches: bool) -> Offer {
        if matches {
            Offer::Consumed
        } else {
            self.next_op();
            Offer::Passed
        }
    }

    fn literal(&mut self, text: &[u8], byte: u8) -> Offer {
        if text.get(self.literal_at) != Some(&byte) {
            return Offer::Failed;
        }
        self.literal_at += 1;
        if self.literal_at == text.len() {
            self.next_op();
        }
        Offer::Consumed
    }

    /// `</` and the opener after its `<`.
    fn closing_tag(&mut self, byte: u8) -> Offer {
        let expected = match self.literal_at {
            0 => Some(b'<'),
            1 => Some(b'/'),
            at => self.opener.get(at - 1).copied(),
        };
        if expected != Some(byte) {
            return Offer::Failed;
        }
        self.literal_at += 1;
        if self.literal_at == self.opener.len() + 1 {
            self.next_op();
        }
        Offer::Consumed
    }

    fn tool_name(&mut self, text: &[u8], tools: &[Box<str>]) -> Offer {
        let start = *self.name_start.get_or_insert(self.consumed);
        let byte = text[self.consumed];
        if byte.is_ascii_alphanumeric() || matches!(byte, b'_' | b'-' | b'.') {
            let name = &text[start..=self.consumed];
            let is_prefix = tools.iter().any(|tool| tool.as_bytes().starts_with(name));
            return if is_prefix {
                Offer::Consumed
            } else {
                Offer::Failed
            };
        }
        let name = &text[start..self.consumed];
        if tools.iter().any(|tool| tool.as_bytes() == name) {
            self.next_op();
            Offer::Passed
        } else {
            Offer::Failed
        }
    }

    fn balanced(&mut self, byte: u8, quotes: &[u8]) {
        if let Some(quote) = self.quote {
            if self.escaped {
                self.escaped = false;
            } else if byte == b'\\' {
                self.escaped = true;
            } else if byte == quote {
                self.quote = None;
            }
            return;
        }
        match byte {
            b'(' | b'[' | b'{' => self.depth += 1,
            b')' | b']' | b'}' => {
                self.depth -= 1;
                if self.depth == 0 {
                    self.next_op();
                }
            }
            _ if quotes.contains(&byte) => self.quote = Some(byte),
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tools() -> Vec<Box<str>> {
        ["search_documents", "read_document"]
            .into_iter()
            .map(Box::from)
            .collect()
    }

    /// The verdict on `text` (after the opener), fed whole and byte by byte.
    fn verdict(shape: CallShape, text: &str, at_end: bool) -> Verdict {
        verdict_after(shape, b"", text, at_end)
    }

    /// `verdict` for a shape that reads its opener.
    fn verdict_after(shape: CallShape, opener: &'static [u8], text: &str, at_end: bool) -> Verdict {
        let tools = tools();
        let decide = |scan: &mut CallScan, verdict: Verdict| match verdict {
            Verdict::Pending if at_end => scan.finish(),
            verdict => verdict,
        };
        let mut whole = CallScan::new(shape, opener);
        let whole = {
            let v = whole.feed(text.as_bytes(), &tools);
            decide(&mut whole, v)
        };
        let mut scan = CallScan::new(shape, opener);
        let mut by_byte = Verdict::Pending;
        for end in 1..=text.len() {
            by_byte = scan.feed(&text.as_bytes()[..end], &tools);
            if by_byte != Verdict::Pending {
                break;
            }
        }
        assert_eq!(
            decide(&mut scan, by_byte),
            whole,
            "byte by byte differs for {text:?}"
        );
        whole
    }

    #[test]
    fn json_calls_end_at_their_closing_brace() {
        let call = r#" "name" : "read_document", "parameters": {"document_id": 3, "s": "}{"}}"#;
        assert_eq!(
            verdict(CallShape::JsonObject, &format!("{call} trailing"), false),
            Verdict::Call(call.len())
        );
        assert_eq!(
            verdict(CallShape::JsonObject, r#""host": "db"}"#, false),
            Verdict::NotCall
        );
        assert_eq!(
            verdict(
                CallShape::JsonObject,
                r#""name": "read_documents", "arguments": {}}"#,
                false
            ),
            Verdict::NotCall
        );
        assert_eq!(
            verdict(CallShape::JsonObject, r#""name": "read_document", "#, false),
            Verdict::Pending
        );
        assert_eq!(
            verdict(CallShape::JsonObject, r#""name": "read_document", "#, true),
            Verdict::NotCall
        );
        let cut = r#""name": "read_document", "arguments": {"do"#;
        assert_eq!(
            verdict(CallShape::JsonObject, cut, true),
            Verdict::Call(cut.len())
        );
    }

    #[test]
    fn call_lists_are_pythonic_or_json_and_never_links() {
        let list = r#"search_documents(query="a)b", limit=[1]), {"name": "read_document", "arguments": {}}]"#;
        assert_eq!(
            verdict(CallShape::CallList, &format!("{list}."), false),
            Verdict::Call(list.len())
        );
        assert_eq!(
            verdict(CallShape::CallList, &format!("{list}(url)"), false),
            Verdict::NotCall
        );
        assert_eq!(verdict(CallShape::CallList, list, false), Verdict::Pending);
        assert_eq!(
            verdict(CallShape::CallList, list, true),
            Verdict::Call(list.len())
        );
        assert_eq!(
            verdict(CallShape::CallList, "search_documents(q) usage](u)", false),
            Verdict::NotCall
        );
        assert_eq!(
            verdict(CallShape::CallList, "the refund policy](u)", false),
            Verdict::NotCall
        );
    }

    #[test]
    fn call_braces_and_fences() {
        let braces = "read_document{id:{n:1}}";
        assert_eq!(
            verdict(CallShape::CallBraces, &format!("{braces} x"), false),
            Verdict::Call(braces.len())
        );
        assert_eq!(
            verdict(CallShape::CallBraces, "get_weather{city:Paris}", false),
            Verdict::NotCall
        );
        let fence = "\n[\n {\"name\": \"read_document\", \"arguments\": {}},\n {\"name\": \"search_documents\", \"arguments\": {}}\n]\n```\n";
        assert_eq!(
            verdict(CallShape::JsonFence, &format!("{fence}after"), false),
            Verdict::Call(fence.len())
        );
        let bare = "\n{\"name\": \"read_document\", \"arguments\": {}}\n```";
        assert_eq!(
            verdict(CallShape::JsonFence, bare, true),
            Verdict::Call(bare.len())
        );
        assert_eq!(
            verdict(CallShape::JsonFence, "\nprint(1)\n```\n", false),
            Verdict::NotCall
        );
    }

    #[test]
    fn json_calls_typed_or_wrapped() {
        let typed =
            r#""type": "function", "name": "read_document", "parameters": {"document_id": 3}}"#;
        assert_eq!(
            verdict(CallShape::JsonObject, typed, false),
            Verdict::Call(typed.len())
        );
        let one = r#""tool_call": {"name": "read_document", "arguments": {}}}"#;
        assert_eq!(
            verdict(CallShape::JsonObject, &format!("{one}!"), false),
            Verdict::Call(one.len())
        );
        let many = r#" "tool_calls" : [{"name": "read_document", "arguments": {}}, {"type": "function", "name": "search_documents", "parameters": {"query": "q"}}] }"#;
        assert_eq!(
            verdict(CallShape::JsonObject, many, false),
            Verdict::Call(many.len())
        );
        for user_json in [
            r#""type": "object", "name": "read_document"}"#,
            r#""tool": "hammer"}"#,
            r#""tool_calls": [{"name": "get_weather", "arguments": {}}]}"#,
            r#""response": "read_document is a tool"}"#,
        ] {
            assert_eq!(
                verdict(CallShape::JsonObject, user_json, false),
                Verdict::NotCall,
                "{user_json}"
            );
        }
    }

    #[test]
    fn tagged_calls_close_with_their_opener() {
        let tagged = "\n{\"name\": \"read_document\", \"arguments\": {}}\n</json>";
        assert_eq!(
            verdict_after(
                CallShape::TaggedJson,
                b"<json>",
                &format!("{tagged} after"),
                false
            ),
            Verdict::Call(tagged.len())
        );
        let wrong_close = "{\"name\": \"read_document\", \"arguments\": {}}</xml>";
        assert_eq!(
            verdict_after(CallShape::TaggedJson, b"<json>", wrong_close, false),
            Verdict::NotCall
        );
    }

    #[test]
    fn recipients_name_a_tool() {
        assert_eq!(
            verdict(CallShape::Recipient, "read_document<|message|>{}", false),
            Verdict::Call("read_document<|message|>".len())
        );
        assert_eq!(
            verdict(CallShape::Recipient, "user<|message|>", false),
            Verdict::NotCall
        );
        let line = "read_document\n{\"document_id\": 2}";
        assert_eq!(
            verdict(CallShape::RecipientLine, &format!("{line}\n"), false),
            Verdict::Call(line.len())
        );
        assert_eq!(
            verdict(CallShape::RecipientLine, "read_document is a tool", false),
            Verdict::NotCall
        );
        assert_eq!(
            verdict(CallShape::RecipientLine, "all\nHello", false),
            Verdict::NotCall
        );
    }
}
