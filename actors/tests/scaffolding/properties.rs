//! Property tests: content built from prose, code and markup of every registered family,
//! with the output each piece should give.

use bor_actors::scaffolding::registry::{CallShape, End, FAMILIES, Family, Position, Role};
use std::sync::LazyLock;

use proptest::prelude::*;

use super::{Filtered, TOOLS, filter};

/// Prose pieces: words, punctuation, multi-byte text and near-misses of markers.
const WORDS: &[&str] = &[
    "The",
    "refund",
    "window",
    "is",
    "30",
    "days.",
    "é",
    "日本",
    "🙂",
    "call",
    "func",
    "functools",
    "Action",
    "analysis",
    "assistant",
    "a < b",
    "x = y",
    "(see)",
    "[the docs](https://example.com/d)",
    "{braces}",
    "50%",
    "search_documents",
    "read_document",
    "note:",
    "—",
    "«quoted»",
    "\n",
    "\n\n",
    "-",
    "~",
    "#",
    "<",
    "[x",
    "{",
];

/// Markup that may appear inside code (no backticks, no newline).
const CODE_WORDS: &[&str] = &[
    "<tool_call>",
    "</tool_call>",
    "<think>x</think>",
    "[TOOL_CALLS]",
    "<|python_tag|>",
    "◁think▷",
    "{\"name\": \"search_documents\", \"arguments\": {}}",
    "[search_documents(q=1)]",
    "<|im_end|>",
    "let a = b;",
];

/// One piece of generated content.
#[derive(Debug, Clone)]
enum Piece {
    Prose(Vec<usize>),
    InlineCode(Vec<usize>),
    Fence {
        tilde: bool,
        lines: Vec<Vec<usize>>,
    },
    /// Markup of `FAMILIES[family]`: its opener number `opener`, closer number `closer`,
    /// prose inside, and for call shapes whether the call names a bor tool.
    Markup {
        family: usize,
        opener: usize,
        closer: usize,
        inner: Vec<usize>,
        names_tool: bool,
    },
    /// One of the closers met alone (`lone_closers()`).
    LoneCloser(usize),
    /// An end-of-sequence tag (generated only as the last piece).
    EndTag,
}

/// A whole message: optionally opening with gpt-oss reasoning whose special tokens were
/// decoded away, and optionally ending with an end-of-sequence tag.
#[derive(Debug, Clone)]
struct Message {
    glued_reasoning: Option<Vec<usize>>,
    pieces: Vec<Piece>,
    end_tag: bool,
}

/// Content and what filtering it should give.
#[derive(Debug, Default)]
struct Expected {
    input: String,
    visible: String,
    thinking: String,
    spans: Vec<String>,
}

fn prose(words: &[usize]) -> String {
    words
        .iter()
        .map(|&word| WORDS[word % WORDS.len()])
        .collect::<Vec<_>>()
        .join(" ")
}

fn code(words: &[usize]) -> String {
    words
        .iter()
        .map(|&word| CODE_WORDS[word % CODE_WORDS.len()])
        .collect::<Vec<_>>()
        .join(" ")
}

/// Families the generator places anywhere (the message-start and message-end ones have
/// their own unit tests).
fn placeable(family: &Family) -> bool {
    !matches!(family.at, Position::MessageStart(_) | Position::MessageEnd)
}

