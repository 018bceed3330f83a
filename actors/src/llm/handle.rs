//! `LlmClient`: one request at a time on a fresh LlmActor, awaited from plain async
//! code (the command line, health probes). Must run inside an actix system.

use std::sync::Arc;

use actix::prelude::*;
use tokio::sync::mpsc;

use super::{
    ChatMessage, ChatRequest, EmbedPurpose, LlmActor, LlmCommand, LlmError, LlmEvent, LlmSettings,
};

/// Runs LLM requests from async code that is not an actor.
#[derive(Debug, Clone)]
pub struct LlmClient {
    settings: Arc<LlmSettings>,
}

impl LlmClient {
    pub fn new(settings: Arc<LlmSettings>) -> Self {
        Self { settings }
    }

    pub fn settings(&self) -> &LlmSettings {
        &self.settings
    }

    /// Embeds a batch under the retry policy, each text with `purpose`'s prefix;
    /// `on_retry(attempt, max)` hears each retry.
    pub async fn embed(
        &self,
        purpose: EmbedPurpose,
        inputs: Vec<String>,
        on_retry: impl FnMut(u32, u32),
    ) -> Result<Vec<Vec<f32>>, LlmError> {
        match self
            .run(LlmCommand::Embed { inputs, purpose }, on_retry)
            .await?
        {
            LlmEvent::Embedded(vectors) => Ok(vectors),
            other => Err(unexpected(other)),
        }
    }

    /// A tools-free chat completion under the retry policy: its visible text (reasoning
    /// fields left out; the caller filters scaffolding).
    pub async fn complete(&self, messages: Vec<ChatMessage>) -> Result<String, LlmError> {
        let (sender, mut events) = mpsc::unbounded_channel();
        let forwarder = Forwarder { sender }.start();
        let llm = LlmActor::new(Arc::clone(&self.settings), forwarder.recipient()).start();
        let _cancel_on_drop = CancelOnDrop(llm.clone());
        llm.do_send(LlmCommand::Chat(ChatRequest {
            messages,
            tools: None,
        }));
        let mut text = String::new();
        while let Some(event) = events.recv().await {
            match event {
                // Every piece is taken at once: the relay window never holds the stream.
                LlmEvent::Content(piece) => {
                    text.push_str(&piece);
                    llm.do_send(LlmCommand::Relayed(1));
                }
                LlmEvent::Reasoning(_) => llm.do_send(LlmCommand::Relayed(1)),
                LlmEvent::Retrying { .. } => {}
                LlmEvent::Failed(err) => return Err(err),
                LlmEvent::ChatDone(_) => return Ok(text),
                other => return Err(unexpected(other)),
            }
        }
        Err(stopped())
    }

    /// One score per document against `query`, from the re-ranking server (one attempt).
    pub async fn rerank(
        &self,
        query: String,
        documents: Vec<String>,
    ) -> Result<Vec<f32>, LlmError> {
        match self
            .run(LlmCommand::Rerank { query, documents }, |_, _| {})
            .await?
        {
            LlmEvent::Reranked(scores) => Ok(scores),
            other => Err(unexpected(other)),
        }
    }

    /// The model ids the server lists (one attempt).
    pub async fn list_models(&self) -> Result<Vec<String>, LlmError> {
        match self.run(LlmCommand::ListModels, |_, _| {}).await? {
            LlmEvent::Models(ids) => Ok(ids),
            other => Err(unexpected(other)),
        }
    }

    async fn run(
        &self,
        command: LlmCommand,
        mut on_retry: impl FnMut(u32, u32),
    ) -> Result<LlmEvent, LlmError> {
        let (sender, mut events) = mpsc::unbounded_channel();
        let forwarder = Forwarder { sender }.start();
        let llm = LlmActor::new(Arc::clone(&self.settings), forwarder.recipient()).start();
        // Dropping this future cancels the request.
        let _cancel_on_drop = CancelOnDrop(llm.clone());
        llm.do_send(command);
        while let Some(event) = events.recv().await {
            match event {
                LlmEvent::Retrying { attempt, max } => on_retry(attempt, max),
                LlmEvent::Failed(err) => return Err(err),
                LlmEvent::Content(_) | LlmEvent::Reasoning(_) => {}
                done => return Ok(done),
            }
        }
        Err(stopped())
    }
}

fn stopped() -> LlmError {
    LlmError::Interrupted(super::AttemptError::Broken(
        "the LLM actor stopped before answering".to_owned(),
    ))
}

fn unexpected(event: LlmEvent) -> LlmError {
    LlmError::Rejected(super::AttemptError::Invalid(format!(
        "unexpected answer from the LLM actor: {event:?}"
    )))
}

/// Passes an LlmActor's events into a channel.
struct Forwarder {
    sender: mpsc::UnboundedSender<LlmEvent>,
}

impl Actor for Forwarder {
    type Context = Context<Self>;
}

impl Handler<LlmEvent> for Forwarder {
    type Result = ();

    fn handle(&mut self, event: LlmEvent, ctx: &mut Self::Context) {
        if self.sender.send(event).is_err() {
            ctx.stop();
        }
    }
}

struct CancelOnDrop(Addr<LlmActor>);

impl Drop for CancelOnDrop {
    fn drop(&mut self) {
        self.0.do_send(LlmCommand::Cancel);
    }
}
