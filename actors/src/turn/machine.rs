//! The turn's state machine in one place: its phases, its inputs, and the table of
//! transitions, with the state of a round's tool calls. The steps it calls live in
//! `steps.rs` and `tool_runner.rs`.
//!
//! ```text
//! Embedding ──Embedded──▶ Retrieving ──Retrieved──▶ Chatting ──ChatDone──┬──▶ Ended (done)
//!                              │                      ▲  ▲                ├──▶ RunningTools ──▶ Chatting
//!                              │ re-ranking on        │  └─ recovery ◀────┘
//!                              └──▶ Reranking ────────┘ (Reranked, or the fused order
//!                                                        on Failed or RerankTimedOut)
//! Chatting ──answer bound reached──▶ Ended (done, truncated)
//! any phase ──Failed──▶ Ended (error)        any phase ──ClientGone──▶ Ended (stopped)
//!                                             any phase ──StopAsked──▶ Ended (stopped, `done`)
//!                                             any phase ──ServiceStopping──▶ Ended (stopped,
//!                                                                 the client gets `error internal`)
//! ```

use std::collections::VecDeque;
use std::time::{Duration, Instant};

use actix::prelude::*;

use super::TurnActor;
use crate::error_chain;
use crate::knowledge::{ChunkHit, KnowledgeError, Retrieval};
use crate::llm::{LlmCommand, LlmError, LlmEvent, ToolCall};
use crate::metrics::metrics;
use crate::record::ErrorCode;
use crate::scaffolding::ScaffoldingFilter;

pub(super) enum Phase {
    /// Waiting for the question's embedding.
    Embedding,
    /// Waiting for the knowledge base.
    Retrieving,
    /// Waiting for the re-ranking server's scores of the fused candidates.
    Reranking(Reranking),
    /// A chat request is streaming.
    Chatting(ChatRound),
    /// Executing the last round's tool calls, one at a time.
    RunningTools(ToolRun),
    /// The terminal frame is out, or the client left.
    Ended,
}

impl Phase {
    /// The `phase` label of `bor_turn_phase_seconds`; `None` once the turn has ended.
    fn name(&self) -> Option<&'static str> {
        match self {
            Phase::Embedding => Some("embedding"),
            Phase::Retrieving => Some("retrieving"),
            Phase::Reranking(_) => Some("reranking"),
            Phase::Chatting(_) => Some("chatting"),
            Phase::RunningTools(_) => Some("running_tools"),
            Phase::Ended => None,
        }
    }
}

/// What moves a turn forward.
#[derive(Debug)]
pub(super) enum Input {
    Llm(LlmEvent),
    Retrieved(Result<Retrieval, KnowledgeError>),
    /// `BOR_RERANK_TIMEOUT` (the duration) passed without the re-ranking server's answer.
    RerankTimedOut(Duration),
    ToolDone(ToolOutcome),
    ClientGone,
    /// The turn's owner asked to stop it.
    StopAsked,
    /// The service is shutting down and the turn's grace is over.
    ServiceStopping,
}

/// The fused candidates while the re-ranking server scores them.
pub(super) struct Reranking {
    pub retrieval: Retrieval,
    /// The timer of `BOR_RERANK_TIMEOUT`.
    pub deadline: SpawnHandle,
}

/// One chat request of the turn.
pub(super) struct ChatRound {
    pub filter: ScaffoldingFilter,
    pub tools_offered: bool,
    /// The one corrective request (docs/PROTOCOL.md, "Recovery").
    pub recovery: bool,
    /// Non-whitespace characters this request sent as `delta` frames.
    pub visible_chars: usize,
    pub visible_text: String,
}

