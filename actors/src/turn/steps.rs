//! The steps the state machine takes: each does its work and names the next phase.

use std::collections::VecDeque;

use actix::prelude::*;

use super::TurnActor;
use super::frames::{DoneFrame, Frame};
use super::machine::{ChatRound, Input, Phase, RunningTool, ToolOutcome, ToolRun};
use super::prompts;
use super::tools::{self, ToolInvocation};
use crate::error_chain;
use crate::knowledge::{ChunkHit, KnowledgeError, Retrieval};
use crate::llm::{ChatCompletion, ChatMessage, ChatRequest, LlmCommand};
use crate::log::TurnFinished;
use crate::metrics::metrics;
use crate::record::{ErrorCode, Source, TurnOutcome, TurnPath, TurnRecord, snippet_of};
use crate::scaffolding::{FilterEvent, ScaffoldingFilter};
use crate::text::prefix_chars;

/// Strip warnings quote at most this many characters of the span.
const STRIP_LOG_CHARS: usize = 200;

impl TurnActor {
    pub(super) fn begin(&mut self) -> Phase {
        self.llm_send(LlmCommand::Embed(vec![self.spec.question.clone()]));
        Phase::Embedding
    }

    pub(super) fn on_retry(&mut self, attempt: u32, max: u32, ctx: &mut Context<Self>) {
        self.counters.retries += 1;
        self.send_frame(Frame::Retry { attempt, max }, ctx);
    }

    pub(super) fn retrieve(&mut self, vectors: Vec<Vec<f32>>, ctx: &mut Context<Self>) -> Phase {
        let Some(embedding) = vectors.into_iter().next() else {
            tracing::error!(turn_id = %self.turn_id, "the embedding response held no vector");
            return self.fail(ErrorCode::Internal, ctx);
        };
        let retrieval =
            self.knowledge
                .retrieve(self.spec.question.clone(), embedding, self.settings.top_k);
        ctx.spawn(
            retrieval
                .into_actor(self)
                .map(|result, act, ctx| act.advance(Input::Retrieved(result), ctx)),
        );
        Phase::Retrieving
    }

