//! The steps the state machine takes: each does its work and names the next phase.

use actix::prelude::*;

use super::TurnActor;
use super::frames::Frame;
use super::machine::{ChatRound, Input, Phase, Reranking, ToolRun};
use super::prompts;
use super::tools;
use super::transcript::TurnIdentity;
use crate::knowledge::Retrieval;
use crate::llm::{ChatCompletion, ChatMessage, ChatRequest, EmbedPurpose, LlmCommand};
use crate::log::TurnFinished;
use crate::record::{ErrorCode, TurnOutcome, TurnPath, TurnRecord};
use crate::rerank;
use crate::scaffolding::{FilterEvent, ScaffoldingFilter};
use crate::text::prefix_chars;

/// Strip warnings quote at most this many characters of the span.
const STRIP_LOG_CHARS: usize = 200;

impl TurnActor {
    pub(super) fn begin(&mut self) -> Phase {
        self.llm_send(LlmCommand::Embed {
            inputs: vec![self.query.clone()],
            purpose: EmbedPurpose::Query,
        });
        Phase::Embedding
    }

    pub(super) fn on_retry(&mut self, attempt: u32, max: u32, ctx: &mut Context<Self>) {
        self.transcript.counters.retries += 1;
        self.send_frame(Frame::Retry { attempt, max }, ctx);
    }

    pub(super) fn retrieve(&mut self, vectors: Vec<Vec<f32>>, ctx: &mut Context<Self>) -> Phase {
        let Some(embedding) = vectors.into_iter().next() else {
            tracing::error!(turn_id = %self.turn_id, "the embedding response held no vector");
            return self.fail(ErrorCode::Internal, ctx);
        };
        let retrieval =
            self.knowledge
                .retrieve(self.query.clone(), embedding, self.settings.retrieved());
        ctx.spawn(
            retrieval
                .into_actor(self)
                .map(|result, act, ctx| act.advance(Input::Retrieved(result), ctx)),
        );
        Phase::Retrieving
    }

    /// Asks the re-ranking server to score the candidates when re-ranking is on and
    /// there is an order to change; else goes on with the fused top.
    pub(super) fn after_retrieval(
        &mut self,
        retrieval: Retrieval,
        ctx: &mut Context<Self>,
    ) -> Phase {
        let Some(rerank) = rerank::to_ask(self.settings.rerank, &retrieval) else {
            return self.choose_path(retrieval.top(self.settings.top_k));
        };
        let documents = retrieval.hits.iter().map(rerank::passage_of).collect();
        self.llm_send(LlmCommand::Rerank {
            query: self.query.clone(),
            documents,
        });
        let deadline = ctx.run_later(rerank.timeout, move |act, ctx| {
            act.advance(Input::RerankTimedOut(rerank.timeout), ctx);
        });
        Phase::Reranking(Reranking {
            retrieval,
            deadline,
        })
    }

    pub(super) fn reranked(
        &mut self,
        reranking: Reranking,
        scores: &[f32],
        ctx: &mut Context<Self>,
    ) -> Phase {
        ctx.cancel_future(reranking.deadline);
        self.choose_path(reranking.retrieval.reranked(scores, self.settings.top_k))
    }

    /// A failed or late re-rank: the fused order, with a warning; never a failed turn.
    pub(super) fn without_reranking(
        &mut self,
        reranking: Reranking,
        why: &dyn std::fmt::Display,
        ctx: &mut Context<Self>,
    ) -> Phase {
        ctx.cancel_future(reranking.deadline);
        tracing::warn!(turn_id = %self.turn_id, error = %why, "re-ranking failed; the fused order is used");
        self.choose_path(reranking.retrieval.top(self.settings.top_k))
    }

