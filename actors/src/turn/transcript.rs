//! What a turn has produced so far, as plain data: its path, counters, the sources given
//! to the model, the answer within its bound, and its timing. The TurnActor feeds it as
//! the turn goes and makes the `done` frame and the `query_log` row from it.

use std::time::Instant;

use chrono::{DateTime, Utc};
use uuid::Uuid;

use super::frames::DoneFrame;
use super::messages::TurnSpec;
use crate::knowledge::ChunkHit;
use crate::llm::{ChatMessage, Usage};
use crate::record::{Source, TokenUsage, TurnOutcome, TurnPath, TurnRecord, snippet_of};
use crate::text::prefix_chars;

#[derive(Debug)]
pub(super) struct Transcript {
    pub path: TurnPath,
    pub counters: Counters,
    /// Chunks given to the model so far (retrieval context and search results), in the
    /// order of their numbers.
    sources: Vec<Source>,
    /// Every visible text sent as `delta`.
    answer: String,
    bound: AnswerBound,
    created_at: DateTime<Utc>,
    started: Instant,
    first_delta_ms: Option<u64>,
    /// Tokens of the chat requests that ended.
    usage: TokenUsage,
    /// The chat request under way, for an estimate of what it has taken so far.
    open_request: Option<OpenRequest>,
}

/// A chat request sent and not yet ended: what bor's estimate of its tokens counts.
#[derive(Debug, Clone, Copy)]
struct OpenRequest {
    prompt_chars: usize,
    reply_chars: usize,
}

#[derive(Debug, Default, Clone, PartialEq)]
pub(super) struct Counters {
    /// Chat requests sent (final and recovery included, retries not).
    pub rounds: u32,
    /// Rounds that ended with tool calls.
    pub tool_rounds: u32,
    pub tool_calls: u32,
    pub retries: u32,
    pub scaffold_stripped: u64,
    pub recovered: bool,
}

/// `BOR_MAX_ANSWER_CHARS`: characters of answer and reasoning together.
#[derive(Debug)]
struct AnswerBound {
    max_chars: usize,
    /// Characters of answer and reasoning sent so far.
    kept_chars: usize,
    /// The bound was reached: the turn ends with what was sent.
    truncated: bool,
}

/// Who the turn is and what it ran with: what the row records besides the transcript.
pub(super) struct TurnIdentity<'a> {
    pub turn_id: Uuid,
    pub spec: &'a TurnSpec,
    pub query: &'a str,
    pub chat_model: &'a str,
}

impl Transcript {
    pub fn new(max_answer_chars: usize) -> Self {
        Self {
            path: TurnPath::Undecided,
            counters: Counters::default(),
            sources: Vec::new(),
            answer: String::new(),
            bound: AnswerBound {
                max_chars: max_answer_chars,
                kept_chars: 0,
                truncated: false,
            },
            created_at: Utc::now(),
            started: Instant::now(),
            first_delta_ms: None,
            usage: TokenUsage::default(),
            open_request: None,
        }
    }

    /// A chat request of `messages` was sent.
    pub fn request_sent(&mut self, messages: &[ChatMessage]) {
        self.settle_open_request(None);
        let prompt_chars = messages.iter().map(message_chars).sum();
        self.open_request = Some(OpenRequest {
            prompt_chars,
            reply_chars: 0,
        });
    }

    /// Text of the reply (answer, reasoning, scaffolding) arrived.
    pub fn reply_received(&mut self, text: &str) {
        if let Some(open) = &mut self.open_request {
            open.reply_chars += text.chars().count();
        }
    }

    /// The request ended: its tokens are the server's `usage`, else bor's estimate
    /// (with the characters of the tool calls it made).
    pub fn request_ended(&mut self, reported: Option<Usage>, tool_call_chars: usize) {
        if let Some(open) = &mut self.open_request {
            open.reply_chars += tool_call_chars;
        }
        self.settle_open_request(reported);
    }

    /// The request failed: what it streamed before failing is estimated; one that
    /// failed before any reply took nothing.
    pub fn request_failed(&mut self) {
        if self.open_request.is_some_and(|open| open.reply_chars == 0) {
            self.open_request = None;
        }
        self.settle_open_request(None);
    }

    fn settle_open_request(&mut self, reported: Option<Usage>) {
        if let Some(open) = self.open_request.take() {
            self.usage = self.usage.plus(request_usage(open, reported));
        }
    }

    /// Tokens so far: the ended requests, and the one under way as estimated.
    pub fn usage(&self) -> TokenUsage {
        match self.open_request {
            Some(open) => self.usage.plus(request_usage(open, None)),
            None => self.usage,
        }
    }

    /// The part of `text` (answer or reasoning) the bound leaves room for, counted as
    /// sent; `None` when nothing is left. Marks the turn truncated once the bound is
    /// reached.
    pub fn within_bound(&mut self, text: String) -> Option<String> {
        let bound = &mut self.bound;
        if bound.truncated {
            return None;
        }
        let room = bound.max_chars.saturating_sub(bound.kept_chars);
        let kept = prefix_chars(&text, room);
        let text = if kept.len() < text.len() {
            bound.truncated = true;
            kept.to_owned()
        } else {
            text
        };
        bound.kept_chars += text.chars().count();
        if bound.kept_chars >= bound.max_chars {
            bound.truncated = true;
        }
        (!text.is_empty()).then_some(text)
    }

