//! The registry table: every entry is caught, by derivation alone.

use super::super::matcher::anchor_of;
use super::super::{FilterEvent, ScaffoldingFilter};
use super::*;

const TOOLS: &[&str] = &["search_documents", "read_document", "list_documents"];

/// What a filter made of `input`, fed whole and char by char (which must agree).
fn filtered(input: &str) -> (String, String, Vec<String>) {
    let whole = run(&[input]);
    let chars: Vec<&str> = input
        .char_indices()
        .map(|(at, c)| &input[at..at + c.len_utf8()])
        .collect();
    assert_eq!(run(&chars), whole, "char by char differs for {input:?}");
    whole
}

fn run(chunks: &[&str]) -> (String, String, Vec<String>) {
    let mut filter = ScaffoldingFilter::new(TOOLS, false);
    let mut events = Vec::new();
    for chunk in chunks {
        filter.push(chunk, &mut events);
    }
    filter.finish(&mut events);
    let (mut visible, mut thinking) = (String::new(), String::new());
    for event in events {
        match event {
            FilterEvent::Visible(text) => visible.push_str(&text),
            FilterEvent::Thinking(text) => thinking.push_str(&text),
            FilterEvent::Stripped(_) => {}
        }
    }
    let spans = filter.stripped_spans().to_vec();
    assert_eq!(
        filter.stripped_chars(),
        spans.iter().map(|span| span.chars().count()).sum::<usize>()
    );
    (visible, thinking, spans)
}

fn words(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The text after `opener` of `family` that completes its span.
fn body(family: &Family, opener: &str) -> String {
    let content = match family.at {
        Position::MessageStart(_) => "Inner words",
        _ => "inner words",
    };
    match family.end {
        End::Token => String::new(),
        // A fence opened after text needs its opening line to end there.
        End::Closers { closers, .. } if matches!(family.at, Position::FenceOpen) => {
            format!("\n{content}\n{}", closers[0])
        }
        End::Closers { closers, .. } => format!("{content}{}", closers[0]),
        End::EndOfMessage => content.to_owned(),
        End::Call(CallShape::JsonObject) => {
            r#""name": "search_documents", "arguments": {"query": "x"}}"#.to_owned()
        }
        End::Call(CallShape::CallList) => r#"search_documents(query="x")]"#.to_owned(),
        End::Call(CallShape::CallBraces) => "search_documents{query:x}".to_owned(),
        End::Call(CallShape::JsonFence) => {
            "\n{\"name\": \"search_documents\", \"arguments\": {}}\n```\n".to_owned()
        }
        End::Call(CallShape::TaggedJson) => format!(
            "{{\"name\": \"search_documents\", \"arguments\": {{}}}}</{}",
            &opener[1..]
        ),
        End::Call(CallShape::Recipient) => "search_documents<|message|>".to_owned(),
        End::Call(CallShape::RecipientLine | CallShape::RecipientLineAtStart) => {
            "search_documents\n{\"query\": \"x\"}".to_owned()
        }
    }
}

/// The text after an opener that its family's position asks for.
fn separator_after(family: &Family) -> &'static str {
    match family.at {
        Position::MessageStart(followed_by) => ["\n", "I", "i"]
            .into_iter()
            .find(|text| text.chars().all(followed_by))
            .unwrap_or(""),
        _ => "",
    }
}

#[test]
fn every_opener_of_every_family_is_caught() {
    for family in FAMILIES {
        for opener in family.openers {
            let before = match family.at {
                Position::MessageStart(_) => "",
                Position::LineStart => "Intro.\n",
                Position::Anywhere
                | Position::WordStart
                | Position::FenceOpen
                | Position::MessageEnd => "Intro. ",
            };
            let after = match (family.at, family.end) {
                (Position::MessageEnd, _) | (_, End::EndOfMessage) => "",
                _ => " Outro.",
            };
            let body = match family.end {
                End::Token => separator_after(family).to_owned(),
                _ => body(family, opener),
            };
            let input = format!("{before}{opener}{body}{after}");
            let (visible, thinking, spans) = filtered(&input);
            let kept = words(&format!("{before}{after}"));
            match family.role {
                Role::ToolCall => {
                    assert_eq!(words(&visible), kept, "{}: {input:?}", family.name);
                    assert_eq!(
                        spans,
                        [format!("{opener}{body}")],
                        "{}: {input:?}",
                        family.name
                    );
                }
                Role::Reasoning => {
                    assert_eq!(words(&visible), kept, "{}: {input:?}", family.name);
                    assert_eq!(
                        words(&thinking).to_lowercase(),
                        "inner words",
                        "{}: {input:?}",
                        family.name
                    );
                    assert!(spans.is_empty(), "{}: {input:?}", family.name);
                }
                Role::Answer => {
                    assert_eq!(
                        words(&visible),
                        words(&format!("{before}inner words{after}")),
                        "{}",
                        family.name
                    );
                    assert!(spans.is_empty(), "{}: {input:?}", family.name);
                }
                Role::Framing => {
                    assert_eq!(words(&visible), kept, "{}: {input:?}", family.name);
                    assert!(spans.is_empty(), "{}: {input:?}", family.name);
                }
            }
        }
    }
}

/// The family a closer met alone belongs to: a text that is some family's opener keeps
/// that meaning (tested with the openers), else the first family whose lone closer it is.
fn lone_closer_family(closer: &str) -> Option<&'static Family> {
    if FAMILIES
        .iter()
        .any(|family| family.openers.contains(&closer))
    {
        return None;
    }
    FAMILIES.iter().find(|family| {
        matches!(family.end, End::Closers { closers, lone_closers: true, .. } if closers.contains(&closer))
    })
}

#[test]
fn closers_met_alone_are_removed_where_the_family_says_so() {
    for family in FAMILIES {
        let End::Closers { closers, .. } = family.end else {
            continue;
        };
        for closer in closers {
            let input = format!("Intro. {closer} Outro.");
            let (visible, _, spans) = filtered(&input);
            if let Some(owner) = lone_closer_family(closer) {
                assert_eq!(
                    words(&visible),
                    "Intro. Outro.",
                    "{}: {input:?}",
                    family.name
                );
                let counted = owner.role == Role::ToolCall;
                assert_eq!(
                    spans.len(),
                    usize::from(counted),
                    "{}: {input:?}",
                    family.name
                );
            } else if !FAMILIES.iter().any(|other| other.openers.contains(closer)) {
                assert_eq!(visible, input, "{}", family.name);
            }
        }
    }
}

#[test]
fn every_marker_can_be_found_by_the_scan() {
    for family in FAMILIES {
        let lone = match family.end {
            End::Closers {
                closers,
                lone_closers: true,
                ..
            } => closers,
            _ => &[],
        };
        for marker in family.openers.iter().chain(lone) {
            let at_message_start = matches!(family.at, Position::MessageStart(_));
            assert!(
                at_message_start || anchor_of(marker.as_bytes()).is_some(),
                "{}: {marker:?} has no byte to stop the scan at",
                family.name
            );
        }
    }
}

#[test]
fn no_opener_belongs_to_two_families() {
    let mut openers: Vec<&str> = FAMILIES
        .iter()
        .flat_map(|family| family.openers.iter().copied())
        .collect();
    let count = openers.len();
    openers.sort_unstable();
    openers.dedup();
    assert_eq!(openers.len(), count);
}

#[test]
fn thinking_forced_open_starts_in_the_think_family() {
    assert_eq!(FAMILIES[FORCED_OPEN_FAMILY].openers, ["<think>"]);
    assert_eq!(FAMILIES[FORCED_OPEN_FAMILY].role, Role::Reasoning);
}
