use proptest::prelude::*;

use super::*;

fn settings(max_chars: usize, overlap: usize) -> ChunkingSettings {
    ChunkingSettings { max_chars, overlap }
}

fn texts<'a>(chunks: &[TextChunk<'a>]) -> Vec<&'a str> {
    chunks.iter().map(|chunk| chunk.text).collect()
}

#[test]
fn a_short_document_is_one_chunk() {
    let chunks = chunk_text(
        "  Cats sleep.\n\nDogs bark.\n",
        TextFormat::Markdown,
        settings(100, 10),
    );
    assert_eq!(texts(&chunks), ["Cats sleep.\n\nDogs bark."]);
    assert_eq!(chunks[0].start, 2);
    assert!(chunk_text(" \n\t ", TextFormat::Plain, settings(100, 10)).is_empty());
}

#[test]
fn a_chunk_starts_at_each_cut_as_at_a_heading() {
    let text = "Typed page.\n\nScanned words.\n\nTyped again.\n";
    let cuts = [13, 29, 500];
    let chunks = chunk_text_cut_at(text, TextFormat::Markdown, settings(200, 20), &cuts);
    assert_eq!(
        texts(&chunks),
        ["Typed page.", "Scanned words.", "Typed again."]
    );
    assert_eq!(chunks[1].start, 13);
}

#[test]
fn headings_start_chunks_and_fenced_hashes_do_not() {
    let text =
        "Intro line.\n# First\nBody one.\n```\n# not a heading\n```\n## Second ##\nBody two.\n";
    let chunks = chunk_text(text, TextFormat::Markdown, settings(200, 20));
    assert_eq!(
        texts(&chunks),
        [
            "Intro line.",
            "# First\nBody one.\n```\n# not a heading\n```",
            "## Second ##\nBody two."
        ]
    );
    let plain = chunk_text(text, TextFormat::Plain, settings(200, 20));
    assert_eq!(plain.len(), 1, "plain text has no headings");
}

#[test]
fn paragraph_breaks_are_preferred_to_line_breaks_and_sentences() {
    let text = "aaaa bbbb cccc.\n\ndddd eeee. ffff\ngggg hhhh iiii";
    let chunks = chunk_text(text, TextFormat::Plain, settings(30, 0));
    assert_eq!(chunks[0].text, "aaaa bbbb cccc.");
    let chunks = chunk_text(
        "aaaa bbbb cccc dddd. eeee\nffff gggg",
        TextFormat::Plain,
        settings(30, 0),
    );
    assert_eq!(chunks[0].text, "aaaa bbbb cccc dddd. eeee");
    let chunks = chunk_text(
        "aaaa bbbb cccc dddd. eeee ffff gggg",
        TextFormat::Plain,
        settings(30, 0),
    );
    assert_eq!(chunks[0].text, "aaaa bbbb cccc dddd.");
}

#[test]
fn chunks_overlap_at_a_word_start() {
    let text = "one two three four five six seven eight nine ten eleven twelve";
    let chunks = chunk_text(text, TextFormat::Plain, settings(30, 10));
    assert_eq!(chunks[0].text, "one two three four five six");
    // Ten characters back from the cut is mid-word ("r five six"): the next word starts it.
    assert_eq!(&text[chunks[1].start..chunks[0].end()], "five six");
    assert!(chunks[1].text.starts_with("five six seven"));
}

#[test]
fn a_run_without_spaces_is_cut_at_character_boundaries() {
    let text = "日本語".repeat(40);
    let chunks = chunk_text(&text, TextFormat::Plain, settings(50, 5));
    assert!(chunks.iter().all(|c| c.text.chars().count() <= 50));
    assert_eq!(chunks[0].text.chars().count(), 50);
    assert_eq!(chunks[1].start, chunks[0].end() - 5 * "日".len());
}

/// A generated Markdown document and the byte offsets of its headings.
#[derive(Debug, Clone)]
struct Document {
    text: String,
    headings: Vec<usize>,
}

fn word() -> impl Strategy<Value = String> {
    prop_oneof![
        "[a-z]{1,8}",
        "[a-zé]{1,6}[.!?,]?",
        Just("日本語".to_owned()),
        Just("🦀".to_owned()),
        "[a-z]{40,90}",
    ]
}

fn block() -> impl Strategy<Value = (u8, String)> {
    let words = || prop::collection::vec(word(), 1..40);
    prop_oneof![
        (1u8..=6, words()).prop_map(|(level, words)| (level, words.join(" "))),
        (Just(0u8), words()).prop_map(|(_, words)| (0, words.join(" "))),
        (Just(0u8), words()).prop_map(|(_, words)| (0, words.join("\n"))),
        (Just(0u8), words())
            .prop_map(|(_, words)| (0, format!("\n```\n# {}\n```\n", words.join(" ")))),
    ]
}

