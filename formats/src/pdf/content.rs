//! A content stream cut down to what the text layer needs, read without building it in
//! memory.
//!
//! pdf-extract decodes a whole content stream into operator objects before it looks at
//! one (some 550 bytes each), and it interprets drawing and colour operators it then
//! throws away. This scan walks the stream's tokens (strings, names, numbers, arrays,
//! dictionaries, inline images) without allocating for them and keeps only the
//! operations that place text, verbatim: so a page of vector drawing costs nothing and
//! the operators that remain, with their operands, can be counted before anything is
//! decoded. lopdf parses
//! content streams only into that whole-stream form, hence this scanner of its own.

/// The operators pdf-extract acts on for text: text objects and state, the text
/// shown, the transformation and graphics-state stack, and forms (`Do`).
const TEXT_OPERATORS: &[&[u8]] = &[
    b"BT", b"ET", b"Tc", b"Tw", b"Tz", b"TL", b"Tf", b"Ts", b"Tm", b"Td", b"TD", b"T*", b"Tj",
    b"TJ", b"cm", b"q", b"Q", b"Do",
];

/// A content stream's text operations.
#[derive(Debug, Default, PartialEq, Eq)]
pub(super) struct TextOperations {
    /// The operations kept, each with its operands, one a line.
    pub content: Vec<u8>,
    /// The operations kept, each counted once for its operator and once for each
    /// object among its operands (a number, a string, a name, an array…): what
    /// decoding them costs.
    pub operators: usize,
    /// The names of the forms drawn (`/Name Do`), in order, repeats included.
    pub drawn: Vec<Vec<u8>>,
}

fn is_whitespace(byte: u8) -> bool {
    matches!(byte, b'\0' | b'\t' | b'\n' | b'\x0C' | b'\r' | b' ')
}

fn is_delimiter(byte: u8) -> bool {
    matches!(
        byte,
        b'(' | b')' | b'<' | b'>' | b'[' | b']' | b'{' | b'}' | b'/' | b'%'
    )
}

/// The end of the run of regular characters (a number, a keyword, a name's body)
/// starting at `at`.
fn regular_end(content: &[u8], at: usize) -> usize {
    content[at..]
        .iter()
        .position(|&byte| is_whitespace(byte) || is_delimiter(byte))
        .map_or(content.len(), |length| at + length)
}

/// The end of the literal string opening at `at`: balanced parentheses, `\` escapes.
fn literal_end(content: &[u8], at: usize) -> usize {
    let mut depth = 0usize;
    let mut index = at;
    while index < content.len() {
        match content[index] {
            b'\\' => index += 1,
            b'(' => depth += 1,
            b')' => {
                depth -= 1;
                if depth == 0 {
                    return index + 1;
                }
            }
            _ => {}
        }
        index += 1;
    }
    content.len()
}

/// The end of an inline image whose `BI` ends at `at`: past its `ID`, the data, and
/// the `EI` that follows whitespace.
fn inline_image_end(content: &[u8], at: usize) -> usize {
    let Some(data) = memchr::memmem::find(&content[at..], b"ID").map(|found| at + found + 2) else {
        return content.len();
    };
    let mut index = data;
    while let Some(found) = memchr::memmem::find(&content[index..], b"EI") {
        let end = index + found;
        let before = end.checked_sub(1).map(|before| content[before]);
        let after = content.get(end + 2).copied();
        if before.is_some_and(is_whitespace) && after.is_none_or(is_whitespace) {
            return end + 2;
        }
        index = end + 2;
    }
    content.len()
}