    pub(super) fn choose_path(&mut self, retrieval: Retrieval) -> Phase {
        let grounded = retrieval.is_grounded(self.settings.deflect_threshold);
        let tools_offered = grounded && self.settings.agent_enabled;
        let system = if grounded {
            self.transcript.path = TurnPath::Grounded;
            let numbers = self.transcript.add_sources(&retrieval.hits);
            prompts::grounded_system(&retrieval.hits, &numbers, tools_offered)
        } else {
            self.transcript.path = TurnPath::Deflected;
            prompts::deflected_system()
        };
        let mut messages = Vec::with_capacity(self.spec.history.len() + 2);
        messages.push(ChatMessage::system(system));
        messages.extend(self.spec.history.iter().cloned());
        messages.push(ChatMessage::user(self.spec.question.clone()));
        self.messages = messages;
        self.start_request(tools_offered, false)
    }

    /// Sends the next chat request of the turn, with a fresh filter.
    pub(super) fn start_request(&mut self, tools_offered: bool, recovery: bool) -> Phase {
        let mut messages = self.messages.clone();
        if recovery && let Some(system) = messages.first_mut() {
            let original = system.content.take().unwrap_or_default();
            system.content = Some(prompts::with_correction(&original));
        }
        self.transcript.counters.rounds += 1;
        self.transcript.request_sent(&messages);
        self.llm_send(LlmCommand::Chat(ChatRequest {
            messages,
            tools: tools_offered.then(tools::definitions),
        }));
        Phase::Chatting(ChatRound {
            filter: ScaffoldingFilter::new(&tools::TOOL_NAMES, self.settings.thinking_forced_open),
            tools_offered,
            recovery,
            visible_chars: 0,
            visible_text: String::new(),
        })
    }

    pub(super) fn relay_content(
        &mut self,
        round: &mut ChatRound,
        text: &str,
        ctx: &mut Context<Self>,
    ) {
        self.transcript.reply_received(text);
        let mut events = Vec::new();
        round.filter.push(text, &mut events);
        self.relay_filtered(round, events, ctx);
        self.piece_relayed();
    }

    pub(super) fn relay_reasoning(&mut self, text: String, ctx: &mut Context<Self>) {
        self.transcript.reply_received(&text);
        if let Some(text) = self.transcript.within_bound(text) {
            self.send_frame(Frame::Thinking { text }, ctx);
        }
        self.piece_relayed();
    }

    /// Ends the turn with what was sent once the answer bound is reached; else stays.
    pub(super) fn unless_truncated(&mut self, phase: Phase, ctx: &mut Context<Self>) -> Phase {
        if !self.transcript.is_truncated() {
            return phase;
        }
        tracing::warn!(
            turn_id = %self.turn_id,
            max_answer_chars = self.settings.max_answer_chars,
            "the answer reached its bound; ending the turn with what was sent"
        );
        self.succeed(ctx)
    }

    fn relay_filtered(
        &mut self,
        round: &mut ChatRound,
        events: Vec<FilterEvent>,
        ctx: &mut Context<Self>,
    ) {
        for event in events {
            match event {
                FilterEvent::Visible(text) if !text.is_empty() => {
                    let Some(text) = self.transcript.within_bound(text) else {
                        continue;
                    };
                    round.visible_chars += text.chars().filter(|c| !c.is_whitespace()).count();
                    round.visible_text.push_str(&text);
                    self.transcript.push_answer(&text);
                    self.send_frame(Frame::Delta { text }, ctx);
                }
                FilterEvent::Thinking(text) if !text.is_empty() => {
                    if let Some(text) = self.transcript.within_bound(text) {
                        self.send_frame(Frame::Thinking { text }, ctx)
                    }
                }
                FilterEvent::Stripped(span) => tracing::warn!(
                    turn_id = %self.turn_id,
                    round = self.transcript.counters.rounds,
                    span = %prefix_chars(&span, STRIP_LOG_CHARS),
                    "stripped model scaffolding"
                ),
                _ => {}
            }
        }
    }

