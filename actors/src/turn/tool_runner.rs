//! Running a round's tool calls (docs/PROTOCOL.md, "Document tools"), one at a time: a
//! call is parsed, a search is embedded and then run, a read or a list asks the
//! knowledge base; each result goes back to the model as a `tool` message, with a
//! `tool` frame to the client at its start and end. The tools' definitions and
//! argument parsing are in `tools.rs`.

use actix::prelude::*;
use futures_util::future::BoxFuture;

use super::TurnActor;
use super::frames::Frame;
use super::machine::{Input, Phase, RunningTool, ToolOutcome, ToolRun};
use super::tools::{self, ToolInvocation};
use crate::error_chain;
use crate::knowledge::KnowledgeError;
use crate::llm::{ChatMessage, EmbedPurpose, LlmCommand, ToolCall};
use crate::metrics::metrics;

impl TurnActor {
    /// Starts the next tool call of the round, or the next request when none is left.
    pub(super) fn next_tool(&mut self, mut run: ToolRun, ctx: &mut Context<Self>) -> Phase {
        let Some(call) = run.pending.pop_front() else {
            let tools_offered = self.transcript.counters.tool_rounds < self.settings.max_rounds;
            return self.start_request(tools_offered, false);
        };
        self.transcript.counters.tool_calls += 1;
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
                self.llm_send(LlmCommand::Embed {
                    inputs: vec![query.clone()],
                    purpose: EmbedPurpose::Query,
                });
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
                }) as BoxFuture<'static, ToolOutcome>
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
                    Ok(retrieval) => ToolOutcome::Found(retrieval.hits),
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
            let result = match outcome {
                // Search results are numbered like the context, so they can be cited.
                ToolOutcome::Found(hits) => {
                    let numbers = self.transcript.add_sources(&hits);
                    tools::search_result(&hits, &numbers)
                }
                ToolOutcome::Result(result) => result,
            };
            self.record_tool_result(&tool.call, result, ctx);
        }
        self.next_tool(run, ctx)
    }

    fn record_tool_result(
        &mut self,
        call: &ToolCall,
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
}

impl ToolOutcome {
    fn json(value: &impl serde::Serialize) -> Self {
        Self::Result(serde_json::to_string(value).map_err(|err| err.to_string()))
    }

    /// A call that failed; `message` tells the model why.
    pub(super) fn error(message: String) -> Self {
        Self::Result(Err(message))
    }

    /// A tool the knowledge base could not serve: the model is told what failed, the
    /// log gets the cause.
    fn knowledge_failed(error: &KnowledgeError) -> Self {
        tracing::warn!(error = %error_chain(error), "a document tool failed");
        Self::error(error.to_string())
    }
}
