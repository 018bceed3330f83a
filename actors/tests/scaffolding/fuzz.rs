//! Fuzzing the filter with text it was not designed around: random Unicode, control
//! characters, and soups of marker fragments (whole, cut short, nested, unbalanced),
//! split anywhere. It must not panic, its output must not depend on the split, and it
//! only ever removes: what it shows and what it reports come from the input.

use bor_actors::scaffolding::registry::{End, FAMILIES};
use proptest::prelude::*;

use super::{Filtered, filter, properties::cut};

/// Every opener, closer and stop token of the registry.
fn marker_tokens() -> Vec<&'static str> {
    let mut tokens = Vec::new();
    for family in FAMILIES {
        tokens.extend(family.openers);
        if let End::Closers { closers, stops, .. } = family.end {
            tokens.extend(closers);
            tokens.extend(stops);
        }
    }
    tokens
}

fn fragment() -> impl Strategy<Value = String> {
    let markers = marker_tokens();
    let cut_markers = markers.clone();
    prop_oneof![
        3 => prop::sample::select(markers).prop_map(str::to_owned),
        // A marker cut short, as at the end of a chunk or of a message.
        2 => (prop::sample::select(cut_markers), 0.0..1.0f64).prop_map(|(marker, fraction)| {
            let mut end = (marker.len() as f64 * fraction) as usize;
            while !marker.is_char_boundary(end) {
                end -= 1;
            }
            marker[..end].to_owned()
        }),
        2 => "[a-z ]{1,12}",
        1 => any::<String>(),
        1 => "[\\x00-\\x1f\\x7f\\u{85}\\u{2028}\\u{feff}]{1,4}",
        1 => prop::sample::select(vec![
            "`", "```", "```json\n", "~~~", "\n", "{", "}", "[", "]", "(", ")", "\"", ":",
            "search_documents", "call:", "{\"name\": \"read_document\", \"arguments\": ",
            "functools[", "Action: ```json\n", "to=functions.", "<", ">", "|", "｜", "▁",
        ]).prop_map(str::to_owned),
    ]
}

/// Whether `part` can be had from `whole` by deleting characters.
fn is_subsequence(part: &str, whole: &str) -> bool {
    let mut whole = whole.chars();
    part.chars().all(|c| whole.any(|w| w == c))
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn marker_soup_never_panics_and_only_removes(
        fragments in prop::collection::vec(fragment(), 0..40),
        cuts in prop::collection::vec(0.0..1.0f64, 0..24),
        forced_open in any::<bool>(),
    ) {
        let input = fragments.concat();
        let whole: Filtered = filter([input.as_str()], forced_open);
        let split: Filtered = filter(cut(&input, &cuts), forced_open);
        prop_assert_eq!(&split.visible, &whole.visible, "input {:?} cut at {:?}", input, cuts);
        prop_assert_eq!(&split.thinking, &whole.thinking);
        prop_assert_eq!(&split.stripped, &whole.stripped);
        prop_assert!(is_subsequence(&whole.visible, &input), "visible {:?} from {:?}", whole.visible, input);
        prop_assert!(is_subsequence(&whole.thinking, &input), "thinking {:?} from {:?}", whole.thinking, input);
        for span in &whole.stripped {
            prop_assert!(input.contains(span.as_str()), "span {:?} not in {:?}", span, input);
        }
    }

    #[test]
    fn any_text_in_tiny_pieces_matches_the_whole(text in any::<String>(), forced_open in any::<bool>()) {
        let pieces: Vec<&str> = text
            .char_indices()
            .map(|(at, c)| &text[at..at + c.len_utf8()])
            .collect();
        let (split, whole) = (filter(pieces, forced_open), filter([text.as_str()], forced_open));
        prop_assert_eq!(split.visible, whole.visible);
        prop_assert_eq!(split.thinking, whole.thinking);
        prop_assert_eq!(split.stripped, whole.stripped);
    }
}
