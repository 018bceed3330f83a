//! The TurnActor: one per chat turn. It runs the turn's state machine (`machine.rs`,
//! its steps in `steps.rs`, the tool calls in `tool_runner.rs`), owns the message list
//! and the turn's transcript (`transcript.rs`: path, counters, sources, answer), and it
//! alone writes frames to the client (`relay.rs`). When it stops, its LLM request is
//! cancelled.

mod frames;
mod machine;
mod messages;
mod prompts;
mod relay;
mod steps;
mod tool_runner;
mod tools;
mod transcript;

use std::sync::Arc;
use std::time::Instant;

use actix::prelude::*;
use tokio::sync::{OwnedSemaphorePermit, mpsc, watch};
use uuid::Uuid;

pub use frames::{DoneFrame, Frame};
pub use messages::{ClientGone, LlmConnector, StopTurn, TurnSettings, TurnSpec};
pub use prompts::CORRECTION_INSTRUCTION;
pub use relay::{CLOSING_TIMEOUT, MAX_BACKLOG_FRAMES, STALLED_CLIENT_TIMEOUT};
pub use tools::{TOOL_NAMES, definitions as tool_definitions};

use crate::knowledge::KnowledgeBase;
use crate::llm::{ChatMessage, LlmCommand, LlmEvent};
use crate::log::TurnFinished;
use crate::question::searched_query;
use machine::{Input, Phase};
use relay::ClientRelay;
use transcript::Transcript;

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

/// One turn: its state machine, its conversation with the model, and its client.
pub struct TurnActor {
    /// Named by the turn's frames, its row and its log lines.
    turn_id: Uuid,
    /// What is asked: question, history, conversation and person.
    spec: TurnSpec,
    /// What retrieval searches: the question, with the conversation in mind
    /// ([`searched_query`]).
    query: String,
    /// The `BOR_*` settings of every turn.
    settings: Arc<TurnSettings>,
    /// Retrieval for the question and the document tools.
    knowledge: Arc<dyn KnowledgeBase>,
    /// Where the finished turn's row goes.
    log: Recipient<TurnFinished>,
    /// The turn's LLM actor, once `started` has connected it.
    llm: Option<Recipient<LlmCommand>>,
    /// What `started` takes to connect the LLM actor and to watch the stop signal.
    at_start: Option<AtStart>,
    /// The frames' way to the client (backlog, acknowledgements, closing).
    relay: ClientRelay,
    /// Where the state machine is, with the data of its current step.
    phase: Phase,
    /// When the turn entered its current phase, for `bor_turn_phase_seconds`.
    phase_started: Instant,
    /// The conversation sent to the model: system first, the question last of round
    /// one, then each tool round's calls and results.
    messages: Vec<ChatMessage>,
    /// What the turn has produced so far: path, counters, sources, answer, timing.
    transcript: Transcript,
    /// Entered while the actor works, so that every log line of the turn carries its id.
    span: tracing::Span,
    /// The turn's place under the concurrency limit, handed to the LogActor with the
    /// turn's record (freed once the row is queued), or freed when the actor is dropped.
    slot: Option<OwnedSemaphorePermit>,
}

/// What the actor uses once, when it starts.
struct AtStart {
    connect_llm: LlmConnector,
    stop: Option<watch::Receiver<bool>>,
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
            transcript: Transcript::new(settings.max_answer_chars),
            settings,
            knowledge: deps.knowledge,
            log: deps.log,
            llm: None,
            at_start: Some(AtStart {
                connect_llm: deps.connect_llm,
                stop: deps.stop,
            }),
            relay: ClientRelay::new(frames),
            phase: Phase::Embedding,
            phase_started: Instant::now(),
            messages: Vec::new(),
            span: tracing::info_span!("turn", %turn_id),
            turn_id,
            slot: deps.slot,
            query: searched_query(&spec.question, &spec.history),
            spec,
        }
    }

    fn llm_send(&self, command: LlmCommand) {
        if let Some(llm) = &self.llm {
            llm.do_send(command);
        }
    }

    /// Ends the turn when the service stops (a dropped sender is no stop).
    fn watch_stop_signal(&mut self, mut stop: watch::Receiver<bool>, ctx: &mut Context<Self>) {
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
}

impl Actor for TurnActor {
    type Context = Context<Self>;

    fn started(&mut self, ctx: &mut Self::Context) {
        let span = self.span.clone();
        let _entered = span.enter();
        self.watch_client(ctx);
        if let Some(AtStart { connect_llm, stop }) = self.at_start.take() {
            if let Some(stop) = stop {
                self.watch_stop_signal(stop, ctx);
            }
            // Started inside the turn's span, the LLM actor takes it as its parent.
            self.llm = Some(connect_llm(ctx.address().recipient()));
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

impl Handler<StopTurn> for TurnActor {
    type Result = ();

    fn handle(&mut self, _: StopTurn, ctx: &mut Self::Context) {
        self.advance(Input::StopAsked, ctx);
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
