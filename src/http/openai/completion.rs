//! A turn's frames as one `chat.completion` (`stream: false`): the `delta` texts are
//! the content, the `thinking` texts the `reasoning_content`; `retry` and `tool` frames
//! leave no trace; a terminal `error` becomes the HTTP error of its code.

use bor_actors::turn::Frame;
use futures_util::StreamExt;

use super::error::OpenAiError;
use super::wire::{ChatCompletion, CompletionHead};
use crate::http::error::ApiError;
use crate::http::turn::StartedTurn;

/// Waits for the whole turn. Dropping the future (the client left) drops the frame
/// channel, which stops the turn and its upstream request.
pub async fn complete(
    head: CompletionHead,
    turn: StartedTurn,
) -> Result<ChatCompletion, OpenAiError> {
    let mut collector = Collector::default();
    let mut frames = turn.into_frames();
    while let Some(frame) = frames.next().await {
        if let Some(result) = collector.push(&head, frame) {
            return result;
        }
    }
    // No terminal frame: the service stopped the turn while it ran.
    Err(ApiError::ShuttingDown.into())
}

#[derive(Default)]
struct Collector {
    content: String,
    reasoning: String,
}

impl Collector {
    /// Takes one frame; the result once the frame was terminal.
    fn push(
        &mut self,
        head: &CompletionHead,
        frame: Frame,
    ) -> Option<Result<ChatCompletion, OpenAiError>> {
        match frame {
            Frame::Delta { text } => self.content.push_str(&text),
            Frame::Thinking { text } => self.reasoning.push_str(&text),
            Frame::Retry { .. } | Frame::ToolStart { .. } | Frame::ToolEnd { .. } => {}
            Frame::Done(done) => {
                let content = std::mem::take(&mut self.content);
                let reasoning = Some(std::mem::take(&mut self.reasoning)).filter(|r| !r.is_empty());
                return Some(Ok(head.completion(content, reasoning, done)));
            }
            Frame::Error { code, .. } => return Some(Err(OpenAiError::TurnFailed(code))),
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use bor_actors::record::{ErrorCode, TurnPath};
    use bor_actors::turn::DoneFrame;
    use serde_json::json;
    use tokio::sync::mpsc;
    use uuid::Uuid;

    async fn complete_frames(frames: Vec<Frame>) -> Result<ChatCompletion, OpenAiError> {
        let (sender, receiver) = mpsc::channel(16);
        for frame in frames {
            sender.send(frame).await.unwrap();
        }
        drop(sender);
        let turn_id = Uuid::nil();
        let turn = StartedTurn {
            turn_id,
            frames: receiver,
        };
        complete(CompletionHead::new(turn_id, 1_700_000_000), turn).await
    }

    fn done() -> Frame {
        Frame::Done(DoneFrame {
            turn_id: Uuid::nil(),
            conversation_id: None,
            path: TurnPath::Deflected,
            rounds: 1,
            retries: 0,
            scaffold_stripped: 0,
            recovered: false,
            query: "q".into(),
            sources: vec![],
            truncated: false,
            stopped: false,
        })
    }

    #[actix_web::test]
    async fn deltas_and_thinking_make_one_completion() {
        let completion = complete_frames(vec![
            Frame::Retry { attempt: 1, max: 3 },
            Frame::Thinking {
                text: "Let me".into(),
            },
            Frame::Thinking {
                text: " see.".into(),
            },
            Frame::Delta {
                text: "Paris".into(),
            },
            Frame::Delta { text: ".".into() },
            done(),
        ])
        .await
        .unwrap();
        assert_eq!(
            serde_json::to_value(completion).unwrap(),
            json!({
                "id": format!("chatcmpl-{}", Uuid::nil()),
                "object": "chat.completion",
                "created": 1_700_000_000,
                "model": "bor",
                "choices": [{
                    "index": 0,
                    "message": {"role": "assistant", "content": "Paris.", "reasoning_content": "Let me see."},
                    "finish_reason": "stop"
                }],
                "bor": {"turn_id": Uuid::nil(), "path": "deflected", "sources": []}
            })
        );
        let plain = complete_frames(vec![done()]).await.unwrap();
        assert_eq!(plain.choices[0].message.content, "");
        assert_eq!(plain.choices[0].message.reasoning_content, None);
    }

    #[actix_web::test]
    async fn an_error_frame_or_a_stopped_turn_is_an_error() {
        let failed = complete_frames(vec![
            Frame::Delta { text: "Par".into() },
            Frame::error(Uuid::nil(), None, ErrorCode::LlmInterrupted),
        ])
        .await;
        assert!(matches!(
            failed,
            Err(OpenAiError::TurnFailed(ErrorCode::LlmInterrupted))
        ));
        let stopped = complete_frames(vec![Frame::Delta { text: "Par".into() }]).await;
        assert!(matches!(
            stopped,
            Err(OpenAiError::Refused(ApiError::ShuttingDown))
        ));
    }
}
