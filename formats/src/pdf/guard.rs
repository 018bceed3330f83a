//! Bounds a PDF before it is parsed: the PDF parser unpacks every compressed stream in
//! full, so the streams are first unpacked here into a counter, and a file whose
//! streams together unpack to more than [`Limits::max_unpacked_bytes`] is refused.
//!
//! A stream is found by its `stream` keyword; its dictionary is the text since the
//! object began. Flate streams (zlib, or raw deflate as some writers make them) are
//! counted, through every Flate filter of a chain; other filters expand little
//! (ASCII hex and base-85, run length at most 128 to 1) or are rare (LZW).

use std::io::{self, Read, Write};

use flate2::read::{DeflateDecoder, ZlibDecoder};

use crate::{Limits, ReadError};
use memchr::memmem;

/// How far before a `stream` keyword its dictionary is looked for.
const DICTIONARY_WINDOW: usize = 2048;

/// Refuses `bytes` when its Flate streams unpack to more than the limit.
pub(super) fn check_unpacked_size(bytes: &[u8], limits: &Limits) -> Result<(), ReadError> {
    let mut budget = limits.max_unpacked_bytes;
    let mut at = 0;
    while let Some(found) = memmem::find(&bytes[at..], b"stream") {
        let keyword = at + found;
        at = keyword + b"stream".len();
        if keyword >= 3 && &bytes[keyword - 3..keyword] == b"end" {
            continue;
        }
        let data_start = match bytes.get(at..at + 2) {
            Some([b'\r', b'\n']) => at + 2,
            Some([b'\n', _]) | Some([b'\r', _]) => at + 1,
            _ => continue,
        };
        let window_start = keyword.saturating_sub(DICTIONARY_WINDOW);
        let window = &bytes[window_start..keyword];
        let dictionary = match memmem::rfind(window, b" obj") {
            Some(start) => &window[start..],
            None => window,
        };
        let flate_layers = count(dictionary, b"/FlateDecode") + count_abbreviated(dictionary);
        if flate_layers == 0 {
            continue;
        }
        let unpacked = unpacked_size(&bytes[data_start..], flate_layers, budget)?;
        if unpacked > budget {
            return Err(limits.unpacked_too_large());
        }
        budget -= unpacked;
    }
    Ok(())
}

/// How many bytes `data` unpacks to through `layers` Flate filters (at most `budget`
/// + 1: counting stops there). Undecodable data counts what decoded before the error.
fn unpacked_size(data: &[u8], layers: usize, budget: u64) -> Result<u64, ReadError> {
    let zlib = count_through(ZlibDecoder::new(data), layers.saturating_sub(1), budget);
    if zlib > 0 {
        return Ok(zlib);
    }
    Ok(count_through(
        DeflateDecoder::new(data),
        layers.saturating_sub(1),
        budget,
    ))
}

/// Bytes out of `reader` after `more_layers` further zlib layers, up to `budget` + 1.
fn count_through<R: Read>(reader: R, more_layers: usize, budget: u64) -> u64 {
    let mut reader: Box<dyn Read + '_> = Box::new(reader);
    for _ in 0..more_layers.min(4) {
        reader = Box::new(ZlibDecoder::new(reader));
    }
    let mut counter = Counter(0);
    let _ = io::copy(&mut reader.take(budget + 1), &mut counter);
    counter.0
}

/// A sink that only counts.
struct Counter(u64);

impl Write for Counter {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.0 += buf.len() as u64;
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

fn count(haystack: &[u8], needle: &[u8]) -> usize {
    memmem::find_iter(haystack, needle).count()
}

/// `/Fl` as a whole name (the abbreviation inline images and some writers use).
fn count_abbreviated(haystack: &[u8]) -> usize {
    haystack
        .windows(4)
        .filter(|w| &w[..3] == b"/Fl" && !w[3].is_ascii_alphanumeric())
        .count()
}

#[cfg(test)]
mod tests {
    use std::io::Write;

    use flate2::Compression;
    use flate2::write::ZlibEncoder;

    use super::check_unpacked_size;
    use crate::{Limits, ReadError};

    fn pdf_with_stream(unpacked: usize) -> Vec<u8> {
        let mut encoder = ZlibEncoder::new(Vec::new(), Compression::best());
        encoder
            .write_all(&vec![b' '; unpacked])
            .expect("compresses");
        let data = encoder.finish().expect("compresses");
        let mut pdf = b"%PDF-1.4\n4 0 obj\n<< /Length ".to_vec();
        pdf.extend(format!("{} /Filter /FlateDecode >>\nstream\n", data.len()).as_bytes());
        pdf.extend(&data);
        pdf.extend(b"\nendstream\nendobj\n");
        pdf
    }

    #[test]
    fn a_stream_that_unpacks_past_the_limit_is_refused() {
        let limits = Limits {
            max_unpacked_bytes: 1 << 20,
            ..Limits::default()
        };
        assert_eq!(
            check_unpacked_size(&pdf_with_stream(1 << 19), &limits),
            Ok(())
        );
        assert!(matches!(
            check_unpacked_size(&pdf_with_stream(4 << 20), &limits),
            Err(ReadError::TooLarge(_))
        ));
    }
}
