//! The frames of one turn as the hub keeps them: numbered 1, 2, … in the order the
//! turn sent them, runs of `delta` (and of `thinking`) frames joined into one text with
//! the end of each frame in it, so that a long answer costs its text and four bytes a
//! frame, and each frame can still be given back as it was sent.

use crate::turn::Frame;

/// A frame with its number in the turn (the SSE `id:`).
#[derive(Debug, Clone, PartialEq)]
pub struct NumberedFrame {
    pub id: u64,
    pub frame: Frame,
}

/// Which text frames a run joins.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum TextKind {
    Delta,
    Thinking,
}

impl TextKind {
    fn of(frame: &Frame) -> Option<(Self, &str)> {
        match frame {
            Frame::Delta { text } => Some((Self::Delta, text)),
            Frame::Thinking { text } => Some((Self::Thinking, text)),
            _ => None,
        }
    }

    fn frame(self, text: String) -> Frame {
        match self {
            Self::Delta => Frame::Delta { text },
            Self::Thinking => Frame::Thinking { text },
        }
    }
}

enum Entry {
    One(NumberedFrame),
    /// Consecutive text frames of one kind, numbered `first_id`, `first_id + 1`, …;
    /// `ends[i]` is where frame `first_id + i` ends in `text`.
    Run {
        kind: TextKind,
        first_id: u64,
        text: String,
        ends: Vec<u32>,
    },
}

/// Bytes a kept frame's fixed part is counted for, besides its text.
const ENTRY_OVERHEAD: usize = 64;

#[derive(Default)]
pub struct KeptFrames {
    entries: Vec<Entry>,
    last_id: u64,
    /// Roughly what the kept frames take in memory.
    bytes: usize,
}

impl KeptFrames {
    pub fn bytes(&self) -> usize {
        self.bytes
    }

    /// Keeps `frame` as the next one and returns its number.
    pub fn push(&mut self, frame: Frame) -> u64 {
        self.last_id += 1;
        let id = self.last_id;
        // A text frame joins a run while the run's text stays under 4 GiB (its ends are
        // `u32`); past that it starts a new run, and a single piece that large is kept
        // as a frame of its own.
        if let Some((kind, piece)) = TextKind::of(&frame)
            && let Ok(piece_end) = u32::try_from(piece.len())
        {
            if let Some(Entry::Run {
                kind: run_kind,
                text,
                ends,
                ..
            }) = self.entries.last_mut()
                && *run_kind == kind
                && let Ok(end) = u32::try_from(text.len() + piece.len())
            {
                text.push_str(piece);
                ends.push(end);
                self.bytes += piece.len() + std::mem::size_of::<u32>();
                return id;
            }
            self.bytes += ENTRY_OVERHEAD + piece.len();
            self.entries.push(Entry::Run {
                kind,
                first_id: id,
                text: piece.to_owned(),
                ends: vec![piece_end],
            });
            return id;
        }
        self.bytes += ENTRY_OVERHEAD + frame.data_json().len();
        self.entries.push(Entry::One(NumberedFrame { id, frame }));
        id
    }

    /// At most `limit` frames after number `after`, in order, each as it was sent.
    pub fn after(&self, after: u64, limit: usize) -> Vec<NumberedFrame> {
        let start = self
            .entries
            .partition_point(|entry| last_id_of(entry) <= after);
        let mut frames = Vec::new();
        for entry in &self.entries[start..] {
            match entry {
                Entry::One(numbered) => frames.push(numbered.clone()),
                Entry::Run {
                    kind,
                    first_id,
                    text,
                    ends,
                } => {
                    // The run's frames up to `after` were read already.
                    let skipped =
                        usize::try_from(after.saturating_sub(first_id - 1)).unwrap_or(usize::MAX);
                    let mut from = skipped
                        .checked_sub(1)
                        .and_then(|index| ends.get(index))
                        .map_or(0, |&end| end as usize);
                    for (index, &end) in ends.iter().enumerate().skip(skipped) {
                        if frames.len() == limit {
                            break;
                        }
                        let end = end as usize;
                        frames.push(NumberedFrame {
                            id: first_id + index as u64,
                            frame: kind.frame(text.get(from..end).unwrap_or_default().to_owned()),
                        });
                        from = end;
                    }
                }
            }
            if frames.len() >= limit {
                frames.truncate(limit);
                break;
            }
        }
        frames
    }
}

