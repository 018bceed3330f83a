//! TurnActor tests: the actor driven by a scripted fake LLM actor (no HTTP), with an
//! in-memory knowledge base and a log recipient that keeps what it is sent.

mod failures;
mod paths;
mod recovery;
mod relay;
mod rerank;
mod usage;

use std::collections::VecDeque;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use actix::prelude::*;
use futures_util::future::{self, BoxFuture};
use tokio::sync::mpsc;
use uuid::Uuid;

use super::{Frame, TurnActor, TurnDeps, TurnSettings, TurnSpec};
use crate::knowledge::{
    ChunkHit, DocumentRef, DocumentText, KnowledgeBase, KnowledgeError, Retrieval,
};
use crate::llm::{
    ChatCompletion, ChatMessage, ChatRequest, EmbedPurpose, FunctionCall, LlmCommand, LlmEvent,
    ToolCall,
};
use crate::log::TurnFinished;
use crate::record::TurnRecord;

/// What the fake LLM was asked.
#[derive(Debug, Clone, PartialEq)]
pub enum Asked {
    Chat(ChatRequest),
    Embed(Vec<String>, EmbedPurpose),
    ListModels,
    Rerank {
        query: String,
        documents: Vec<String>,
    },
    Cancel,
}

/// What a [`ScriptedLlm`] is made of before it knows its requester.
struct LlmScript {
    script: VecDeque<Vec<LlmEvent>>,
    asked: Arc<Mutex<Vec<Asked>>>,
    relayed: Arc<AtomicUsize>,
}

impl LlmScript {
    fn start_for(self, requester: Recipient<LlmEvent>) -> Recipient<LlmCommand> {
        ScriptedLlm {
            requester,
            script: self.script,
            asked: self.asked,
            relayed: self.relayed,
        }
        .start()
        .recipient()
    }
}

/// Answers each request with the next scripted list of events.
struct ScriptedLlm {
    requester: Recipient<LlmEvent>,
    script: VecDeque<Vec<LlmEvent>>,
    asked: Arc<Mutex<Vec<Asked>>>,
    /// Pieces the turn acknowledged (`LlmCommand::Relayed`).
    relayed: Arc<AtomicUsize>,
}

impl Actor for ScriptedLlm {
    type Context = Context<Self>;
}

impl Handler<LlmCommand> for ScriptedLlm {
    type Result = ();

    fn handle(&mut self, command: LlmCommand, _: &mut Self::Context) {
        let asked = match command {
            LlmCommand::Chat(request) => Asked::Chat(request),
            LlmCommand::Embed { inputs, purpose } => Asked::Embed(inputs, purpose),
            LlmCommand::ListModels => Asked::ListModels,
            LlmCommand::Rerank { query, documents } => Asked::Rerank { query, documents },
            LlmCommand::Cancel => Asked::Cancel,
            LlmCommand::Relayed(pieces) => {
                self.relayed.fetch_add(pieces, Ordering::SeqCst);
                return;
            }
        };
        let answers = matches!(asked, Asked::Cancel)
            .then(Vec::new)
            .or_else(|| self.script.pop_front())
            .unwrap_or_default();
        self.asked.lock().unwrap().push(asked);
        for event in answers {
            self.requester.do_send(event);
        }
    }
}

/// Keeps every finished-turn record, and whether it came with the turn's slot.
struct LogCatcher {
    records: Arc<Mutex<Vec<TurnRecord>>>,
    carried_slot: Arc<Mutex<Vec<bool>>>,
}

impl Actor for LogCatcher {
    type Context = Context<Self>;
}

impl Handler<TurnFinished> for LogCatcher {
    type Result = ();

    fn handle(&mut self, TurnFinished { record, slot, .. }: TurnFinished, _: &mut Self::Context) {
        self.records.lock().unwrap().push(record);
        self.carried_slot.lock().unwrap().push(slot.is_some());
    }
}

/// Answers once every earlier message is handled.
#[derive(Message)]
#[rtype(result = "()")]
struct Sync;

impl Handler<Sync> for LogCatcher {
    type Result = ();

    fn handle(&mut self, _: Sync, _: &mut Self::Context) {}
}

/// A knowledge base that returns the same retrieval for every query.
pub struct FixedKnowledge {
    pub retrieval: Retrieval,
    pub documents: Vec<DocumentText>,
}

