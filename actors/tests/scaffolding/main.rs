//! The scaffolding filter against the guardrail corpus and under property tests.

#![expect(
    clippy::expect_used,
    reason = "a test stops at the first unexpected value"
)]

mod corpus;
mod formats;
mod fuzz;
mod properties;

use bor_actors::scaffolding::{FilterEvent, ScaffoldingFilter};

/// bor's document tools (docs/PROTOCOL.md, "Document tools").
pub const TOOLS: &[&str] = &["search_documents", "read_document", "list_documents"];

/// Everything a filter produced for one content stream.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Filtered {
    pub visible: String,
    pub thinking: String,
    pub stripped: Vec<String>,
    pub stripped_chars: usize,
    /// Visible/Thinking events, to check that none is empty.
    pub events: usize,
}

/// Runs a fresh filter over `chunks`, in order.
pub fn filter<'a>(chunks: impl IntoIterator<Item = &'a str>, forced_open: bool) -> Filtered {
    let mut filter = ScaffoldingFilter::new(TOOLS, forced_open);
    let mut events = Vec::new();
    for chunk in chunks {
        filter.push(chunk, &mut events);
    }
    filter.finish(&mut events);
    let mut filtered = Filtered {
        stripped_chars: filter.stripped_chars(),
        ..Filtered::default()
    };
    for event in events {
        match event {
            FilterEvent::Visible(text) => {
                assert!(!text.is_empty(), "empty visible event");
                filtered.visible.push_str(&text);
                filtered.events += 1;
            }
            FilterEvent::Thinking(text) => {
                assert!(!text.is_empty(), "empty thinking event");
                filtered.thinking.push_str(&text);
                filtered.events += 1;
            }
            FilterEvent::Stripped(span) => filtered.stripped.push(span),
        }
    }
    assert_eq!(
        filtered.stripped.as_slice(),
        filter.stripped_spans(),
        "events and kept spans differ"
    );
    let counted: usize = filtered
        .stripped
        .iter()
        .map(|span| span.chars().count())
        .sum();
    assert_eq!(
        counted, filtered.stripped_chars,
        "stripped_chars is not the size of the spans"
    );
    filtered
}

/// `text` split at every char boundary into two chunks, and char by char.
pub fn splits(text: &str) -> Vec<Vec<&str>> {
    let mut splits: Vec<Vec<&str>> = text
        .char_indices()
        .skip(1)
        .map(|(at, _)| vec![&text[..at], &text[at..]])
        .collect();
    splits.push(
        text.char_indices()
            .map(|(at, c)| &text[at..at + c.len_utf8()])
            .collect(),
    );
    splits
}