    /// A chat request ended: run its tool calls, recover, or finish (docs/PROTOCOL.md,
    /// "Agent rounds" and "Recovery").
    pub(super) fn end_round(
        &mut self,
        mut round: ChatRound,
        completion: ChatCompletion,
        ctx: &mut Context<Self>,
    ) -> Phase {
        let tool_call_chars = completion
            .tool_calls
            .iter()
            .map(|call| {
                call.function.name.chars().count() + call.function.arguments.chars().count()
            })
            .sum();
        self.transcript
            .request_ended(completion.usage, tool_call_chars);
        let mut events = Vec::new();
        round.filter.finish(&mut events);
        self.relay_filtered(&mut round, events, ctx);
        let stripped = round.filter.stripped_chars() as u64;
        self.transcript.counters.scaffold_stripped += stripped;

        // Tool calls of a tools-free request are not executed: its text is the answer.
        let calls = if round.tools_offered {
            completion.tool_calls
        } else {
            Vec::new()
        };
        if !calls.is_empty() {
            self.transcript.counters.tool_rounds += 1;
            self.messages.push(ChatMessage::assistant_tool_calls(
                round.visible_text,
                calls.clone(),
            ));
            return self.next_tool(ToolRun::new(calls), ctx);
        }
        if round.recovery {
            if round.visible_chars > 0 {
                self.transcript.counters.recovered = true;
                return self.succeed(ctx);
            }
            return self.fail(ErrorCode::MalformedReply, ctx);
        }
        if round.visible_chars == 0 && stripped > 0 {
            tracing::warn!(
                turn_id = %self.turn_id,
                round = self.transcript.counters.rounds,
                "reply was only scaffolding; sending the one recovery request"
            );
            return self.start_request(false, true);
        }
        self.succeed(ctx)
    }

    fn succeed(&mut self, ctx: &mut Context<Self>) -> Phase {
        let record = self.record(TurnOutcome::Done);
        self.send_frame(Frame::Done(self.transcript.done_frame(&record)), ctx);
        self.log_turn(record);
        self.finish_stream(ctx);
        Phase::Ended
    }

    pub(super) fn fail(&mut self, code: ErrorCode, ctx: &mut Context<Self>) -> Phase {
        self.send_frame(
            Frame::error(self.turn_id, self.spec.conversation_id, code),
            ctx,
        );
        self.log_turn(self.record(TurnOutcome::Error(code)));
        self.finish_stream(ctx);
        Phase::Ended
    }

    /// The client went away: keep the partial answer as a `stopped` row.
    pub(super) fn stop_turn(&mut self, ctx: &mut Context<Self>) -> Phase {
        self.log_turn(self.record(TurnOutcome::Stopped));
        self.close_stream(ctx);
        Phase::Ended
    }

    /// The owner stopped the turn: its readers get a `done` frame marked `stopped`, and
    /// the partial answer is kept as a `stopped` row.
    pub(super) fn stop_asked(&mut self, ctx: &mut Context<Self>) -> Phase {
        tracing::info!("the turn's owner stopped it");
        let record = self.record(TurnOutcome::Stopped);
        self.send_frame(Frame::Done(self.transcript.done_frame(&record)), ctx);
        self.log_turn(record);
        self.finish_stream(ctx);
        Phase::Ended
    }

    /// The service's grace ran out: the client still gets its one terminal frame
    /// (`error internal`: the answer is cut short by bor itself, not by the model), and
    /// the partial answer is kept as a `stopped` row, like a turn whose client left.
    pub(super) fn cut_by_shutdown(&mut self, ctx: &mut Context<Self>) -> Phase {
        self.send_frame(
            Frame::error(self.turn_id, self.spec.conversation_id, ErrorCode::Internal),
            ctx,
        );
        self.log_turn(self.record(TurnOutcome::Stopped));
        self.finish_stream(ctx);
        Phase::Ended
    }

    /// Hands the turn's record to the LogActor with the turn's slot: the slot is free
    /// once the row is queued, so rows on their way to the queue count among the turns
    /// in flight and the queue never passes its capacity (the mark plus the slots).
    fn log_turn(&mut self, record: TurnRecord) {
        self.log
            .do_send(TurnFinished::new(record).holding(self.slot.take()));
    }

    fn record(&self, outcome: TurnOutcome) -> TurnRecord {
        let turn = TurnIdentity {
            turn_id: self.turn_id,
            spec: &self.spec,
            query: &self.query,
            chat_model: &self.settings.chat_model,
        };
        self.transcript.record(&turn, outcome)
    }
}
