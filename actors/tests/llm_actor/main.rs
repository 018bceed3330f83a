//! The LlmActor against the mock LLM over real HTTP: every rule of the retry policy
//! (docs/PROTOCOL.md, "Retry policy"), stream decoding on the wire, and cancellation.

#![expect(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "a test stops at the first unexpected value"
)]

mod cancellation;
mod decoding;
mod embeddings;
mod metrics;
mod rerank;
mod retries;

use std::sync::Arc;
use std::time::Duration;

use actix::prelude::*;
use bor_actors::llm::{
    ChatMessage, ChatRequest, EmbedPurpose, LlmActor, LlmCommand, LlmEvent, LlmSettings,
};
use bor_mock_llm::MockLlm;
use serde_json::Value;
use tokio::sync::mpsc;

pub const API_KEY: &str = "sk-test-key-4d1c";

pub fn settings(base_url: String) -> LlmSettings {
    LlmSettings {
        embed_base_url: base_url.clone(),
        base_url,
        api_key: Some(API_KEY.to_owned()),
        chat_model: "smollm2".to_owned(),
        embed_model: "smollm2".to_owned(),
        embed_prefixes: Default::default(),
        retries: 3,
        retry_delay: Duration::ZERO,
        connect_timeout: Duration::from_secs(2),
        read_timeout: Duration::from_secs(5),
        temperature: None,
        max_tokens: None,
        embeddings_fix: EMBEDDINGS_FIX.to_owned(),
        rerank: None,
        stream_usage: Default::default(),
    }
}

/// The `embeddings_fix` of [`settings`].
pub const EMBEDDINGS_FIX: &str = "embeddings go to the test's mock; point them elsewhere";

/// Passes an LlmActor's events into a channel.
pub struct Collector {
    pub sender: mpsc::UnboundedSender<LlmEvent>,
}

impl Actor for Collector {
    type Context = Context<Self>;
}

impl Handler<LlmEvent> for Collector {
    type Result = ();

    fn handle(&mut self, event: LlmEvent, _: &mut Self::Context) {
        let _ = self.sender.send(event);
    }
}

/// Stops the collector: its LlmActor's requester is gone.
#[derive(Message)]
#[rtype(result = "()")]
pub struct Leave;

impl Handler<Leave> for Collector {
    type Result = ();

    fn handle(&mut self, _: Leave, ctx: &mut Self::Context) {
        ctx.stop();
    }
}

/// A running LlmActor and the events it reports.
pub struct Harness {
    pub llm: Addr<LlmActor>,
    pub collector: Addr<Collector>,
    pub events: mpsc::UnboundedReceiver<LlmEvent>,
}

impl Harness {
    pub fn start(settings: LlmSettings) -> Self {
        let (sender, events) = mpsc::unbounded_channel();
        let collector = Collector { sender }.start();
        let llm = LlmActor::new(Arc::new(settings), collector.clone().recipient()).start();
        Self {
            llm,
            collector,
            events,
        }
    }

    /// Events up to and including the terminal one.
    pub async fn until_end(&mut self) -> Vec<LlmEvent> {
        let mut seen = Vec::new();
        loop {
            let event = tokio::time::timeout(Duration::from_secs(20), self.events.recv())
                .await
                .expect("the LLM actor went silent")
                .expect("the collector stopped");
            let terminal = matches!(
                event,
                LlmEvent::ChatDone(_)
                    | LlmEvent::Embedded(_)
                    | LlmEvent::Models(_)
                    | LlmEvent::Reranked(_)
                    | LlmEvent::Failed(_)
            );
            seen.push(event);
            if terminal {
                return seen;
            }
        }
    }
}

/// Runs one command on a fresh actor and returns its events.
pub async fn run(settings: LlmSettings, command: LlmCommand) -> Vec<LlmEvent> {
    let mut harness = Harness::start(settings);
    harness.llm.do_send(command);
    harness.until_end().await
}

/// Embeds `inputs` as passages of documents.
pub fn embed_documents(inputs: Vec<String>) -> LlmCommand {
    LlmCommand::Embed {
        inputs,
        purpose: EmbedPurpose::Document,
    }
}

/// A chat request whose question carries a mock directive.
pub fn chat(directive: Value) -> LlmCommand {
    LlmCommand::Chat(ChatRequest {
        messages: vec![
            ChatMessage::system("You are a test."),
            ChatMessage::user(format!("What is bor?\nMOCK {directive}")),
        ],
        tools: None,
    })
}

pub fn content(events: &[LlmEvent]) -> String {
    events
        .iter()
        .filter_map(|e| match e {
            LlmEvent::Content(text) => Some(text.as_str()),
            _ => None,
        })
        .collect()
}

pub fn retries(events: &[LlmEvent]) -> Vec<(u32, u32)> {
    events
        .iter()
        .filter_map(|e| match e {
            LlmEvent::Retrying { attempt, max } => Some((*attempt, *max)),
            _ => None,
        })
        .collect()
}

pub fn mock() -> MockLlm {
    MockLlm::start().expect("the mock LLM starts")
}