    pub(super) fn choose_path(&mut self, retrieval: Retrieval) -> Phase {
        let grounded = retrieval.is_grounded(self.settings.deflect_threshold);
        let tools_offered = grounded && self.settings.agent_enabled;
        let system = if grounded {
            self.path = TurnPath::Grounded;
            let numbers = self.add_sources(&retrieval.hits);
            prompts::grounded_system(&retrieval.hits, &numbers, tools_offered)
        } else {
            self.path = TurnPath::Deflected;
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
    fn start_request(&mut self, tools_offered: bool, recovery: bool) -> Phase {
        let mut messages = self.messages.clone();
        if recovery && let Some(system) = messages.first_mut() {
            let original = system.content.take().unwrap_or_default();
            system.content = Some(prompts::with_correction(&original));
        }
        self.counters.rounds += 1;
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
        let mut events = Vec::new();
        round.filter.push(text, &mut events);
        self.relay_filtered(round, events, ctx);
        self.piece_relayed();
    }

    pub(super) fn relay_reasoning(&mut self, text: String, ctx: &mut Context<Self>) {
        if let Some(text) = self.within_bound(text) {
            self.send_frame(Frame::Thinking { text }, ctx);
        }
        self.piece_relayed();
    }

    /// The part of `text` the answer bound leaves room for (`None` when nothing);
    /// marks the turn truncated when it cuts.
    fn within_bound(&mut self, text: String) -> Option<String> {
        if self.truncated {
            return None;
        }
        let room = self
            .settings
            .max_answer_chars
            .saturating_sub(self.kept_chars);
        let kept = prefix_chars(&text, room);
        let text = if kept.len() < text.len() {
            self.truncated = true;
            kept.to_owned()
        } else {
            text
        };
        self.kept_chars += text.chars().count();
        if self.kept_chars >= self.settings.max_answer_chars {
            self.truncated = true;
        }
        (!text.is_empty()).then_some(text)
    }

    /// Ends the turn with what was sent once the answer bound is reached; else stays.
    pub(super) fn unless_truncated(&mut self, phase: Phase, ctx: &mut Context<Self>) -> Phase {
        if !self.truncated {
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
                    let Some(text) = self.within_bound(text) else {
                        continue;
                    };
                    round.visible_chars += text.chars().filter(|c| !c.is_whitespace()).count();
                    round.visible_text.push_str(&text);
                    self.answer.push_str(&text);
                    if self.first_delta_ms.is_none() {
                        self.first_delta_ms = Some(self.elapsed_ms());
                    }
                    self.send_frame(Frame::Delta { text }, ctx);
                }
                FilterEvent::Thinking(text) if !text.is_empty() => {
                    if let Some(text) = self.within_bound(text) {
                        self.send_frame(Frame::Thinking { text }, ctx)
                    }
                }
                FilterEvent::Stripped(span) => tracing::warn!(
                    turn_id = %self.turn_id,
                    round = self.counters.rounds,
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
        let mut events = Vec::new();
        round.filter.finish(&mut events);
        self.relay_filtered(&mut round, events, ctx);
        let stripped = round.filter.stripped_chars() as u64;
        self.counters.scaffold_stripped += stripped;

        // Tool calls of a tools-free request are not executed: its text is the answer.
        let calls = if round.tools_offered {
            completion.tool_calls
        } else {
            Vec::new()
        };
        if !calls.is_empty() {
            self.counters.tool_rounds += 1;
            self.messages.push(ChatMessage::assistant_tool_calls(
                round.visible_text,
                calls.clone(),
            ));
            let run = ToolRun {
                pending: VecDeque::from(calls),
                current: None,
            };
            return self.next_tool(run, ctx);
        }
        if round.recovery {
            if round.visible_chars > 0 {
                self.counters.recovered = true;
                return self.succeed(ctx);
            }
            return self.fail(ErrorCode::MalformedReply, ctx);
        }
        if round.visible_chars == 0 && stripped > 0 {
            tracing::warn!(
                turn_id = %self.turn_id,
                round = self.counters.rounds,
                "reply was only scaffolding; sending the one recovery request"
            );
            return self.start_request(false, true);
        }
        self.succeed(ctx)
    }

    /// Starts the next tool call of the round, or the next request when none is left.
    fn next_tool(&mut self, mut run: ToolRun, ctx: &mut Context<Self>) -> Phase {
        let Some(call) = run.pending.pop_front() else {
            let tools_offered = self.counters.tool_rounds < self.settings.max_rounds;
            return self.start_request(tools_offered, false);
        };
        self.counters.tool_calls += 1;
        metrics().observe_tool_call(tools::metric_label(&call.function.name));
        self.send_frame(Frame::tool_start(&call.id, &call.function.name), ctx);
        let invocation = tools::parse_call(&call.function.name, &call.function.arguments);
        let knowledge = &self.knowledge;
        let outcome = match invocation {
            Err(message) => {
                self.record_tool_result(&call, Err(message), ctx);
                return self.next_tool(run, ctx);
            }
            Ok(ToolInvocation::Search { query, limit }) => {
                self.llm_send(LlmCommand::Embed(vec![query.clone()]));
                run.current = Some(RunningTool {
                    call,
                    search: Some((query, limit)),
                });
                return Phase::RunningTools(run);
            }
            Ok(ToolInvocation::Read { document_id }) => {
                let read = knowledge.read_document(document_id);
                Box::pin(async move {
                    match read.await {
                        Ok(Some(document)) => ToolOutcome::json(&document),
                        Ok(None) => ToolOutcome::error(format!("no document has id {document_id}")),
                        Err(err) => ToolOutcome::knowledge_failed(&err),
                    }
                }) as futures_util::future::BoxFuture<'static, ToolOutcome>
            }
            Ok(ToolInvocation::List) => {
                let list = knowledge.list_documents();
                Box::pin(async move {
                    match list.await {
                        Ok(documents) => {
                            ToolOutcome::json(&serde_json::json!({ "documents": documents }))
                        }
                        Err(err) => ToolOutcome::knowledge_failed(&err),
                    }
                })
            }
        };
        run.current = Some(RunningTool { call, search: None });
        ctx.spawn(
            outcome
                .into_actor(self)
                .map(|outcome, act, ctx| act.advance(Input::ToolDone(outcome), ctx)),
        );
        Phase::RunningTools(run)
    }

    /// The query of a `search_documents` call is embedded: search with it.
    pub(super) fn search_with(
        &mut self,
        run: ToolRun,
        vectors: Vec<Vec<f32>>,
        ctx: &mut Context<Self>,
    ) -> Phase {
        let search = run.current.as_ref().and_then(|tool| tool.search.clone());
        let (Some((query, limit)), Some(embedding)) = (search, vectors.into_iter().next()) else {
            let outcome = ToolOutcome::error("the search query could not be embedded".to_owned());
            return self.tool_finished(run, outcome, ctx);
        };
        let retrieval = self.knowledge.retrieve(query, embedding, limit);
        ctx.spawn(
            async move {
                match retrieval.await {
                    Ok(retrieval) => ToolOutcome::found(retrieval.hits),
                    Err(err) => ToolOutcome::knowledge_failed(&err),
                }
            }
            .into_actor(self)
            .map(|outcome, act, ctx| act.advance(Input::ToolDone(outcome), ctx)),
        );
        Phase::RunningTools(run)
    }

    pub(super) fn tool_finished(
        &mut self,
        mut run: ToolRun,
        outcome: ToolOutcome,
        ctx: &mut Context<Self>,
    ) -> Phase {
        if let Some(tool) = run.current.take() {
            let result = match outcome.found {
                // Search results are numbered like the context, so they can be cited.
                Some(hits) => {
                    let numbers = self.add_sources(&hits);
                    tools::search_result(&hits, &numbers)
                }
                None => outcome.result,
            };
            self.record_tool_result(&tool.call, result, ctx);
        }
        self.next_tool(run, ctx)
    }

    fn record_tool_result(
        &mut self,
        call: &crate::llm::ToolCall,
        result: Result<String, String>,
        ctx: &mut Context<Self>,
    ) {
        let ok = result.is_ok();
        if let Err(message) = &result {
            tracing::info!(turn_id = %self.turn_id, tool = %call.function.name, %message, "tool call failed");
        }
        let text = result.unwrap_or_else(|message| tools::error_result(&message));
        self.send_frame(Frame::tool_end(&call.id, &call.function.name, ok), ctx);
        self.messages
            .push(ChatMessage::tool_result(call.id.clone(), text));
    }

    /// Records the chunks given to the model and answers their numbers: a chunk given
    /// before keeps its number (and its best score), a new one takes the next.
    fn add_sources(&mut self, hits: &[ChunkHit]) -> Vec<u32> {
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

    fn succeed(&mut self, ctx: &mut Context<Self>) -> Phase {
        let record = self.record(TurnOutcome::Done);
        self.send_frame(
            Frame::Done(DoneFrame {
                turn_id: record.turn_id,
                conversation_id: record.conversation_id,
                path: record.path,
                rounds: record.rounds,
                retries: record.retries,
                scaffold_stripped: record.scaffold_stripped,
                recovered: record.recovered,
                sources: record.sources.clone(),
                truncated: self.truncated,
            }),
            ctx,
        );
        self.log.do_send(TurnFinished::new(record));
        self.finish_stream(ctx);
        Phase::Ended
    }

    pub(super) fn fail(&mut self, code: ErrorCode, ctx: &mut Context<Self>) -> Phase {
        self.send_frame(
            Frame::error(self.turn_id, self.spec.conversation_id, code),
            ctx,
        );
        self.log
            .do_send(TurnFinished::new(self.record(TurnOutcome::Error(code))));
        self.finish_stream(ctx);
        Phase::Ended
    }

    /// The client went away: keep the partial answer as a `stopped` row.
    pub(super) fn stop_turn(&mut self, ctx: &mut Context<Self>) -> Phase {
        self.log
            .do_send(TurnFinished::new(self.record(TurnOutcome::Stopped)));
        self.close_stream(ctx);
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
        self.log
            .do_send(TurnFinished::new(self.record(TurnOutcome::Stopped)));
        self.finish_stream(ctx);
        Phase::Ended
    }

    fn record(&self, outcome: TurnOutcome) -> TurnRecord {
        TurnRecord {
            turn_id: self.turn_id,
            conversation_id: self.spec.conversation_id,
            user_id: self.spec.user_id,
            created_at: self.created_at,
            question: self.spec.question.clone(),
            answer: self.answer.clone(),
            path: self.path,
            outcome,
            chat_model: self.settings.chat_model.clone(),
            rounds: self.counters.rounds,
            tool_calls: self.counters.tool_calls,
            retries: self.counters.retries,
            scaffold_stripped: self.counters.scaffold_stripped,
            recovered: self.counters.recovered,
            sources: ranked_sources(&self.sources),
            first_token_ms: self.first_delta_ms,
            elapsed_ms: self.elapsed_ms(),
        }
    }
}

impl ToolOutcome {
    fn json(value: &impl serde::Serialize) -> Self {
        Self {
            result: serde_json::to_string(value).map_err(|err| err.to_string()),
            found: None,
        }
    }

    fn error(message: String) -> Self {
        Self {
            result: Err(message),
            found: None,
        }
    }

    /// A tool the knowledge base could not serve: the model is told what failed, the
    /// log gets the cause.
    fn knowledge_failed(error: &KnowledgeError) -> Self {
        tracing::warn!(error = %error_chain(error), "a document tool failed");
        Self::error(error.to_string())
    }

    /// A search's hits; numbered, and made the result, when the turn takes them.
    fn found(hits: Vec<ChunkHit>) -> Self {
        Self {
            result: Ok(String::new()),
            found: Some(hits),
        }
    }
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

    fn source(n: u32, chunk_id: i64, score: f32) -> Source {
        let hit = ChunkHit {
            document_id: 1,
            title: "t".into(),
            chunk_id,
            score,
            text: "  some\n text ".into(),
            heading: "H".into(),
            page: None,
        };
        source_of(&hit, n)
    }

    #[test]
    fn sources_are_ranked_best_first_keeping_their_numbers() {
        let ranked = ranked_sources(&[source(1, 10, 0.2), source(2, 20, 0.9), source(3, 30, 0.2)]);
        let order: Vec<(u32, i64)> = ranked.iter().map(|s| (s.n, s.chunk_id)).collect();
        assert_eq!(order, vec![(2, 20), (1, 10), (3, 30)]);
        assert_eq!(ranked[0].snippet, "some text");
    }

    #[test]
    fn cut_keeps_whole_characters() {
        assert_eq!(prefix_chars("ééé", 2), "éé");
        assert_eq!(prefix_chars("ab", 5), "ab");
    }
}