/// The call text of a call shape after `opener`, opener included.
fn call(shape: CallShape, opener: &str, name: &str, inner: &str) -> String {
    let object = format!(r#"{{"name": "{name}", "arguments": {{"query": "{inner}"}}}}"#);
    match shape {
        // The opener ends with the object's `{`.
        CallShape::JsonObject => format!("{opener}{}", &object[1..]),
        CallShape::CallList => format!(r#"{opener}{name}(query="{inner}")]"#),
        // Unquoted: brackets would unbalance it.
        CallShape::CallBraces => format!(
            "{opener}{name}{{query:{}}}",
            inner.replace(['[', ']', '(', ')', '{', '}'], "")
        ),
        CallShape::JsonFence => format!("{opener}\n{object}\n```\n"),
        CallShape::TaggedJson => format!("{opener}{object}</{}", &opener[1..]),
        CallShape::Recipient => format!("{opener}{name}<|message|>"),
        CallShape::RecipientLine | CallShape::RecipientLineAtStart => {
            format!("{opener}{name}\n{{\"query\": \"{inner}\"}}")
        }
    }
}

/// Renders a piece into content and the filter's expected output; `Some` with where it
/// starts when it opens a span without closer, which takes the rest of the message.
fn render(piece: &Piece, expected: &mut Expected) -> Option<usize> {
    // A kept JSON fence must open a code block, so it starts a line; a tool fence may
    // open after text.
    let separator = match piece {
        Piece::Markup { family, .. } => match (FAMILIES[*family].at, FAMILIES[*family].end) {
            (Position::LineStart, _) | (Position::FenceOpen, End::Call(_)) => "\n",
            _ => " ",
        },
        Piece::Fence { .. } => "\n",
        _ => " ",
    };
    expected.input.push_str(separator);
    expected.visible.push_str(separator);
    let (family, opener, closer, inner, names_tool) = match piece {
        Piece::Prose(words) => return keep(expected, &prose(words)),
        Piece::InlineCode(words) => return keep(expected, &format!("`{}`", code(words))),
        Piece::Fence { tilde, lines } => {
            let fence = if *tilde { "~~~~" } else { "````" };
            let body: Vec<String> = lines.iter().map(|line| code(line)).collect();
            return keep(
                expected,
                &format!("{fence}\n{}\n{fence}\n", body.join("\n")),
            );
        }
        Piece::Markup {
            family,
            opener,
            closer,
            inner,
            names_tool,
        } => (*family, *opener, *closer, inner, *names_tool),
        Piece::LoneCloser(closer) => {
            let (closer, role) = lone_closers()[closer % lone_closers().len()];
            expected.input.push_str(closer);
            if role == Role::ToolCall {
                expected.spans.push(closer.to_owned());
            }
            return None;
        }
        Piece::EndTag => {
            expected.input.push_str("</s>");
            return None;
        }
    };
    let family = &FAMILIES[family];
    let opener = family.openers[opener % family.openers.len()];
    let inner = prose(inner);
    let start = expected.input.len();
    match (family.role, family.end) {
        (_, End::Call(shape)) => {
            let name = if names_tool {
                TOOLS[inner.len() % TOOLS.len()]
            } else {
                "get_weather"
            };
            let text = call(shape, opener, name, &inner);
            expected.input.push_str(&text);
            if names_tool {
                expected.spans.push(text);
            } else {
                expected.visible.push_str(&text);
            }
        }
        (Role::ToolCall, End::EndOfMessage) => {
            expected.input.push_str(&format!("{opener}{inner}"));
            return Some(start);
        }
        (role, End::Closers { closers, .. }) => {
            let closer = closers[closer % closers.len()];
            // An answer is filtered as text: a space keeps its last word apart from the
            // closer (`functools` and `[END FINAL RESPONSE]` would make an opener).
            // A recipient is a function (`to=assistant` is a header of its own).
            let inner = if role == Role::Answer {
                format!("{inner} ")
            } else if opener.ends_with("to=") {
                format!("functions.{inner}")
            } else {
                inner
            };
            let text = if matches!(family.at, Position::FenceOpen) {
                format!("{opener}\n{inner}\n{closer}")
            } else {
                format!("{opener}{inner}{closer}")
            };
            expected.input.push_str(&text);
            match role {
                Role::ToolCall => expected.spans.push(text),
                Role::Reasoning => expected.thinking.push_str(&inner),
                Role::Answer => expected.visible.push_str(&inner),
                Role::Framing => {}
            }
        }
        (role, _) => {
            expected.input.push_str(opener);
            if role == Role::ToolCall {
                expected.spans.push(opener.to_owned());
            }
        }
    }
    None
}

fn keep(expected: &mut Expected, text: &str) -> Option<usize> {
    expected.input.push_str(text);
    expected.visible.push_str(text);
    None
}

fn expected(message: &Message) -> Expected {
    let mut expected = Expected::default();
    if let Some(words) = &message.glued_reasoning {
        let reasoning = format!("We {}", prose(words));
        expected
            .input
            .push_str(&format!("analysis{reasoning}assistantfinal"));
        expected.thinking.push_str(&reasoning);
    }
    let end_tag = message.end_tag.then_some(&Piece::EndTag);
    let mut to_the_end = None;
    for piece in message.pieces.iter().chain(end_tag) {
        match to_the_end {
            None => to_the_end = render(piece, &mut expected),
            Some(_) => {
                let mut swallowed = Expected::default();
                render(piece, &mut swallowed);
                expected.input.push_str(&swallowed.input);
            }
        }
    }
    if let Some(start) = to_the_end {
        expected.spans.push(expected.input[start..].to_owned());
    }
    expected
}

fn message() -> impl Strategy<Value = Message> {
    (
        prop::option::weighted(0.2, words(6)),
        prop::collection::vec(piece(), 1..12),
        prop::bool::weighted(0.2),
    )
        .prop_map(|(glued_reasoning, pieces, end_tag)| Message {
            glued_reasoning,
            pieces,
            end_tag,
        })
}

fn words(max: usize) -> impl Strategy<Value = Vec<usize>> {
    prop::collection::vec(any::<usize>(), 1..max)
}

fn piece() -> impl Strategy<Value = Piece> {
    let families: Vec<usize> = (0..FAMILIES.len())
        .filter(|&family| placeable(&FAMILIES[family]))
        .collect();
    prop_oneof![
        3 => words(8).prop_map(Piece::Prose),
        1 => words(4).prop_map(Piece::InlineCode),
        1 => (any::<bool>(), prop::collection::vec(words(4), 1..4)).prop_map(|(tilde, lines)| Piece::Fence { tilde, lines }),
        1 => any::<usize>().prop_map(Piece::LoneCloser),
        3 => (prop::sample::select(families), any::<usize>(), any::<usize>(), words(5), any::<bool>()).prop_map(
            |(family, opener, closer, inner, names_tool)| Piece::Markup { family, opener, closer, inner, names_tool }
        ),
    ]
}

/// Every closer that is markup where it is met alone, with the role of the family it is
/// read for: the first whose lone closer it is. A closer that is also an opener (an
/// end-of-turn token) is left out: it has the opener's meaning.
fn lone_closers() -> &'static [(&'static str, Role)] {
    static CLOSERS: LazyLock<Vec<(&'static str, Role)>> = LazyLock::new(|| {
        let mut closers: Vec<(&'static str, Role)> = Vec::new();
        for family in FAMILIES {
            let End::Closers {
                closers: texts,
                lone_closers: true,
                ..
            } = family.end
            else {
                continue;
            };
            for &closer in texts {
                let is_opener = FAMILIES.iter().any(|other| other.openers.contains(&closer));
                if !is_opener && !closers.iter().any(|(seen, _)| *seen == closer) {
                    closers.push((closer, family.role));
                }
            }
        }
        closers
    });
    &CLOSERS
}

