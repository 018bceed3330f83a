//! Cutting text to a number of characters, for every crate of bor that does.

/// The first `max_chars` characters (Unicode scalar values) of `text`, or all of it when
/// it is no longer; never cuts inside a character.
pub fn prefix_chars(text: &str, max_chars: usize) -> &str {
    text.char_indices()
        .nth(max_chars)
        .map_or(text, |(end, _)| &text[..end])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_prefix_counts_characters_not_bytes() {
        assert_eq!(prefix_chars("héllo", 2), "hé");
        assert_eq!(prefix_chars("日本語", 3), "日本語");
        assert_eq!(prefix_chars("日本語", 10), "日本語");
        assert_eq!(prefix_chars("abc", 0), "");
        assert_eq!(prefix_chars("", 5), "");
    }
}