/// The text operations of `content`; the scan stops once more than `max_operators`
/// are kept.
pub(super) fn text_operations(content: &[u8], max_operators: usize) -> TextOperations {
    let mut kept = TextOperations::default();
    let mut at = 0;
    // Where the operands of the operator to come began, and the last name among them.
    let mut operands: Option<usize> = None;
    let mut operand_objects = 0;
    let mut name: Option<(usize, usize)> = None;
    while at < content.len() && kept.operators <= max_operators {
        let byte = content[at];
        let next = content.get(at + 1).copied();
        let end = match byte {
            _ if is_whitespace(byte) => {
                at += 1;
                continue;
            }
            b'%' => {
                at = content[at..]
                    .iter()
                    .position(|&byte| byte == b'\n' || byte == b'\r')
                    .map_or(content.len(), |length| at + length);
                continue;
            }
            b'(' => literal_end(content, at),
            b'<' | b'>' if next == Some(byte) => at + 2,
            b'<' => content[at..]
                .iter()
                .position(|&byte| byte == b'>')
                .map_or(content.len(), |length| at + length + 1),
            b'/' => {
                let end = regular_end(content, at + 1);
                name = Some((at + 1, end));
                end
            }
            _ if is_delimiter(byte) => at + 1,
            _ => {
                let end = regular_end(content, at);
                let token = &content[at..end];
                let is_operand = matches!(token[0], b'0'..=b'9' | b'+' | b'-' | b'.')
                    || matches!(token, b"true" | b"false" | b"null");
                if !is_operand {
                    let end = if token == b"BI" {
                        inline_image_end(content, end)
                    } else {
                        end
                    };
                    if TEXT_OPERATORS.contains(&token) {
                        kept.content
                            .extend_from_slice(&content[operands.unwrap_or(at)..end]);
                        kept.content.push(b'\n');
                        kept.operators += 1 + operand_objects;
                        if token == b"Do"
                            && let Some((start, name_end)) = name
                        {
                            kept.drawn.push(content[start..name_end].to_vec());
                        }
                    }
                    operands = None;
                    operand_objects = 0;
                    name = None;
                    at = end;
                    continue;
                }
                end
            }
        };
        operands.get_or_insert(at);
        if !matches!(byte, b']' | b'>' | b')' | b'}') {
            operand_objects += 1;
        }
        at = end.max(at + 1);
    }
    kept
}

#[cfg(test)]
mod tests {
    use super::text_operations;

    #[test]
    fn drawing_and_colour_are_dropped_and_text_is_kept_verbatim() {
        let content = b"q 1 0 0 1 5 5 cm 0.5 g 10 10 m 20 20 l S\n\
            BT /F1 12 Tf 72 700 Td (a \\) (b) c) Tj [(x) -20 (y)] TJ <41> Tj ET\n\
            BI /W 2 /H 1 /BPC 8 ID \x00Tj\xffEI x EI\nQ % Tj in a comment\n/Im1 Do";
        let kept = text_operations(content, 100);
        assert_eq!(
            String::from_utf8_lossy(&kept.content),
            "q\n1 0 0 1 5 5 cm\nBT\n/F1 12 Tf\n72 700 Td\n(a \\) (b) c) Tj\n\
             [(x) -20 (y)] TJ\n<41> Tj\nET\nQ\n/Im1 Do\n"
        );
        // The operators, and the objects among their operands: 6 for `cm`, 2 for `Tf`,
        // 2 for `Td`, 1 for each `Tj`, 4 for `TJ` (the array, two strings, a number) and
        // 1 for `Do`.
        assert_eq!(kept.operators, 11 + 6 + 2 + 2 + 1 + 4 + 1 + 1);
        assert_eq!(kept.drawn, vec![b"Im1".to_vec()]);
    }

    #[test]
    fn damaged_content_ends_without_panicking() {
        for content in [
            &b"(unclosed Tj"[..],
            b"<41",
            b"BI /W 1 ID",
            b")) >> ] Tj",
            b"/",
        ] {
            let kept = text_operations(content, 100);
            assert!(kept.operators <= 1, "{kept:?}");
        }
    }

    #[test]
    fn the_scan_stops_past_its_bound() {
        let content = b"(a) Tj ".repeat(1000);
        assert_eq!(text_operations(&content, 10).operators, 12);
    }
}