impl KnowledgeBase for FixedKnowledge {
    fn retrieve(
        &self,
        _query: String,
        _embedding: Vec<f32>,
        top_k: usize,
    ) -> BoxFuture<'static, Result<Retrieval, KnowledgeError>> {
        let mut retrieval = self.retrieval.clone();
        retrieval.hits.truncate(top_k);
        Box::pin(future::ready(Ok(retrieval)))
    }

    fn read_document(
        &self,
        document_id: i64,
    ) -> BoxFuture<'static, Result<Option<DocumentText>, KnowledgeError>> {
        let found = self
            .documents
            .iter()
            .find(|d| d.document_id == document_id)
            .cloned();
        Box::pin(future::ready(Ok(found)))
    }

    fn list_documents(&self) -> BoxFuture<'static, Result<Vec<DocumentRef>, KnowledgeError>> {
        let list = self
            .documents
            .iter()
            .map(|d| DocumentRef {
                id: d.document_id,
                title: d.title.clone(),
                summary: None,
            })
            .collect();
        Box::pin(future::ready(Ok(list)))
    }
}

pub fn hit(chunk_id: i64, score: f32) -> ChunkHit {
    ChunkHit {
        document_id: chunk_id / 10,
        title: format!("Document {}", chunk_id / 10),
        chunk_id,
        score,
        text: format!("Text of chunk {chunk_id}."),
        heading: format!("Part {}", chunk_id % 10),
        page: None,
        signals: Default::default(),
    }
}

/// A knowledge base where the question is relevant (best cosine 0.8).
pub fn relevant() -> FixedKnowledge {
    FixedKnowledge {
        retrieval: Retrieval {
            hits: vec![hit(11, 0.8), hit(21, 0.6)],
            best_cosine: Some(0.8),
            text_match: true,
        },
        documents: vec![DocumentText {
            document_id: 1,
            title: "Document 1".into(),
            text: "The whole first document.".into(),
            truncated: false,
        }],
    }
}

/// An empty knowledge base: every turn is deflected.
pub fn empty() -> FixedKnowledge {
    FixedKnowledge {
        retrieval: Retrieval::default(),
        documents: Vec::new(),
    }
}

pub fn settings() -> TurnSettings {
    TurnSettings {
        agent_enabled: true,
        max_rounds: 4,
        top_k: 5,
        rerank: None,
        deflect_threshold: 0.35,
        thinking_forced_open: false,
        chat_model: "test-model".into(),
        max_answer_chars: 100_000,
    }
}

pub fn embedded() -> Vec<LlmEvent> {
    vec![LlmEvent::Embedded(vec![vec![1.0, 0.0]])]
}

/// A reply streaming `pieces` as content, without tool calls.
pub fn reply(pieces: &[&str]) -> Vec<LlmEvent> {
    let mut events: Vec<LlmEvent> = pieces
        .iter()
        .map(|p| LlmEvent::Content((*p).to_owned()))
        .collect();
    events.push(LlmEvent::ChatDone(ChatCompletion {
        finish_reason: Some("stop".into()),
        ..Default::default()
    }));
    events
}

pub fn tool_call(id: &str, name: &str, arguments: &str) -> ToolCall {
    ToolCall {
        id: id.into(),
        kind: "function".into(),
        function: FunctionCall {
            name: name.into(),
            arguments: arguments.into(),
        },
    }
}

/// A reply that calls tools (with optional text before the calls).
pub fn calls(text: &str, tool_calls: Vec<ToolCall>) -> Vec<LlmEvent> {
    let mut events = Vec::new();
    if !text.is_empty() {
        events.push(LlmEvent::Content(text.to_owned()));
    }
    events.push(LlmEvent::ChatDone(ChatCompletion {
        tool_calls,
        finish_reason: Some("tool_calls".into()),
        usage: None,
    }));
    events
}

/// Everything a turn did.
pub struct TurnRun {
    pub frames: Vec<Frame>,
    pub asked: Vec<Asked>,
    pub records: Vec<TurnRecord>,
}

impl TurnRun {
    pub fn chats(&self) -> Vec<&ChatRequest> {
        self.asked
            .iter()
            .filter_map(|a| match a {
                Asked::Chat(request) => Some(request),
                _ => None,
            })
            .collect()
    }

    pub fn deltas(&self) -> String {
        self.frames
            .iter()
            .filter_map(|f| match f {
                Frame::Delta { text } => Some(text.as_str()),
                _ => None,
            })
            .collect()
    }

