//! Every tool-call, reasoning and channel format that model servers parse (the list, with
//! where each comes from, is docs/SCAFFOLDING.md), as samples written from each format's
//! shape. Each sample is filtered whole and split at every char boundary: with text before
//! and after, as the only content (for tool calls the recovery case: nothing visible,
//! something stripped), and inside inline code and a fenced block (kept as written).

mod samples;

use bor_actors::scaffolding::registry::{End, FAMILIES, FORCED_OPEN_FAMILY};

use super::{Filtered, filter, splits};
use samples::{Kind, Place, REPLY, SAMPLES, Sample, WHY};

/// Filters `input` whole and split in two at every char boundary (and char by char); all
/// the ways must agree. Returns the whole result.
fn filtered_every_way(input: &str, forced_open: bool) -> Filtered {
    let whole = filter([input], forced_open);
    for chunks in splits(input) {
        let split = filter(chunks.iter().copied(), forced_open);
        assert_eq!(
            split.visible, whole.visible,
            "visible of {input:?} split as {chunks:?}"
        );
        assert_eq!(
            split.thinking, whole.thinking,
            "thinking of {input:?} split as {chunks:?}"
        );
        assert_eq!(
            split.stripped, whole.stripped,
            "spans of {input:?} split as {chunks:?}"
        );
    }
    whole
}

