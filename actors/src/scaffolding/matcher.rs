//! Lookup tables derived once from the registry: which bytes can start a decision, which
//! markers hang on each of them, what each span ends with.

use std::sync::LazyLock;

use super::registry::{End, FAMILIES, Position, Role};

/// The tables, built on first use.
pub(super) static TABLES: LazyLock<Tables> = LazyLock::new(Tables::build);

/// One marker text, as an opener of its family or as a closer met on its own.
#[derive(Debug)]
pub(super) struct Marker {
    pub text: &'static [u8],
    /// Offset of the marker's anchor byte: the first byte that is not an ASCII letter,
    /// digit or space. Scanning stops only at anchor bytes and looks back this far.
    pub anchor: usize,
    /// Index of the family in `FAMILIES`.
    pub family: usize,
    /// A closer met outside its span.
    pub lone_closer: bool,
}

/// What ends a span, and what is done with it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum SpanEndKind {
    /// A closer: part of the span's markup.
    Close,
    /// The start of what follows: the span ends before it.
    Stop,
    /// The family's own opener inside its reasoning span: dropped.
    Nested,
}

/// The ways one family's span can end, longest first.
#[derive(Debug, Default)]
pub(super) struct SpanEnds {
    /// Distinct first bytes of `ends`.
    firsts: Vec<u8>,
    pub ends: Vec<(&'static [u8], SpanEndKind)>,
}

impl SpanEnds {
    /// Position of the next byte in `hay` that may start one of the ends.
    pub fn next_candidate(&self, hay: &[u8]) -> Option<usize> {
        match *self.firsts.as_slice() {
            [] => None,
            [a] => memchr::memchr(a, hay),
            [a, b] => memchr::memchr2(a, b, hay),
            [a, b, c] => memchr::memchr3(a, b, c, hay),
            _ => hay.iter().position(|byte| self.firsts.contains(byte)),
        }
    }
}

#[derive(Debug)]
pub(super) struct Tables {
    /// Bytes at which the text scan stops: marker anchors and code-span backticks/tildes.
    pub triggers: [bool; 256],
    /// Markers by anchor byte, the earliest-starting and then the longest first.
    pub by_anchor: Vec<Vec<Marker>>,
    /// Markers that only count at the very start of a message.
    pub message_start: Vec<Marker>,
    /// Marker texts by first byte, for holding back a chunk's tail that may start one.
    by_first: Vec<Vec<&'static [u8]>>,
    /// Length of the longest marker text starting with each byte (0: none).
    longest_by_first: [usize; 256],
    longest: usize,
    /// Span ends, by family index.
    pub span_ends: Vec<SpanEnds>,
}

/// The anchor of a marker text, if it has one.
pub(super) fn anchor_of(text: &[u8]) -> Option<usize> {
    text.iter()
        .position(|byte| !(byte.is_ascii_alphanumeric() || *byte == b' '))
}

impl Tables {
    fn build() -> Self {
        let mut tables = Tables {
            triggers: [false; 256],
            by_anchor: (0..256).map(|_| Vec::new()).collect(),
            message_start: Vec::new(),
            by_first: (0..256).map(|_| Vec::new()).collect(),
            longest_by_first: [0; 256],
            longest: 1,
            span_ends: FAMILIES.iter().map(span_ends).collect(),
        };
        tables.triggers[usize::from(b'`')] = true;
        tables.triggers[usize::from(b'~')] = true;
        let mut seen: Vec<&[u8]> = Vec::new();
        for (family, entry) in FAMILIES.iter().enumerate() {
            for opener in entry.openers {
                tables.add(
                    Marker {
                        text: opener.as_bytes(),
                        anchor: 0,
                        family,
                        lone_closer: false,
                    },
                    &mut seen,
                );
            }
        }
        for (family, entry) in FAMILIES.iter().enumerate() {
            if let End::Closers {
                closers,
                lone_closers: true,
                ..
            } = entry.end
            {
                for closer in closers {
                    tables.add(
                        Marker {
                            text: closer.as_bytes(),
                            anchor: 0,
                            family,
                            lone_closer: true,
                        },
                        &mut seen,
                    );
                }
            }
        }
        for markers in &mut tables.by_anchor {
            markers.sort_by(|a, b| {
                b.anchor
                    .cmp(&a.anchor)
                    .then(b.text.len().cmp(&a.text.len()))
            });
        }
        tables
    }

    /// Registers a marker; a text already registered keeps its first meaning.
    fn add(&mut self, mut marker: Marker, seen: &mut Vec<&'static [u8]>) {
        if seen.contains(&marker.text) {
            return;
        }
        seen.push(marker.text);
        if matches!(FAMILIES[marker.family].at, Position::MessageStart(_)) && !marker.lone_closer {
            self.message_start.push(marker);
            return;
        }
        let Some(anchor) = anchor_of(marker.text) else {
            return;
        };
        marker.anchor = anchor;
        self.longest = self.longest.max(marker.text.len());
        self.triggers[usize::from(marker.text[anchor])] = true;
        let first = usize::from(marker.text[0]);
        self.by_first[first].push(marker.text);
        self.longest_by_first[first] = self.longest_by_first[first].max(marker.text.len());
        self.by_anchor[usize::from(marker.text[anchor])].push(marker);
    }

    /// Where the undecided tail of `bytes[from..]` starts: the first position whose rest
    /// is a proper prefix of some marker (so it may still become one), else the end.
    pub fn held_tail(&self, bytes: &[u8], from: usize) -> usize {
        let start = from.max(bytes.len().saturating_sub(self.longest - 1));
        (start..bytes.len())
            .find(|&at| {
                let tail = &bytes[at..];
                let first = usize::from(tail[0]);
                self.longest_by_first[first] > tail.len()
                    && self.by_first[first].iter().any(|text| {
                        text.len() > tail.len() && tail.iter().zip(*text).all(|(a, b)| a == b)
                    })
            })
            .unwrap_or(bytes.len())
    }
}

fn span_ends(family: &super::registry::Family) -> SpanEnds {
    let mut ends = Vec::new();
    if let End::Closers { closers, stops, .. } = family.end {
        ends.extend(
            closers
                .iter()
                .map(|text| (text.as_bytes(), SpanEndKind::Close)),
        );
        ends.extend(
            stops
                .iter()
                .map(|text| (text.as_bytes(), SpanEndKind::Stop)),
        );
        if family.role == Role::Reasoning {
            let markup_openers = family
                .openers
                .iter()
                .filter(|text| anchor_of(text.as_bytes()).is_some());
            ends.extend(markup_openers.map(|text| (text.as_bytes(), SpanEndKind::Nested)));
        }
    }
    ends.sort_by_key(|(text, _)| std::cmp::Reverse(text.len()));
    let mut firsts: Vec<u8> = ends.iter().map(|(text, _)| text[0]).collect();
    firsts.sort_unstable();
    firsts.dedup();
    SpanEnds { firsts, ends }
}