fn document() -> impl Strategy<Value = Document> {
    (prop::collection::vec((block(), "[ \n]{1,4}"), 1..12)).prop_map(|blocks| {
        let mut text = String::new();
        let mut headings = Vec::new();
        for ((level, body), gap) in blocks {
            if level > 0 {
                if !text.is_empty() && !text.ends_with('\n') {
                    text.push('\n');
                }
                headings.push(text.len());
                text.push_str(&"#".repeat(level.into()));
                text.push(' ');
                text.push_str(&body.replace('\n', " "));
                text.push('\n');
            } else {
                text.push_str(&body);
            }
            text.push_str(&gap);
        }
        Document { text, headings }
    })
}

fn chunk_settings() -> impl Strategy<Value = ChunkingSettings> {
    (20usize..300).prop_flat_map(|max_chars| {
        (Just(max_chars), 0..max_chars.div_ceil(2))
            .prop_map(|(max_chars, overlap)| settings(max_chars, overlap))
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]

    #[test]
    fn chunks_are_bounded_slices_that_cover_the_text(doc in document(), settings in chunk_settings()) {
        let text = doc.text.as_str();
        let chunks = chunk_text(text, TextFormat::Markdown, settings);
        let mut covered = vec![false; text.len()];
        for chunk in &chunks {
            prop_assert!(text.is_char_boundary(chunk.start) && text.is_char_boundary(chunk.end()));
            prop_assert_eq!(&text[chunk.start..chunk.end()], chunk.text);
            prop_assert!(!chunk.text.is_empty());
            prop_assert_eq!(chunk.text.trim(), chunk.text);
            prop_assert!(chunk.text.chars().count() <= settings.max_chars,
                "{} chars > {}", chunk.text.chars().count(), settings.max_chars);
            covered[chunk.start..chunk.end()].iter_mut().for_each(|c| *c = true);
        }
        for (offset, c) in text.char_indices() {
            prop_assert!(c.is_whitespace() || covered[offset], "{c:?} at {offset} is in no chunk");
        }
        for pair in chunks.windows(2) {
            prop_assert!(pair[0].start < pair[1].start);
        }
    }

    #[test]
    fn headings_start_chunks_and_chunks_overlap_as_configured(
        doc in document(),
        settings in chunk_settings(),
    ) {
        let text = doc.text.as_str();
        let chunks = chunk_text(text, TextFormat::Markdown, settings);
        for &heading in &doc.headings {
            prop_assert!(chunks.iter().any(|c| c.start == heading), "no chunk starts at heading {heading}");
            prop_assert!(!chunks.iter().any(|c| c.start < heading && heading < c.end()));
        }
        for pair in chunks.windows(2) {
            let (a, b) = (pair[0], pair[1]);
            if doc.headings.contains(&b.start) {
                prop_assert!(b.start >= a.end(), "no overlap across a heading");
                continue;
            }
            if b.start < a.end() {
                let shared = text[b.start..a.end()].chars().count();
                prop_assert!(settings.overlap > 0 && shared <= settings.overlap,
                    "{shared} shared chars, overlap {}", settings.overlap);
            } else {
                // No overlap: none configured, or only whitespace where it would be.
                let gap = &text[a.end()..b.start];
                prop_assert!(gap.trim().is_empty());
                prop_assert!(settings.overlap == 0 || gap.chars().count() >= settings.overlap,
                    "gap {gap:?} shorter than the overlap {}", settings.overlap);
            }
        }
    }
}

#[test]
fn every_place_has_the_path_of_the_headings_above_it() {
    let text = "intro\n# Guide\ntext\n## Install\nsteps\n### Linux\napt\n## Use ##\nrun\n```\n# not a heading\n```\n# Appendix\nend";
    let paths = HeadingPaths::of(text, TextFormat::Markdown);
    let at = |needle: &str| paths.at(text.find(needle).unwrap());
    assert_eq!(at("intro"), "");
    assert_eq!(at("text"), "Guide");
    assert_eq!(at("steps"), "Guide › Install");
    assert_eq!(at("apt"), "Guide › Install › Linux");
    assert_eq!(at("run"), "Guide › Use", "a heading closes the deeper ones");
    assert_eq!(
        at("not a heading"),
        "Guide › Use",
        "fenced code has no headings"
    );
    assert_eq!(at("end"), "Appendix");
    let plain = HeadingPaths::of(text, TextFormat::Plain);
    assert_eq!(plain.at(text.find("apt").unwrap()), "");
}