    pub fn is_truncated(&self) -> bool {
        self.bound.truncated
    }

    /// Visible text sent as `delta` (already within the bound); the first one sets the
    /// time to first token.
    pub fn push_answer(&mut self, text: &str) {
        self.answer.push_str(text);
        if self.first_delta_ms.is_none() {
            self.first_delta_ms = Some(self.elapsed_ms());
        }
    }

    /// Records the chunks given to the model and answers their numbers: a chunk given
    /// before keeps its number (and its best score), a new one takes the next.
    pub fn add_sources(&mut self, hits: &[ChunkHit]) -> Vec<u32> {
        hits.iter()
            .map(|hit| {
                if let Some(known) = self.sources.iter_mut().find(|s| s.chunk_id == hit.chunk_id) {
                    known.score = known.score.max(hit.score);
                    return known.n;
                }
                let n = u32::try_from(self.sources.len() + 1).unwrap_or(u32::MAX);
                self.sources.push(source_of(hit, n));
                n
            })
            .collect()
    }

    /// The `query_log` row of the turn ending with `outcome`.
    pub fn record(&self, turn: &TurnIdentity<'_>, outcome: TurnOutcome) -> TurnRecord {
        TurnRecord {
            turn_id: turn.turn_id,
            conversation_id: turn.spec.conversation_id,
            user_id: turn.spec.user_id,
            created_at: self.created_at,
            question: turn.spec.question.clone(),
            query: turn.query.to_owned(),
            answer: self.answer.clone(),
            path: self.path,
            outcome,
            chat_model: turn.chat_model.to_owned(),
            rounds: self.counters.rounds,
            tool_calls: self.counters.tool_calls,
            retries: self.counters.retries,
            scaffold_stripped: self.counters.scaffold_stripped,
            recovered: self.counters.recovered,
            sources: ranked_sources(&self.sources),
            first_token_ms: self.first_delta_ms,
            elapsed_ms: self.elapsed_ms(),
            key_id: turn.spec.key_id,
            usage: self.usage(),
            version_of: turn.spec.version_of,
        }
    }

    /// The `done` frame of a turn whose row is `record`.
    pub fn done_frame(&self, record: &TurnRecord) -> DoneFrame {
        DoneFrame {
            turn_id: record.turn_id,
            conversation_id: record.conversation_id,
            path: record.path,
            rounds: record.rounds,
            retries: record.retries,
            scaffold_stripped: record.scaffold_stripped,
            recovered: record.recovered,
            query: record.query.clone(),
            sources: record.sources.clone(),
            truncated: self.bound.truncated,
            stopped: record.outcome == TurnOutcome::Stopped,
        }
    }

    fn elapsed_ms(&self) -> u64 {
        u64::try_from(self.started.elapsed().as_millis()).unwrap_or(u64::MAX)
    }
}

/// A request's tokens: as reported, else estimated from its characters.
fn request_usage(open: OpenRequest, reported: Option<Usage>) -> TokenUsage {
    match reported {
        Some(usage) => TokenUsage {
            prompt_tokens: usage.prompt_tokens,
            completion_tokens: usage.completion_tokens,
            estimated: false,
        },
        None => TokenUsage::estimate(open.prompt_chars, open.reply_chars),
    }
}

/// The characters of a message the model reads: its text and its tool calls.
fn message_chars(message: &ChatMessage) -> usize {
    let text = message.content.as_deref().map_or(0, |c| c.chars().count());
    let calls: usize = message
        .tool_calls
        .iter()
        .map(|call| call.function.name.chars().count() + call.function.arguments.chars().count())
        .sum();
    text + calls
}

fn source_of(hit: &ChunkHit, n: u32) -> Source {
    Source {
        n,
        document_id: hit.document_id,
        title: hit.title.clone(),
        chunk_id: hit.chunk_id,
        score: hit.score,
        heading: hit.heading.clone(),
        snippet: snippet_of(&hit.text),
        page: hit.page,
        signals: hit.signals,
    }
}

