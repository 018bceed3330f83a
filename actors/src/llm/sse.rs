//! Server-sent events framing of an upstream body: bytes as they arrive in, the data of
//! each complete event out. Lines end with LF, CRLF or CR; the `data` fields of an event
//! are joined with newlines; other fields and comments are skipped (bor needs only the
//! data); a blank line ends the event. Incremental and pure, so a line split across
//! network reads, or a UTF-8 character split between two reads, is put back together.

use memchr::memchr2;

/// The longest stretch of a stream without an event boundary (a blank line) that is
/// buffered; a longer one is an unreadable stream, not an answer.
pub const MAX_EVENT_BYTES: usize = 1024 * 1024;

/// The UTF-8 byte order mark.
const BOM: &[u8] = b"\xef\xbb\xbf";

/// Why a body is not a readable event stream.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SseError {
    #[error("an event of the stream is longer than {MAX_EVENT_BYTES} bytes")]
    EventTooLong,
    #[error("the data of an event is not UTF-8")]
    NotUtf8,
}

/// The state of one event stream.
#[derive(Debug, Default)]
pub struct SseFramer {
    /// The start of a line whose end has not arrived yet.
    partial: Vec<u8>,
    /// The data of the event being read, lines joined with `\n`.
    data: Vec<u8>,
    has_data: bool,
    /// The previous chunk ended with CR: an LF that starts the next one ends no line.
    after_cr: bool,
    /// Nothing has been read yet (a byte order mark may open the stream).
    at_start: bool,
    /// Bytes since the last blank line.
    since_boundary: usize,
}

impl SseFramer {
    pub fn new() -> SseFramer {
        SseFramer {
            at_start: true,
            ..SseFramer::default()
        }
    }

    /// Reads `bytes`, calling `on_data` with the data of every event they complete, in
    /// order. Stops at the first error, of the framing or of `on_data`.
    pub fn push<E: From<SseError>>(
        &mut self,
        mut bytes: &[u8],
        mut on_data: impl FnMut(&str) -> Result<(), E>,
    ) -> Result<(), E> {
        if self.at_start {
            // A byte order mark may open the stream, and may itself arrive in pieces.
            self.partial.extend_from_slice(bytes);
            if self.partial.len() < BOM.len() && BOM.starts_with(&self.partial) {
                return Ok(());
            }
            self.at_start = false;
            let opening = std::mem::take(&mut self.partial);
            return self.push(opening.strip_prefix(BOM).unwrap_or(&opening), on_data);
        }
        if self.after_cr && !bytes.is_empty() {
            self.after_cr = false;
            bytes = bytes.strip_prefix(b"\n").unwrap_or(bytes);
        }
        while let Some(end) = memchr2(b'\n', b'\r', bytes) {
            let ending_len = match (bytes[end], bytes.get(end + 1)) {
                (b'\r', Some(b'\n')) => 2,
                (b'\r', None) => {
                    self.after_cr = true;
                    1
                }
                _ => 1,
            };
            if self.partial.is_empty() {
                self.line(&bytes[..end], 0, &mut on_data)?;
            } else {
                let mut line = std::mem::take(&mut self.partial);
                let counted = line.len();
                line.extend_from_slice(&bytes[..end]);
                let result = self.line(&line, counted, &mut on_data);
                line.clear();
                self.partial = line;
                result?;
            }
            bytes = &bytes[end + ending_len..];
        }
        self.partial.extend_from_slice(bytes);
        self.count(bytes.len())?;
        Ok(())
    }

    fn count(&mut self, bytes: usize) -> Result<(), SseError> {
        self.since_boundary += bytes;
        if self.since_boundary > MAX_EVENT_BYTES {
            return Err(SseError::EventTooLong);
        }
        Ok(())
    }

