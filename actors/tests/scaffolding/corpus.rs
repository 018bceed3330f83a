//! Every sample of the guardrail corpus, whole, in its own chunks, split in two at every
//! char boundary and char by char.

use serde::Deserialize;

use super::{Filtered, filter, splits};

const CORPUS: &str = include_str!("../corpus/scaffolding-public.json");

#[derive(Debug, Deserialize)]
struct Sample {
    id: String,
    family: String,
    kind: String,
    sample: String,
    expected_visible: String,
    registered_tools: Vec<String>,
    scaffolding_only: bool,
    chunks: Option<Vec<String>>,
}

const BOR_TOOL: &str = "search_documents";

/// The sample's tool names read as bor's `search_documents`.
fn as_bor_tool(text: &str, tools: &[String]) -> String {
    with_offsets(text, tools).0
}

/// `as_bor_tool`, with where each byte offset of `text` lands in the result (an offset
/// inside a replaced name keeps its place inside the new name, so chunks that cut a tool
/// name still cut it).
fn with_offsets(text: &str, tools: &[String]) -> (String, Vec<usize>) {
    let mut replaced = String::new();
    let mut offsets = Vec::with_capacity(text.len() + 1);
    let mut at = 0;
    while at < text.len() {
        match tools
            .iter()
            .find(|tool| text[at..].starts_with(tool.as_str()))
        {
            Some(tool) => {
                let start = replaced.len();
                offsets
                    .extend((0..tool.len()).map(|inside| start + inside.min(BOR_TOOL.len() - 1)));
                replaced.push_str(BOR_TOOL);
                at += tool.len();
            }
            None => {
                let c = text[at..].chars().next().expect("inside the text");
                offsets.extend((0..c.len_utf8()).map(|inside| replaced.len() + inside));
                replaced.push(c);
                at += c.len_utf8();
            }
        }
    }
    offsets.push(replaced.len());
    (replaced, offsets)
}

/// Trims the text and collapses runs of blank lines.
fn normalized(text: &str) -> String {
    let mut lines: Vec<&str> = Vec::new();
    for line in text.trim().lines() {
        let blank = line.trim().is_empty();
        if !(blank && lines.last().is_some_and(|last| last.trim().is_empty())) {
            lines.push(if blank { "" } else { line });
        }
    }
    lines.join("\n")
}

/// Samples whose content starts inside reasoning: a `</think>` before any `<think>`.
fn starts_in_reasoning(sample: &str) -> bool {
    match (sample.find("</think>"), sample.find("<think>")) {
        (Some(close), Some(open)) => close < open,
        (Some(_), None) => true,
        (None, _) => false,
    }
}

fn samples() -> Vec<Sample> {
    serde_json::from_str(CORPUS).expect("the corpus parses")
}

fn check(sample: &Sample, ways: &[(String, Vec<&str>)], whole: &Filtered) {
    let expected = normalized(&as_bor_tool(
        &sample.expected_visible,
        &sample.registered_tools,
    ));
    assert_eq!(
        normalized(&whole.visible),
        expected,
        "{}: visible text",
        sample.id
    );
    if sample.scaffolding_only {
        assert!(
            whole.visible.trim().is_empty(),
            "{}: something visible",
            sample.id
        );
        assert!(whole.stripped_chars > 0, "{}: nothing stripped", sample.id);
    }
    let forced_open = starts_in_reasoning(&sample.sample);
    for (way, chunks) in ways {
        let split = filter(chunks.iter().copied(), forced_open);
        assert_eq!(
            split.visible, whole.visible,
            "{}: visible text differs {way}",
            sample.id
        );
        assert_eq!(
            split.thinking, whole.thinking,
            "{}: thinking differs {way}",
            sample.id
        );
        assert_eq!(
            split.stripped, whole.stripped,
            "{}: stripped spans differ {way}",
            sample.id
        );
        assert_eq!(
            split.stripped_chars, whole.stripped_chars,
            "{}: stripped_chars differs {way}",
            sample.id
        );
    }
}

#[test]
fn every_sample_gives_its_visible_text_however_it_is_chunked() {
    let samples = samples();
    assert_eq!(samples.len(), 41);
    for sample in &samples {
        let (text, offsets) = with_offsets(&sample.sample, &sample.registered_tools);
        let whole = filter([text.as_str()], starts_in_reasoning(&sample.sample));
        let mut ways: Vec<(String, Vec<&str>)> = Vec::new();
        if let Some(chunks) = &sample.chunks {
            assert_eq!(
                chunks.concat(),
                sample.sample,
                "{}: chunks are the sample",
                sample.id
            );
            let mut cuts = vec![0];
            cuts.extend(chunks.iter().scan(0, |end, chunk| {
                *end += chunk.len();
                Some(offsets[*end])
            }));
            let own_chunks = cuts.windows(2).map(|cut| &text[cut[0]..cut[1]]).collect();
            ways.push(("in its own chunks".to_owned(), own_chunks));
        }
        for chunks in splits(&text) {
            ways.push((
                format!("split as {chunks:?}").chars().take(120).collect(),
                chunks,
            ));
        }
        check(sample, &ways, &whole);
    }
}

#[test]
fn reasoning_goes_to_thinking_without_its_tags() {
    for sample in samples() {
        let text = as_bor_tool(&sample.sample, &sample.registered_tools);
        let whole = filter([text.as_str()], starts_in_reasoning(&sample.sample));
        if sample.kind.contains("thinking") {
            assert!(
                !whole.thinking.trim().is_empty(),
                "{}: no thinking",
                sample.id
            );
        }
        if sample.family.starts_with("ambiguous") {
            assert_eq!(whole.thinking, "", "{}: thinking", sample.id);
        }
        for tag in [
            "<think>",
            "</think>",
            "[THINK]",
            "◁think▷",
            "<|END_THINKING|>",
            "<channel|>",
            "<|end|>",
        ] {
            assert!(
                !whole.thinking.contains(tag),
                "{}: {tag} in thinking {:?}",
                sample.id,
                whole.thinking
            );
        }
    }
}
