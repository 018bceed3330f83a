//! The TurnActor: one per chat turn. It runs the turn's state machine (`machine.rs`),
//! owns the message list, the scaffolding filter of the current request and the
//! counters, and it alone writes frames to the client. When it stops, its LLM request
//! is cancelled.

mod frames;
mod machine;
mod messages;
mod prompts;
mod relay;
mod steps;
mod tools;

use std::sync::Arc;
use std::time::Instant;

use actix::prelude::*;
use chrono::{DateTime, Utc};
use tokio::sync::{OwnedSemaphorePermit, mpsc, watch};
use uuid::Uuid;

pub use frames::{DoneFrame, Frame};
pub use messages::{ClientGone, LlmConnector, TurnSettings, TurnSpec};
pub use prompts::CORRECTION_INSTRUCTION;
pub use relay::{CLOSING_TIMEOUT, MAX_BACKLOG_FRAMES, STALLED_CLIENT_TIMEOUT};
pub use tools::{TOOL_NAMES, definitions as tool_definitions};

use crate::knowledge::KnowledgeBase;
use crate::llm::{ChatMessage, LlmCommand, LlmEvent};
use crate::log::TurnFinished;
use crate::record::{Source, TurnPath};
use machine::{Input, Phase};
use relay::ClientRelay;

/// What a turn talks to besides its client.
pub struct TurnDeps {
    pub knowledge: Arc<dyn KnowledgeBase>,
    pub log: Recipient<TurnFinished>,
    pub connect_llm: LlmConnector,
    /// The turn's place under the concurrency limit, freed when the actor stops.
    pub slot: Option<OwnedSemaphorePermit>,
    /// The service's stop signal: once it is `true` the turn ends as if its client had
    /// left (a `stopped` record with the partial answer).
    pub stop: Option<watch::Receiver<bool>>,
}

pub struct TurnActor {
    turn_id: Uuid,
    spec: TurnSpec,
    settings: Arc<TurnSettings>,
    knowledge: Arc<dyn KnowledgeBase>,
    log: Recipient<TurnFinished>,
    connect_llm: Option<LlmConnector>,
    llm: Option<Recipient<LlmCommand>>,
    relay: ClientRelay,
    phase: Phase,
    path: TurnPath,
    /// The conversation sent to the model: system first, the question last of round one.
    messages: Vec<ChatMessage>,
    counters: Counters,
    /// Chunks given to the model so far (retrieval context and search results).
    sources: Vec<Source>,
    /// Every visible text sent as `delta`.
    answer: String,
    /// Characters of answer and reasoning sent so far (bounded by `max_answer_chars`).
    kept_chars: usize,
    /// The bound was reached: the turn ends with what was sent.
    truncated: bool,
    created_at: DateTime<Utc>,
    started: Instant,
    /// When the turn entered its current phase.
    phase_started: Instant,
    first_delta_ms: Option<u64>,
    /// Entered while the actor works, so that every log line of the turn carries its id.
    span: tracing::Span,
    stop: Option<watch::Receiver<bool>>,
    _slot: Option<OwnedSemaphorePermit>,
}

#[derive(Debug, Default)]
struct Counters {
    /// Chat requests sent (final and recovery included, retries not).
    rounds: u32,
    /// Rounds that ended with tool calls.
    tool_rounds: u32,
    tool_calls: u32,
    retries: u32,
    scaffold_stripped: u64,
    recovered: bool,
}

impl TurnActor {
    pub fn new(
        turn_id: Uuid,
        spec: TurnSpec,
        settings: Arc<TurnSettings>,
        deps: TurnDeps,
        frames: mpsc::Sender<Frame>,
    ) -> Self {
        Self {
            settings,
            knowledge: deps.knowledge,
            log: deps.log,
            connect_llm: Some(deps.connect_llm),
            llm: None,
            relay: ClientRelay::new(frames),
            phase: Phase::Embedding,
            path: TurnPath::Undecided,
            messages: Vec::new(),
            counters: Counters::default(),
            sources: Vec::new(),
            answer: String::new(),
            kept_chars: 0,
            truncated: false,
            created_at: Utc::now(),
            started: Instant::now(),
            phase_started: Instant::now(),
            first_delta_ms: None,
            span: tracing::info_span!("turn", %turn_id),
            turn_id,
            stop: deps.stop,
            _slot: deps.slot,
            spec,
        }
    }

    fn llm_send(&self, command: LlmCommand) {
        if let Some(llm) = &self.llm {
            llm.do_send(command);
        }
    }

    /// Ends the turn when the service stops (a dropped sender is no stop).
    fn watch_stop_signal(&mut self, ctx: &mut Context<Self>) {
        let Some(mut stop) = self.stop.take() else {
            return;
        };
        ctx.spawn(
            async move { stop.wait_for(|stopping| *stopping).await.is_ok() }
                .into_actor(self)
                .map(|stopping, act, ctx| {
                    if stopping {
                        act.advance(Input::ServiceStopping, ctx);
                    }
                }),
        );
    }

    fn elapsed_ms(&self) -> u64 {
        u64::try_from(self.started.elapsed().as_millis()).unwrap_or(u64::MAX)
    }
}

impl Actor for TurnActor {
    type Context = Context<Self>;

    fn started(&mut self, ctx: &mut Self::Context) {
        let span = self.span.clone();
        let _entered = span.enter();
        self.watch_client(ctx);
        self.watch_stop_signal(ctx);
        // Started inside the turn's span, the LLM actor takes it as its parent.
        if let Some(connect) = self.connect_llm.take() {
            self.llm = Some(connect(ctx.address().recipient()));
        }
        self.phase = self.begin();
    }

    fn stopped(&mut self, _: &mut Self::Context) {
        let _entered = self.span.enter();
        self.llm_send(LlmCommand::Cancel);
    }
}

impl Handler<LlmEvent> for TurnActor {
    type Result = ();

    fn handle(&mut self, event: LlmEvent, ctx: &mut Self::Context) {
        self.advance(Input::Llm(event), ctx);
    }
}

impl Handler<ClientGone> for TurnActor {
    type Result = ();

    fn handle(&mut self, _: ClientGone, ctx: &mut Self::Context) {
        self.advance(Input::ClientGone, ctx);
    }
}

#[cfg(test)]
mod tests;
