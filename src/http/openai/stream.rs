//! A turn's frames as an OpenAI chat-completion stream (`stream: true`): a first chunk
//! with the role, `delta` frames as `content`, `thinking` frames as
//! `reasoning_content`, `retry` and `tool` frames as SSE comments (their JSON after the
//! event name, so clients that skip comments lose nothing they could show), `done` as
//! the last chunk with `finish_reason: "stop"` and the `bor` extension, a terminal
//! `error` as an error object; then `data: [DONE]`.

use actix_web_lab::sse;
use bor_actors::turn::Frame;
use futures_util::{Stream, StreamExt, stream};
use serde::Serialize;

use super::error::turn_failure_body;
use super::wire::{ChunkDelta, CompletionHead, OpenAiErrorBody};
use crate::http::error::ApiError;
use crate::http::turn::StartedTurn;

/// The events of a streamed completion of `turn`.
pub fn completion_stream(
    head: CompletionHead,
    turn: StartedTurn,
) -> impl Stream<Item = sse::Event> + 'static {
    let first = data(&head.chunk(ChunkDelta::role()));
    let rest = stream::unfold(Some((turn.into_frames(), head)), |state| async move {
        let (mut frames, head) = state?;
        match frames.next().await {
            Some(frame) if frame.is_terminal() => Some((encode(&head, frame), None)),
            Some(frame) => Some((encode(&head, frame), Some((frames, head)))),
            None => Some((unfinished(), None)),
        }
    });
    stream::once(async { first }).chain(rest.flat_map(stream::iter))
}

/// The events of one frame.
pub fn encode(head: &CompletionHead, frame: Frame) -> Vec<sse::Event> {
    match frame {
        Frame::Delta { text } => vec![data(&head.chunk(ChunkDelta::content(text)))],
        Frame::Thinking { text } => vec![data(&head.chunk(ChunkDelta::reasoning(text)))],
        Frame::Retry { .. } | Frame::ToolStart { .. } | Frame::ToolEnd { .. } => {
            vec![sse::Event::Comment(
                format!("{} {}", frame.event_name(), frame.data_json()).into(),
            )]
        }
        Frame::Done(done) => vec![data(&head.last_chunk(done)), done_marker()],
        Frame::Error { code, .. } => vec![data(&turn_failure_body(code)), done_marker()],
    }
}

/// The frames ended without a terminal one: the service stopped the turn while it
/// ran (a client that left reads nothing more). Said as an error, so that a client
/// does not take the partial answer for a whole one.
fn unfinished() -> Vec<sse::Event> {
    let stopping = ApiError::ShuttingDown;
    vec![
        data(&OpenAiErrorBody::new(
            "server_error",
            stopping.code(),
            stopping.public_message(),
        )),
        done_marker(),
    ]
}

fn data(value: &impl Serialize) -> sse::Event {
    // Chunks and error objects hold only strings, numbers and ids: serialising cannot fail.
    sse::Data::new(serde_json::to_string(value).unwrap_or_else(|_| "{}".to_owned())).into()
}

fn done_marker() -> sse::Event {
    sse::Data::new("[DONE]").into()
}

#[cfg(test)]
mod tests {
    use super::*;
    use actix_web::body::MessageBody;
    use bor_actors::record::{ErrorCode, Source, TurnPath};
    use bor_actors::turn::DoneFrame;
    use tokio::sync::mpsc;
    use uuid::Uuid;

    /// The wire text of a turn that sent `frames` and closed its side.
    async fn wire(frames: Vec<Frame>) -> String {
        let (sender, receiver) = mpsc::channel(16);
        let turn_id = Uuid::nil();
        for frame in frames {
            sender.send(frame).await.unwrap();
        }
        drop(sender);
        let turn = StartedTurn {
            turn_id,
            frames: receiver,
        };
        let events = completion_stream(CompletionHead::new(turn_id, 1_700_000_000), turn);
        let body = sse::Sse::from_infallible_stream(events);
        let bytes = actix_web::body::to_bytes(body.boxed()).await.unwrap();
        String::from_utf8(bytes.to_vec()).unwrap()
    }