    /// One complete line (without its ending), whose first `counted` bytes were counted
    /// towards the bound while the line was partial.
    fn line<E: From<SseError>>(
        &mut self,
        line: &[u8],
        counted: usize,
        on_data: &mut impl FnMut(&str) -> Result<(), E>,
    ) -> Result<(), E> {
        if line.is_empty() {
            self.since_boundary = 0;
            if !self.has_data {
                return Ok(());
            }
            self.has_data = false;
            let data = std::str::from_utf8(&self.data).map_err(|_| SseError::NotUtf8);
            let result = data.map_err(E::from).and_then(&mut *on_data);
            self.data.clear();
            return result;
        }
        self.count(line.len() + 1 - counted)?;
        let (name, value) = match memchr::memchr(b':', line) {
            Some(colon) => {
                let value = &line[colon + 1..];
                (&line[..colon], value.strip_prefix(b" ").unwrap_or(value))
            }
            None => (line, &b""[..]),
        };
        if name == b"data" {
            if self.has_data {
                self.data.push(b'\n');
            }
            self.data.extend_from_slice(value);
            self.has_data = true;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn events(chunks: &[&[u8]]) -> Result<Vec<String>, SseError> {
        let mut framer = SseFramer::new();
        let mut out = Vec::new();
        for chunk in chunks {
            framer.push(chunk, |data: &str| -> Result<(), SseError> {
                out.push(data.to_owned());
                Ok(())
            })?;
        }
        Ok(out)
    }

    #[test]
    fn events_end_at_blank_lines_whatever_the_line_endings() {
        let body = b"data: a\n\ndata: b\r\n\r\ndata: c\r\rdata:d\n\n";
        assert_eq!(events(&[body]).unwrap(), ["a", "b", "c", "d"]);
    }

    #[test]
    fn data_lines_are_joined_and_other_fields_skipped() {
        let body = b": comment\nevent: x\nid: 7\nretry: 10\ndata: one\ndata\ndata:  two\n\n";
        assert_eq!(events(&[body]).unwrap(), ["one\n\n two"]);
        assert_eq!(events(&[b"event: only\n\n"]).unwrap(), Vec::<String>::new());
    }

    #[test]
    fn any_split_gives_the_same_events() {
        let body = "\u{feff}data: {\"é\": \"日本\"}\r\n\r\ndata: [DONE]\r\n\r\n".as_bytes();
        let whole = events(&[body]).unwrap();
        assert_eq!(whole, ["{\"é\": \"日本\"}", "[DONE]"]);
        for cut in 0..body.len() {
            assert_eq!(
                events(&[&body[..cut], &body[cut..]]).unwrap(),
                whole,
                "cut at {cut}"
            );
        }
        let bytes: Vec<&[u8]> = body.chunks(1).collect();
        assert_eq!(events(&bytes).unwrap(), whole);
        // An empty read between a CR and its LF changes nothing.
        assert_eq!(events(&[b"data: a\r", b"", b"\n\r\n"]).unwrap(), ["a"]);
        assert_eq!(
            events(&[b"data: \r", b"", b"\n"]).unwrap(),
            Vec::<String>::new()
        );
    }

    #[test]
    fn an_incomplete_event_is_not_delivered() {
        assert_eq!(events(&[b"data: a\n\ndata: b\n"]).unwrap(), ["a"]);
    }

    #[test]
    fn invalid_utf8_data_is_an_error() {
        assert_eq!(events(&[b"data: \xff\n\n"]), Err(SseError::NotUtf8));
    }

    #[test]
    fn an_endless_event_is_refused() {
        let line = format!("data: {}\n", "x".repeat(MAX_EVENT_BYTES / 4));
        let chunks: Vec<&[u8]> = (0..5).map(|_| line.as_bytes()).collect();
        assert_eq!(events(&chunks), Err(SseError::EventTooLong));
        let endless = vec![b'x'; MAX_EVENT_BYTES + 1];
        assert_eq!(events(&[&endless]), Err(SseError::EventTooLong));
        let event = format!("data: {}\n\n", "x".repeat(MAX_EVENT_BYTES / 2));
        let fine: Vec<&[u8]> = (0..5).map(|_| event.as_bytes()).collect();
        assert_eq!(events(&fine).unwrap().len(), 5);
    }

    #[test]
    fn an_event_split_across_reads_counts_once_towards_the_bound() {
        // 600 KiB in one data line, arriving in reads of 64 KiB: within the bound.
        let event = format!("data: {}\n\n", "x".repeat(600 * 1024));
        let chunks: Vec<&[u8]> = event.as_bytes().chunks(64 * 1024).collect();
        let delivered = events(&chunks).unwrap();
        assert_eq!(delivered.len(), 1);
        assert_eq!(delivered[0].len(), 600 * 1024);
    }
}
