//! A cheap look at how deeply a page nests its elements, before it is parsed.
//!
//! Counts start tags against end tags of the elements a page must close, skipping
//! comments, quoted attribute values and the text of raw-text elements (`<script>`,
//! `<style>`, …). Elements whose end tag may be left out (`<p>`, `<li>`, `<td>`, …) and
//! void elements (`<br>`, `<img>`, …) are not counted, so a sloppy real page is not
//! mistaken for a deep one.

use crate::ReadError;

/// Elements with no content.
const VOID: &[&str] = &[
    "area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track",
    "wbr", "param", "keygen",
];
/// Elements whose end tag a page may leave out.
const OPTIONAL_END: &[&str] = &[
    "p", "li", "dt", "dd", "tr", "td", "th", "thead", "tbody", "tfoot", "option", "optgroup", "rb",
    "rp", "rt", "rtc", "colgroup", "caption", "html", "head", "body",
];
/// Elements whose content is text up to their end tag.
const RAW_TEXT: &[&str] = &[
    "script", "style", "textarea", "title", "xmp", "iframe", "noembed", "noframes",
];

/// Refuses `source` when its elements nest deeper than `max_depth`.
pub(super) fn check(source: &str, max_depth: usize) -> Result<(), ReadError> {
    let bytes = source.as_bytes();
    let mut depth = 0usize;
    let mut at = 0;
    while let Some(offset) = bytes[at..].iter().position(|&b| b == b'<') {
        at += offset + 1;
        if bytes[at..].starts_with(b"!--") {
            at = find(bytes, at + 3, b"-->").map_or(bytes.len(), |end| end + 3);
            continue;
        }
        let closing = bytes.get(at) == Some(&b'/');
        let name_start = if closing { at + 1 } else { at };
        let name_end = bytes[name_start..]
            .iter()
            .position(|b| !b.is_ascii_alphanumeric())
            .map_or(bytes.len(), |n| name_start + n);
        if name_end == name_start || !bytes[name_start].is_ascii_alphabetic() {
            continue;
        }
        let name = source[name_start..name_end].to_ascii_lowercase();
        let (tag_end, self_closing) = tag_end(bytes, name_end);
        at = tag_end;
        let counted = !VOID.contains(&name.as_str()) && !OPTIONAL_END.contains(&name.as_str());
        if closing {
            if counted {
                depth = depth.saturating_sub(1);
            }
        } else if RAW_TEXT.contains(&name.as_str()) {
            let closer = format!("</{name}");
            at = find_ignoring_case(bytes, at, closer.as_bytes()).unwrap_or(bytes.len());
        } else if counted && !self_closing {
            depth += 1;
            if depth > max_depth {
                return Err(ReadError::TooDeep(max_depth));
            }
        }
    }
    Ok(())
}

/// Where a tag that started before `from` ends (just after its `>`), and whether it
/// closes itself (`/>`); quoted attribute values may hold `>`.
fn tag_end(bytes: &[u8], from: usize) -> (usize, bool) {
    let mut quote = None;
    for (offset, &byte) in bytes[from..].iter().enumerate() {
        match (quote, byte) {
            (None, b'"' | b'\'') => quote = Some(byte),
            (Some(open), _) if open == byte => quote = None,
            (None, b'>') => {
                let at = from + offset;
                return (at + 1, at > 0 && bytes[at - 1] == b'/');
            }
            _ => {}
        }
    }
    (bytes.len(), false)
}

fn find(bytes: &[u8], from: usize, needle: &[u8]) -> Option<usize> {
    memchr::memmem::find(bytes.get(from..)?, needle).map(|at| from + at)
}

fn find_ignoring_case(bytes: &[u8], from: usize, needle: &[u8]) -> Option<usize> {
    bytes
        .get(from..)?
        .windows(needle.len())
        .position(|window| window.eq_ignore_ascii_case(needle))
        .map(|at| from + at)
}

#[cfg(test)]
mod tests {
    use super::check;
    use crate::ReadError;

    #[test]
    fn real_pages_pass_and_deep_ones_do_not() {
        let page = "<html><body><div><p>one<p>two<ul><li>a<li>b</ul><br><img src='x>y'></div>";
        assert_eq!(check(page, 3), Ok(()));
        let deep = "<div>".repeat(300);
        assert_eq!(check(&deep, 256), Err(ReadError::TooDeep(256)));
        let scripted = format!("<script>{}</script>", "<div>".repeat(300));
        assert_eq!(check(&scripted, 256), Ok(()));
        let commented = format!("<!-- {} -->", "<div>".repeat(300));
        assert_eq!(check(&commented, 256), Ok(()));
    }
}