    pub fn names(&self) -> Vec<&'static str> {
        self.frames.iter().map(Frame::event_name).collect()
    }

    pub fn done(&self) -> &super::DoneFrame {
        match self.frames.last() {
            Some(Frame::Done(done)) => done,
            other => panic!("the last frame is not done: {other:?}"),
        }
    }

    pub fn record(&self) -> &TurnRecord {
        assert_eq!(self.records.len(), 1, "one record per turn");
        &self.records[0]
    }

    /// Exactly one terminal frame, and it is last.
    pub fn assert_one_terminal_frame_last(&self) {
        let terminals = self.frames.iter().filter(|f| f.is_terminal()).count();
        assert_eq!(terminals, 1, "{:?}", self.names());
        assert!(self.frames.last().is_some_and(Frame::is_terminal));
    }
}

/// How to start a turn for a test; `Default` is a question on an empty knowledge base.
pub struct TurnSetup {
    pub question: &'static str,
    /// Earlier messages of the conversation, oldest first.
    pub history: Vec<ChatMessage>,
    pub settings: TurnSettings,
    pub knowledge: FixedKnowledge,
    /// One list of events per request the turn makes.
    pub script: Vec<Vec<LlmEvent>>,
    /// Capacity of the frame channel between the turn and its client.
    pub capacity: usize,
    pub stop: Option<tokio::sync::watch::Receiver<bool>>,
}

impl Default for TurnSetup {
    fn default() -> Self {
        Self {
            question: "Q?",
            history: Vec::new(),
            settings: settings(),
            knowledge: empty(),
            script: Vec::new(),
            capacity: 16,
            stop: None,
        }
    }
}

/// A running turn and what its fakes saw.
pub struct StartedTurn {
    pub turn: Addr<TurnActor>,
    pub frames: mpsc::Receiver<Frame>,
    pub records: Arc<Mutex<Vec<TurnRecord>>>,
    pub asked: Arc<Mutex<Vec<Asked>>>,
    /// Pieces the turn acknowledged to its LLM actor.
    pub relayed: Arc<AtomicUsize>,
    /// The one slot the turn was started with.
    pub slots: Arc<tokio::sync::Semaphore>,
    /// Per record the log got, whether the turn's slot came with it.
    pub carried_slot: Arc<Mutex<Vec<bool>>>,
    log: Addr<LogCatcher>,
}

impl StartedTurn {
    /// Every record the turn sent so far (after the log catcher has handled them).
    pub async fn records(&self) -> Vec<TurnRecord> {
        self.log.send(Sync).await.unwrap();
        self.records.lock().unwrap().clone()
    }
}

pub fn start_turn(setup: TurnSetup) -> StartedTurn {
    let asked = Arc::new(Mutex::new(Vec::new()));
    let records = Arc::new(Mutex::new(Vec::new()));
    let carried_slot = Arc::new(Mutex::new(Vec::new()));
    let relayed = Arc::new(AtomicUsize::new(0));
    let log = LogCatcher {
        records: Arc::clone(&records),
        carried_slot: Arc::clone(&carried_slot),
    }
    .start();
    let slots = Arc::new(tokio::sync::Semaphore::new(1));
    let slot = Arc::clone(&slots).try_acquire_owned().ok();
    let (sender, frames) = mpsc::channel(setup.capacity);
    let llm = LlmScript {
        script: VecDeque::from(setup.script),
        asked: Arc::clone(&asked),
        relayed: Arc::clone(&relayed),
    };
    let turn = TurnActor::new(
        Uuid::new_v4(),
        TurnSpec {
            conversation_id: None,
            user_id: None,
            key_id: None,
            question: setup.question.to_owned(),
            history: setup.history,
            version_of: None,
        },
        Arc::new(setup.settings),
        TurnDeps {
            knowledge: Arc::new(setup.knowledge),
            log: log.clone().recipient(),
            connect_llm: Box::new(move |requester| llm.start_for(requester)),
            slot,
            stop: setup.stop,
        },
        sender,
    )
    .start();
    StartedTurn {
        turn,
        frames,
        records,
        asked,
        relayed,
        slots,
        carried_slot,
        log,
    }
}

/// Runs one turn to its end against the script and collects what it did.
pub async fn run_turn(
    question: &'static str,
    settings: TurnSettings,
    knowledge: FixedKnowledge,
    script: Vec<Vec<LlmEvent>>,
) -> TurnRun {
    run_setup(TurnSetup {
        question,
        settings,
        knowledge,
        script,
        ..TurnSetup::default()
    })
    .await
}

/// Runs the turn of `setup` to its end and collects what it did.
pub async fn run_setup(setup: TurnSetup) -> TurnRun {
    let mut started = start_turn(setup);
    let mut frames = Vec::new();
    while let Some(frame) = started.frames.recv().await {
        frames.push(frame);
    }
    let records = started.records().await;
    let asked = started.asked.lock().unwrap().clone();
    TurnRun {
        frames,
        asked,
        records,
    }
}