fn last_id_of(entry: &Entry) -> u64 {
    match entry {
        Entry::One(numbered) => numbered.id,
        Entry::Run { first_id, ends, .. } => first_id + ends.len() as u64 - 1,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn delta(text: &str) -> Frame {
        Frame::Delta { text: text.into() }
    }

    fn kept(frames: Vec<Frame>) -> KeptFrames {
        let mut kept = KeptFrames::default();
        for frame in frames {
            kept.push(frame);
        }
        kept
    }

    fn numbered(id: u64, frame: Frame) -> NumberedFrame {
        NumberedFrame { id, frame }
    }

    #[test]
    fn frames_are_numbered_from_one_and_given_back_as_sent() {
        let frames = vec![
            Frame::Retry { attempt: 1, max: 2 },
            delta("Hel"),
            delta("lo"),
            Frame::tool_start("c", "list_documents"),
            delta("!"),
        ];
        let kept = kept(frames.clone());
        assert_eq!(kept.last_id, 5);
        assert_eq!(kept.entries.len(), 4, "the first two deltas are one run");
        let expected: Vec<NumberedFrame> = (1..)
            .zip(frames)
            .map(|(id, frame)| numbered(id, frame))
            .collect();
        assert_eq!(kept.after(0, usize::MAX), expected);
        assert_eq!(kept.after(2, usize::MAX), expected[2..]);
        assert_eq!(kept.after(0, 3), expected[..3]);
        assert_eq!(kept.after(1, 1), expected[1..2]);
    }

    #[test]
    fn a_reader_starts_after_any_frame_even_inside_a_run() {
        let kept = kept(vec![delta("a"), delta("bc"), delta("d"), delta("ef")]);
        let ids_and_text = |after, limit| {
            kept.after(after, limit)
                .into_iter()
                .map(|numbered| match numbered.frame {
                    Frame::Delta { text } => (numbered.id, text),
                    other => panic!("{other:?}"),
                })
                .collect::<Vec<_>>()
        };
        let all = |after| ids_and_text(after, usize::MAX);
        assert_eq!(
            all(0),
            vec![
                (1, "a".into()),
                (2, "bc".into()),
                (3, "d".into()),
                (4, "ef".into())
            ]
        );
        assert_eq!(all(2), vec![(3, "d".into()), (4, "ef".into())]);
        assert_eq!(all(3), vec![(4, "ef".into())]);
        assert_eq!(all(4), vec![]);
        assert_eq!(all(99), vec![]);
        assert_eq!(ids_and_text(1, 2), vec![(2, "bc".into()), (3, "d".into())]);
    }

    #[test]
    fn thinking_and_answer_text_are_runs_of_their_own() {
        let frames = vec![
            Frame::Thinking { text: "hm".into() },
            Frame::Thinking { text: "m".into() },
            delta("yes"),
        ];
        let kept = kept(frames.clone());
        assert_eq!(kept.entries.len(), 2);
        assert_eq!(
            kept.after(1, usize::MAX),
            vec![
                numbered(2, frames[1].clone()),
                numbered(3, frames[2].clone())
            ]
        );
    }

    #[test]
    fn a_long_answer_costs_its_text_and_a_few_bytes_a_frame() {
        let mut kept = KeptFrames::default();
        for _ in 0..100_000 {
            kept.push(delta("word "));
        }
        assert_eq!(kept.entries.len(), 1);
        assert!(kept.bytes() <= 100_000 * (5 + 4) + ENTRY_OVERHEAD);
        assert_eq!(
            kept.after(99_999, usize::MAX),
            vec![numbered(100_000, delta("word "))]
        );
    }
}