/// Best score first (each chunk is there once, with its number).
fn ranked_sources(sources: &[Source]) -> Vec<Source> {
    let mut ranked = sources.to_vec();
    ranked.sort_by(|a, b| b.score.total_cmp(&a.score).then(a.n.cmp(&b.n)));
    ranked
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hit(chunk_id: i64, score: f32) -> ChunkHit {
        ChunkHit {
            document_id: 1,
            title: "t".into(),
            chunk_id,
            score,
            text: "  some\n text ".into(),
            heading: "H".into(),
            page: None,
            signals: Default::default(),
        }
    }

    fn spec() -> TurnSpec {
        TurnSpec {
            conversation_id: Some(Uuid::from_u128(2)),
            user_id: Some(Uuid::from_u128(3)),
            key_id: None,
            question: "Why?".into(),
            history: Vec::new(),
            version_of: None,
        }
    }

    fn record_of(transcript: &Transcript, outcome: TurnOutcome) -> TurnRecord {
        let spec = spec();
        let turn = TurnIdentity {
            turn_id: Uuid::from_u128(1),
            spec: &spec,
            query: "the searched query",
            chat_model: "model-a",
        };
        transcript.record(&turn, outcome)
    }

    #[test]
    fn sources_are_ranked_best_first_keeping_their_numbers() {
        let sources = [
            source_of(&hit(10, 0.2), 1),
            source_of(&hit(20, 0.9), 2),
            source_of(&hit(30, 0.2), 3),
        ];
        let ranked = ranked_sources(&sources);
        let order: Vec<(u32, i64)> = ranked.iter().map(|s| (s.n, s.chunk_id)).collect();
        assert_eq!(order, vec![(2, 20), (1, 10), (3, 30)]);
        assert_eq!(ranked[0].snippet, "some text");
    }

    #[test]
    fn a_chunk_given_again_keeps_its_number_and_its_best_score() {
        let mut transcript = Transcript::new(100);
        assert_eq!(
            transcript.add_sources(&[hit(10, 0.5), hit(20, 0.4)]),
            [1, 2]
        );
        assert_eq!(
            transcript.add_sources(&[hit(30, 0.3), hit(10, 0.8)]),
            [3, 1]
        );
        assert_eq!(transcript.add_sources(&[hit(20, 0.1)]), [2]);
        let record = record_of(&transcript, TurnOutcome::Done);
        let ranked: Vec<(u32, i64, f32)> = record
            .sources
            .iter()
            .map(|s| (s.n, s.chunk_id, s.score))
            .collect();
        assert_eq!(ranked, vec![(1, 10, 0.8), (2, 20, 0.4), (3, 30, 0.3)]);
    }

    #[test]
    fn the_bound_cuts_whole_characters_and_then_keeps_nothing() {
        let mut transcript = Transcript::new(5);
        assert_eq!(transcript.within_bound("éé".into()), Some("éé".into()));
        assert!(!transcript.is_truncated());
        assert_eq!(transcript.within_bound("ééééé".into()), Some("ééé".into()));
        assert!(transcript.is_truncated());
        assert_eq!(transcript.within_bound("x".into()), None);
    }

    #[test]
    fn reaching_the_bound_exactly_ends_the_turn() {
        let mut transcript = Transcript::new(3);
        assert_eq!(transcript.within_bound("abc".into()), Some("abc".into()));
        assert!(transcript.is_truncated());
    }

    #[test]
    fn empty_text_passes_nothing_and_counts_nothing() {
        let mut transcript = Transcript::new(3);
        assert_eq!(transcript.within_bound(String::new()), None);
        assert!(!transcript.is_truncated());
        assert_eq!(transcript.within_bound("ab".into()), Some("ab".into()));
    }

    #[test]
    fn a_row_carries_the_answer_counters_and_the_turn() {
        let mut transcript = Transcript::new(100);
        let first = record_of(&transcript, TurnOutcome::Stopped);
        assert_eq!(first.first_token_ms, None);
        assert_eq!(first.answer, "");
        assert_eq!(first.path, TurnPath::Undecided);

        transcript.path = TurnPath::Grounded;
        transcript.counters.rounds = 2;
        transcript.counters.tool_calls = 1;
        transcript.counters.recovered = true;
        transcript.push_answer("Hello ");
        let first_token_ms = record_of(&transcript, TurnOutcome::Done).first_token_ms;
        assert!(first_token_ms.is_some());
        transcript.push_answer("world");

        let record = record_of(&transcript, TurnOutcome::Done);
        assert_eq!(record.answer, "Hello world");
        assert_eq!(
            record.first_token_ms, first_token_ms,
            "set by the first delta"
        );
        assert_eq!(record.turn_id, Uuid::from_u128(1));
        assert_eq!(record.conversation_id, Some(Uuid::from_u128(2)));
        assert_eq!(record.user_id, Some(Uuid::from_u128(3)));
        assert_eq!(record.question, "Why?");
        assert_eq!(record.chat_model, "model-a");
        assert_eq!(record.path, TurnPath::Grounded);
        assert_eq!((record.rounds, record.tool_calls), (2, 1));
        assert!(record.recovered);
        assert_eq!(record.outcome, TurnOutcome::Done);
        assert!(record.elapsed_ms >= first_token_ms.unwrap_or_default());
    }

    #[test]
    fn the_done_frame_says_truncated_only_when_the_bound_cut() {
        let mut transcript = Transcript::new(2);
        let record = record_of(&transcript, TurnOutcome::Done);
        assert!(!transcript.done_frame(&record).truncated);
        transcript.within_bound("abc".into());
        let record = record_of(&transcript, TurnOutcome::Done);
        let done = transcript.done_frame(&record);
        assert!(done.truncated);
        assert_eq!(done.turn_id, record.turn_id);
        assert_eq!(done.sources, record.sources);
    }
}