/// `text` cut at the given fractions of its length (moved to char boundaries).
pub(crate) fn cut<'a>(text: &'a str, cuts: &[f64]) -> Vec<&'a str> {
    let mut points: Vec<usize> = cuts
        .iter()
        .map(|fraction| {
            let mut at = ((text.len() as f64) * fraction) as usize;
            while !text.is_char_boundary(at) {
                at += 1;
            }
            at
        })
        .collect();
    points.push(0);
    points.push(text.len());
    points.sort_unstable();
    points
        .windows(2)
        .map(|pair| &text[pair[0]..pair[1]])
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn each_piece_gives_its_output(message in message()) {
        let expected = expected(&message);
        let filtered = filter([expected.input.as_str()], false);
        prop_assert_eq!(filtered.visible.trim_start(), expected.visible.trim_start(), "input {:?}", expected.input);
        prop_assert_eq!(&filtered.thinking, &expected.thinking, "input {:?}", expected.input);
        prop_assert_eq!(&filtered.stripped, &expected.spans, "input {:?}", expected.input);
    }

    #[test]
    fn any_split_gives_what_the_whole_gives(
        message in message(),
        cuts in prop::collection::vec(0.0..1.0f64, 0..24),
        forced_open in any::<bool>(),
    ) {
        let input = expected(&message).input;
        let whole = filter([input.as_str()], forced_open);
        let split: Filtered = filter(cut(&input, &cuts), forced_open);
        prop_assert_eq!(split.visible, whole.visible, "input {:?} cut at {:?}", input, cuts);
        prop_assert_eq!(split.thinking, whole.thinking);
        prop_assert_eq!(split.stripped, whole.stripped);
        prop_assert_eq!(split.stripped_chars, whole.stripped_chars);
    }

    #[test]
    fn no_opener_is_visible_outside_code(message in message()) {
        let input = expected(&message).input;
        let visible = outside_code(&filter([input.as_str()], false).visible);
        for family in FAMILIES.iter().filter(|family| matches!(family.at, Position::Anywhere)) {
            if let End::Call(_) = family.end {
                continue;
            }
            for opener in family.openers {
                prop_assert!(!visible.contains(opener), "{} visible in {:?} from {:?}", opener, visible, input);
            }
        }
    }

    #[test]
    fn prose_and_code_pass_unchanged(pieces in prop::collection::vec(
        prop_oneof![
            words(8).prop_map(Piece::Prose),
            words(4).prop_map(Piece::InlineCode),
            (any::<bool>(), prop::collection::vec(words(4), 1..4)).prop_map(|(tilde, lines)| Piece::Fence { tilde, lines }),
        ],
        1..12,
    )) {
        let expected = expected(&Message { glued_reasoning: None, pieces, end_tag: false });
        let filtered = filter([expected.input.as_str()], false);
        prop_assert_eq!(filtered.visible, expected.input);
        prop_assert_eq!(filtered.stripped_chars, 0);
    }
}

/// `text` without its inline code and fenced blocks (as generated: well formed).
fn outside_code(text: &str) -> String {
    let mut outside = String::new();
    let mut in_fence: Option<&str> = None;
    for line in text.split_inclusive('\n') {
        let trimmed = line.trim();
        if let Some(fence) = in_fence {
            if trimmed == fence {
                in_fence = None;
            }
            continue;
        }
        if trimmed == "````" || trimmed == "~~~~" {
            in_fence = Some(if trimmed == "````" { "````" } else { "~~~~" });
            continue;
        }
        let mut in_code = false;
        for part in line.split('`') {
            if !in_code {
                outside.push_str(part);
                outside.push(' ');
            }
            in_code = !in_code;
        }
    }
    outside
}