fn words(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The text around a sample at `place`.
fn around(place: Place) -> (&'static str, &'static str) {
    match place {
        Place::Inline => ("Before it. ", " After it."),
        Place::Lines => ("Before it.\n", "\nAfter it."),
        Place::MessageStart => ("", " After it."),
        Place::MessageEnd => ("Before it. ", ""),
    }
}

/// `text` as inline code: opened by more backticks than any run inside it.
fn inline_code(text: &str) -> String {
    let longest_run = text.split(|c| c != '`').map(str::len).max().unwrap_or(0);
    let ticks = "`".repeat(longest_run + 1);
    format!("Write {ticks} {text} {ticks} for that.")
}

fn check_with_text(sample: &Sample) {
    let (before, after) = around(sample.place);
    let input = format!("{before}{}{after}", sample.markup);
    let filtered = filtered_every_way(&input, false);
    let context = format!("{}: {input:?}", sample.family);
    match sample.kind {
        Kind::Tool | Kind::Call { .. } => {
            assert_eq!(
                words(&filtered.visible),
                words(&format!("{before}{after}")),
                "{context}"
            );
            // A fence's span takes the newline that ends it.
            let spans: Vec<&str> = filtered
                .stripped
                .iter()
                .map(|span| span.trim_end_matches('\n'))
                .collect();
            assert_eq!(spans, [sample.markup], "{context}");
        }
        Kind::Reasoning(thought) => {
            assert_eq!(
                words(&filtered.visible),
                words(&format!("{before}{after}")),
                "{context}"
            );
            assert_eq!(words(&filtered.thinking), thought, "{context}");
            assert!(filtered.stripped.is_empty(), "{context}");
        }
        Kind::Answer(reply) => {
            assert_eq!(
                words(&filtered.visible),
                words(&format!("{before}{reply}{after}")),
                "{context}"
            );
            assert!(filtered.stripped.is_empty(), "{context}");
        }
        Kind::Framing => {
            assert_eq!(
                words(&filtered.visible),
                words(&format!("{before}{after}")),
                "{context}"
            );
            assert!(filtered.stripped.is_empty(), "{context}");
        }
    }
    assert!(!filtered.visible.contains(sample.markup), "{context}");
}

/// The markup as the whole reply: tool calls are the case that triggers recovery.
fn check_alone(sample: &Sample) {
    let filtered = filtered_every_way(sample.markup, false);
    let context = format!("{}: {:?}", sample.family, sample.markup);
    match sample.kind {
        Kind::Tool | Kind::Call { .. } => {
            assert_eq!(filtered.visible.trim(), "", "{context}");
            assert!(filtered.stripped_chars > 0, "{context}");
        }
        Kind::Reasoning(thought) => {
            assert_eq!(filtered.visible.trim(), "", "{context}");
            assert_eq!(words(&filtered.thinking), thought, "{context}");
            assert_eq!(filtered.stripped_chars, 0, "{context}");
        }
        Kind::Answer(reply) => {
            assert_eq!(words(&filtered.visible), reply, "{context}");
            assert_eq!(filtered.stripped_chars, 0, "{context}");
        }
        Kind::Framing => {
            assert_eq!(filtered.visible.trim(), "", "{context}");
            assert_eq!(filtered.stripped_chars, 0, "{context}");
        }
    }
}

/// Code the user asked for keeps the markup as written.
fn check_in_code(sample: &Sample) {
    let first_line = sample.markup.lines().next().unwrap_or_default();
    let fenced = format!("Like this:\n````\n{}\n````\nDone.", sample.markup);
    for input in [inline_code(first_line), fenced] {
        let filtered = filtered_every_way(&input, false);
        assert_eq!(filtered.visible, input, "{}", sample.family);
        assert!(filtered.stripped.is_empty(), "{}: {input:?}", sample.family);
        assert_eq!(filtered.thinking, "", "{}: {input:?}", sample.family);
    }
}

#[test]
fn every_family_has_samples_and_every_sample_a_family() {
    for sample in SAMPLES {
        assert!(
            FAMILIES.iter().any(|family| family.name == sample.family),
            "no family {:?}",
            sample.family
        );
    }
    for family in FAMILIES {
        assert!(
            SAMPLES.iter().any(|sample| sample.family == family.name),
            "no sample of {:?}",
            family.name
        );
    }
}

#[test]
fn every_format_among_text() {
    for sample in SAMPLES {
        check_with_text(sample);
    }
}

#[test]
fn every_format_as_the_only_content() {
    for sample in SAMPLES {
        check_alone(sample);
    }
}

#[test]
fn every_format_inside_code_is_kept() {
    for sample in SAMPLES {
        check_in_code(sample);
    }
}

#[test]
fn call_syntax_naming_another_tool_is_kept() {
    for sample in SAMPLES {
        let Kind::Call { foreign } = sample.kind else {
            continue;
        };
        let (before, after) = around(sample.place);
        let input = format!("{before}{foreign}{after}");
        let filtered = filtered_every_way(&input, false);
        assert_eq!(filtered.visible, input, "{}", sample.family);
        assert!(filtered.stripped.is_empty(), "{}: {input:?}", sample.family);
    }
}

#[test]
fn a_tool_fence_opened_after_text_on_the_same_line_is_removed() {
    for info in ["tool_code", "tool_call"] {
        let fence = format!("```{info}\nsearch_documents(query=\"zz\")\n```");
        let filtered = filtered_every_way(&format!("Visible answer. {fence}"), false);
        assert_eq!(filtered.visible, "Visible answer. ");
        assert_eq!(filtered.stripped, std::slice::from_ref(&fence));

        let filtered = filtered_every_way(&format!("Visible answer.{fence}\nMore."), false);
        assert_eq!(filtered.visible, "Visible answer.\nMore.");
        assert_eq!(filtered.stripped, [fence]);
    }
    let json = "```json\n{\"name\": \"list_documents\", \"arguments\": {}}\n```";
    let filtered = filtered_every_way(&format!("Let me list them: {json}\nDone."), false);
    assert_eq!(filtered.visible, "Let me list them: Done.");
    assert_eq!(filtered.stripped, [format!("{json}\n")]);
    // Not a fence: something follows the info string on its line.
    let inline = "Name the block ```tool_code``` and go on.";
    assert_eq!(filtered_every_way(inline, false).visible, inline);
    let inline = "The ```tool_code fence``` is Gemini's.\nNext line.";
    assert_eq!(filtered_every_way(inline, false).visible, inline);
}

#[test]
fn reasoning_a_template_opens_in_the_prompt_ends_at_its_closer() {
    let End::Closers { closers, .. } = FAMILIES[FORCED_OPEN_FAMILY].end else {
        panic!("the forced-open family has closers");
    };
    // Apriel 1.6 and Solar Open 2 open their reasoning in the prompt too.
    assert!(closers.contains(&"[BEGIN FINAL RESPONSE]") && closers.contains(&"<|think:end|>"));
    for closer in closers {
        let filtered = filtered_every_way(&format!("{WHY}\n{closer}\n{REPLY}"), true);
        assert_eq!(words(&filtered.thinking), WHY, "{closer}");
        assert_eq!(filtered.visible, REPLY, "{closer}");
    }
}

#[test]
fn a_kimi_tool_section_ends_the_reasoning_it_was_opened_in() {
    let section = "<|tool_calls_section_begin|><|tool_call_begin|>functions.list_documents:0<|tool_call_argument_begin|>{}<|tool_call_end|><|tool_calls_section_end|>";
    let filtered = filtered_every_way(&format!("<think>{WHY}{section}"), false);
    assert_eq!(filtered.thinking, WHY);
    assert_eq!(filtered.visible, "");
    assert_eq!(filtered.stripped, [section]);
}
