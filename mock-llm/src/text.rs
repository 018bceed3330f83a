//! Text helpers shared by the endpoints: a stable hash, words and streaming tokens.

/// 64-bit FNV-1a: stable across runs and platforms, unlike std's randomised hasher.
pub(crate) fn fnv1a(bytes: &[u8]) -> u64 {
    fnv1a_of_parts(&[bytes])
}

/// [`fnv1a`] of the parts one after the other, without joining them.
pub(crate) fn fnv1a_of_parts(parts: &[&[u8]]) -> u64 {
    const OFFSET_BASIS: u64 = 0xcbf2_9ce4_8422_2325;
    const PRIME: u64 = 0x0000_0100_0000_01b3;
    parts
        .iter()
        .flat_map(|part| part.iter())
        .fold(OFFSET_BASIS, |hash, &byte| {
            (hash ^ u64::from(byte)).wrapping_mul(PRIME)
        })
}

/// Splits text into streaming tokens: each word with the whitespace that follows it.
/// Leading whitespace stays with the first token, so the tokens join back to `text`.
pub(crate) fn tokens(text: &str) -> Vec<String> {
    let mut tokens = Vec::new();
    let mut current = String::new();
    let mut previous_was_space = false;
    for ch in text.chars() {
        let is_space = ch.is_whitespace();
        if !is_space && previous_was_space && current.chars().any(|c| !c.is_whitespace()) {
            tokens.push(std::mem::take(&mut current));
        }
        current.push(ch);
        previous_was_space = is_space;
    }
    if !current.is_empty() {
        tokens.push(current);
    }
    tokens
}

/// Lowercased words: maximal runs of alphanumeric characters.
pub(crate) fn words(text: &str) -> Vec<String> {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|word| !word.is_empty())
        .map(str::to_lowercase)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_are_words_with_trailing_whitespace() {
        assert_eq!(tokens("Hello big  world"), ["Hello ", "big  ", "world"]);
        assert_eq!(tokens("  lead\nnext \n"), ["  lead\n", "next \n"]);
        assert_eq!(tokens("one"), ["one"]);
        assert!(tokens("").is_empty());
        assert_eq!(tokens("   "), ["   "]);
    }

    #[test]
    fn tokens_join_back_to_the_text() {
        let text = " Ünïcode  text,\twith <tool_call>{\"a\": 1}</tool_call> end ";
        assert_eq!(tokens(text).concat(), text);
    }

    #[test]
    fn words_are_lowercased_alphanumeric_runs() {
        assert_eq!(
            words("What is BOR? It's x2."),
            ["what", "is", "bor", "it", "s", "x2"]
        );
    }

    #[test]
    fn fnv1a_matches_the_published_test_vectors() {
        assert_eq!(fnv1a(b""), 0xcbf2_9ce4_8422_2325);
        assert_eq!(fnv1a(b"a"), 0xaf63_dc4c_8601_ec8c);
        assert_eq!(fnv1a(b"foobar"), 0x8594_4171_f739_67e8);
        assert_eq!(fnv1a_of_parts(&[b"foo", b"", b"bar"]), fnv1a(b"foobar"));
    }
}