impl TurnActor {
    /// The transition table.
    pub(super) fn advance(&mut self, input: Input, ctx: &mut Context<Self>) {
        use Input::*;
        use LlmEvent::*;
        let span = self.span.clone();
        let _entered = span.enter();
        let left = self.phase.name();
        let phase = std::mem::replace(&mut self.phase, Phase::Ended);
        self.phase = match (phase, input) {
            // Its record is written; frames still waiting for a slow client are dropped.
            (Phase::Ended, ServiceStopping) => {
                self.close_stream(ctx);
                Phase::Ended
            }
            (Phase::Ended, _) => Phase::Ended,
            (_, ClientGone) => self.stop_turn(ctx),
            (_, StopAsked) => self.stop_asked(ctx),
            (_, ServiceStopping) => {
                tracing::info!("the service is stopping; ending the turn");
                self.cut_by_shutdown(ctx)
            }
            (phase, Llm(Retrying { attempt, max })) => {
                self.on_retry(attempt, max, ctx);
                phase
            }
            (Phase::Embedding, Llm(Embedded(vectors))) => self.retrieve(vectors, ctx),
            (Phase::Retrieving, Retrieved(Ok(retrieval))) => self.after_retrieval(retrieval, ctx),
            (Phase::Reranking(reranking), Llm(Reranked(scores))) => {
                self.reranked(reranking, &scores, ctx)
            }
            (Phase::Reranking(reranking), Llm(Failed(err))) => {
                self.without_reranking(reranking, &err, ctx)
            }
            (Phase::Reranking(reranking), RerankTimedOut(timeout)) => {
                self.llm_send(LlmCommand::Cancel);
                let why = format!("no answer within {timeout:?}");
                self.without_reranking(reranking, &why, ctx)
            }
            (Phase::Chatting(mut round), Llm(Content(text))) => {
                self.relay_content(&mut round, &text, ctx);
                self.unless_truncated(Phase::Chatting(round), ctx)
            }
            (Phase::Chatting(round), Llm(Reasoning(text))) => {
                self.relay_reasoning(text, ctx);
                self.unless_truncated(Phase::Chatting(round), ctx)
            }
            (Phase::Chatting(round), Llm(ChatDone(completion))) => {
                self.end_round(round, completion, ctx)
            }
            (Phase::RunningTools(run), Llm(Embedded(vectors))) => {
                self.search_with(run, vectors, ctx)
            }
            (Phase::RunningTools(run), Llm(Failed(err))) => {
                let outcome = ToolOutcome::error(format!("search is unavailable: {err}"));
                self.tool_finished(run, outcome, ctx)
            }
            (Phase::RunningTools(run), ToolDone(outcome)) => self.tool_finished(run, outcome, ctx),
            (_, Llm(Failed(err))) => {
                self.transcript.request_failed();
                self.fail(error_code(&err), ctx)
            }
            (_, Retrieved(Err(err))) => {
                tracing::error!(turn_id = %self.turn_id, error = %error_chain(&err), "retrieval failed");
                self.fail(ErrorCode::Internal, ctx)
            }
            (phase, input) => {
                tracing::warn!(turn_id = %self.turn_id, ?input, "unexpected input ignored");
                phase
            }
        };
        self.time_phase(left);
    }

    /// When the turn has left the phase named `left` (a recovery request counts with the
    /// chat request before it), records the time it spent there.
    fn time_phase(&mut self, left: Option<&'static str>) {
        if let Some(name) = left
            && self.phase.name() != left
        {
            metrics().observe_turn_phase(name, self.phase_started.elapsed());
            self.phase_started = Instant::now();
        }
    }
}

/// The `error` frame code of a failed LLM request.
fn error_code(err: &LlmError) -> ErrorCode {
    match err {
        LlmError::Unavailable { .. } => ErrorCode::LlmUnavailable,
        LlmError::Rejected(_) => ErrorCode::LlmRejected,
        LlmError::Interrupted(_) => ErrorCode::LlmInterrupted,
    }
}

/// The tool calls of a round still to run.
pub(super) struct ToolRun {
    pub(super) pending: VecDeque<ToolCall>,
    pub(super) current: Option<RunningTool>,
}

/// The tool call being executed.
pub(super) struct RunningTool {
    pub(super) call: ToolCall,
    /// A search waits for its query's embedding first.
    pub(super) search: Option<(String, usize)>,
}

/// A tool call's result: JSON text for the model, or an error message for it; a
/// search's hits instead, which the turn numbers before they become the result.
#[derive(Debug)]
pub(super) enum ToolOutcome {
    Result(Result<String, String>),
    Found(Vec<ChunkHit>),
}

impl ToolRun {
    pub fn new(calls: Vec<ToolCall>) -> Self {
        Self {
            pending: VecDeque::from(calls),
            current: None,
        }
    }
}