    fn done() -> DoneFrame {
        DoneFrame {
            turn_id: Uuid::nil(),
            conversation_id: None,
            path: TurnPath::Grounded,
            rounds: 2,
            retries: 1,
            scaffold_stripped: 0,
            recovered: false,
            query: "q".into(),
            sources: vec![Source {
                n: 1,
                document_id: 7,
                title: "Refunds".into(),
                chunk_id: 70,
                score: 0.5,
                heading: String::new(),
                snippet: "Refunds take 14 days.".into(),
                page: None,
                signals: Default::default(),
            }],
            truncated: false,
            stopped: false,
        }
    }

    const ID: &str = "chatcmpl-00000000-0000-0000-0000-000000000000";

    fn chunk(delta: &str, extra: &str) -> String {
        format!(
            "data: {{\"id\":\"{ID}\",\"object\":\"chat.completion.chunk\",\"created\":1700000000,\"model\":\"bor\",\"choices\":[{{\"index\":0,\"delta\":{delta},\"finish_reason\":{extra}\n\n"
        )
    }

    #[actix_web::test]
    async fn a_turn_becomes_chunks_comments_and_done() {
        let text = wire(vec![
            Frame::Retry { attempt: 1, max: 3 },
            Frame::tool_start("c1", "search_documents"),
            Frame::tool_end("c1", "search_documents", true),
            Frame::Thinking {
                text: "Hmm.".into(),
            },
            Frame::Delta {
                text: "Fourteen".into(),
            },
            Frame::Delta {
                text: " days.".into(),
            },
            Frame::Done(done()),
        ])
        .await;
        let expected = [
            chunk(r#"{"role":"assistant","content":""}"#, "null}]}"),
            ": retry {\"attempt\":1,\"max\":3}\n\n".to_owned(),
            ": tool {\"call_id\":\"c1\",\"name\":\"search_documents\",\"phase\":\"start\"}\n\n"
                .to_owned(),
            ": tool {\"call_id\":\"c1\",\"name\":\"search_documents\",\"phase\":\"end\",\"ok\":true}\n\n"
                .to_owned(),
            chunk(r#"{"reasoning_content":"Hmm."}"#, "null}]}"),
            chunk(r#"{"content":"Fourteen"}"#, "null}]}"),
            chunk(r#"{"content":" days."}"#, "null}]}"),
            chunk(
                "{}",
                &format!(
                    "\"stop\"}}],\"bor\":{{\"turn_id\":\"{}\",\"path\":\"grounded\",\"sources\":[{{\"n\":1,\"document_id\":7,\"title\":\"Refunds\",\"chunk_id\":70,\"score\":0.5,\"heading\":\"\",\"snippet\":\"Refunds take 14 days.\",\"page\":null,\"signals\":{{\"vector\":null,\"full_text\":null,\"fused\":null,\"rerank\":null}}}}]}}}}",
                    Uuid::nil()
                ),
            ),
            "data: [DONE]\n\n".to_owned(),
        ]
        .concat();
        assert_eq!(text, expected);
    }

    #[actix_web::test]
    async fn a_failed_turn_ends_with_an_error_object_and_done() {
        let text = wire(vec![
            Frame::Delta { text: "Hal".into() },
            Frame::error(Uuid::nil(), None, ErrorCode::LlmInterrupted),
        ])
        .await;
        assert!(text.ends_with(&format!(
            "data: {{\"error\":{{\"message\":\"{}\",\"type\":\"server_error\",\"param\":null,\"code\":\"llm_interrupted\"}}}}\n\ndata: [DONE]\n\n",
            ErrorCode::LlmInterrupted.detail()
        )), "{text}");
    }

    #[actix_web::test]
    async fn a_turn_stopped_by_the_service_says_so() {
        let text = wire(vec![Frame::Delta { text: "Hal".into() }]).await;
        assert!(
            text.ends_with("\"code\":\"unavailable\"}}\n\ndata: [DONE]\n\n"),
            "{text}"
        );
        assert!(text.contains("shutting down"), "{text}");
    }
}
