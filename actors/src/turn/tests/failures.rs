//! Retries, failures and a client that goes away.

use tokio::sync::watch;

use super::*;
use crate::llm::{AttemptError, LlmError};
use crate::record::{ErrorCode, TurnOutcome, TurnPath};

fn unavailable() -> LlmEvent {
    LlmEvent::Failed(LlmError::Unavailable {
        attempts: 4,
        last: AttemptError::Connect("refused".into()),
    })
}

#[actix::test]
async fn retry_frames_come_before_any_output_and_are_counted() {
    let mut embed = vec![LlmEvent::Retrying { attempt: 1, max: 3 }];
    embed.extend(embedded());
    let mut chat = vec![
        LlmEvent::Retrying { attempt: 1, max: 3 },
        LlmEvent::Retrying { attempt: 2, max: 3 },
    ];
    chat.extend(reply(&["Hi."]));
    let run = run_turn("Q?", settings(), empty(), vec![embed, chat]).await;
    assert_eq!(
        run.names(),
        vec!["retry", "retry", "retry", "delta", "done"]
    );
    assert_eq!(run.frames[0], Frame::Retry { attempt: 1, max: 3 });
    assert_eq!(run.frames[2], Frame::Retry { attempt: 2, max: 3 });
    assert_eq!(run.done().retries, 3);
    assert_eq!(run.record().retries, 3);
}

#[actix::test]
async fn embedding_exhausted_is_llm_unavailable_before_retrieval() {
    let embed = vec![LlmEvent::Retrying { attempt: 1, max: 1 }, unavailable()];
    let run = run_turn("Q?", settings(), empty(), vec![embed]).await;
    assert_eq!(run.names(), vec!["retry", "error"]);
    let record = run.record();
    assert_eq!(
        record.outcome,
        TurnOutcome::Error(ErrorCode::LlmUnavailable)
    );
    assert_eq!(record.path, TurnPath::Undecided);
    assert_eq!(record.rounds, 0);
    assert!(run.chats().is_empty());
    run.assert_one_terminal_frame_last();
}

#[actix::test]
async fn each_llm_failure_maps_to_its_code() {
    let cases = [
        (unavailable(), ErrorCode::LlmUnavailable),
        (
            LlmEvent::Failed(LlmError::Rejected(AttemptError::Status {
                status: 400,
                body: "bad".into(),
            })),
            ErrorCode::LlmRejected,
        ),
        (
            LlmEvent::Failed(LlmError::Interrupted(AttemptError::Broken("eof".into()))),
            ErrorCode::LlmInterrupted,
        ),
    ];
    for (failure, code) in cases {
        let run = run_turn(
            "Q?",
            settings(),
            empty(),
            vec![
                embedded(),
                vec![LlmEvent::Content("Partial".into()), failure],
            ],
        )
        .await;
        assert_eq!(run.names(), vec!["delta", "error"]);
        assert_eq!(
            run.frames[1],
            Frame::error(run.record().turn_id, None, code)
        );
        assert_eq!(run.record().outcome, TurnOutcome::Error(code));
        assert_eq!(run.record().path, TurnPath::Deflected);
        run.assert_one_terminal_frame_last();
    }
}

#[actix::test]
async fn a_failed_search_embedding_is_a_tool_error_not_the_end() {
    let run = run_turn(
        "Q?",
        settings(),
        relevant(),
        vec![
            embedded(),
            calls(
                "",
                vec![tool_call("s", "search_documents", r#"{"query":"x"}"#)],
            ),
            vec![unavailable()],
            reply(&["Answer without search."]),
        ],
    )
    .await;
    assert_eq!(run.names(), vec!["tool", "tool", "delta", "done"]);
    assert_eq!(
        run.frames[1],
        Frame::tool_end("s", "search_documents", false)
    );
}

/// A turn whose reply streams "Partial answer" and never ends.
struct UnfinishedTurn(StartedTurn);

impl std::ops::Deref for UnfinishedTurn {
    type Target = StartedTurn;
    fn deref(&self) -> &StartedTurn {
        &self.0
    }
}

impl std::ops::DerefMut for UnfinishedTurn {
    fn deref_mut(&mut self) -> &mut StartedTurn {
        &mut self.0
    }
}

impl UnfinishedTurn {
    fn start(stop: Option<watch::Receiver<bool>>) -> Self {
        Self(start_turn(TurnSetup {
            script: vec![embedded(), vec![LlmEvent::Content("Partial answer".into())]],
            stop,
            ..TurnSetup::default()
        }))
    }

    async fn first_frame_is_the_partial_answer(&mut self) {
        let first = self.frames.recv().await.unwrap();
        assert_eq!(
            first,
            Frame::Delta {
                text: "Partial answer".into()
            }
        );
    }

    /// The one record, once the turn has ended.
    async fn record(&self) -> TurnRecord {
        let ended = wait_until(|| !self.records.lock().unwrap().is_empty()).await;
        assert!(ended, "the turn ended");
        let records = self.records.lock().unwrap();
        assert_eq!(records.len(), 1);
        records[0].clone()
    }

    async fn assert_llm_cancelled(&self) {
        let cancelled =
            wait_until(|| self.asked.lock().unwrap().last() == Some(&Asked::Cancel)).await;
        assert!(cancelled, "the LLM request was cancelled");
    }
}

#[actix::test]
async fn client_going_away_stops_the_turn_and_keeps_the_partial_answer() {
    let mut turn = UnfinishedTurn::start(None);
    turn.first_frame_is_the_partial_answer().await;
    turn.frames.close();

    let record = turn.record().await;
    assert_eq!(record.outcome, TurnOutcome::Stopped);
    assert_eq!(record.answer, "Partial answer");
    assert_eq!(
        record.outcome.row_status(),
        Some(crate::record::TurnStatus::Stopped)
    );
    turn.assert_llm_cancelled().await;
}

#[actix::test]
async fn the_stop_signal_ends_the_stream_with_one_terminal_frame_and_keeps_the_partial_answer() {
    let (stop, stop_signal) = watch::channel(false);
    let mut turn = UnfinishedTurn::start(Some(stop_signal));
    turn.first_frame_is_the_partial_answer().await;
    assert!(turn.records.lock().unwrap().is_empty(), "still running");

    stop.send_replace(true);
    match turn.frames.recv().await {
        Some(Frame::Error { code, detail, .. }) => {
            assert_eq!(code, ErrorCode::Internal);
            assert_eq!(
                detail,
                "Something went wrong on our side — please try again."
            );
        }
        other => panic!("expected the terminal error frame, got {other:?}"),
    }
    assert_eq!(turn.frames.recv().await, None, "the stream then ends");
    // A second stop signal (or a late one) adds nothing.
    stop.send_replace(true);
    let record = turn.record().await;
    assert_eq!(record.outcome, TurnOutcome::Stopped);
    assert_eq!(record.answer, "Partial answer");
    turn.assert_llm_cancelled().await;
}

#[actix::test]
async fn a_dropped_stop_signal_does_not_end_the_turn() {
    let (stop, stop_signal) = watch::channel(false);
    let mut turn = UnfinishedTurn::start(Some(stop_signal));
    turn.first_frame_is_the_partial_answer().await;
    drop(stop);
    // Nothing asked the turn to stop: it goes on until its client leaves.
    actix::clock::sleep(std::time::Duration::from_millis(50)).await;
    assert!(turn.records.lock().unwrap().is_empty(), "still running");
    turn.frames.close();
    assert_eq!(turn.record().await.outcome, TurnOutcome::Stopped);
}

#[actix::test]
async fn the_stop_signal_closes_a_finished_turn_whose_client_reads_slowly() {
    let pieces: Vec<String> = (0..40).map(|n| format!("piece{n} ")).collect();
    let pieces: Vec<&str> = pieces.iter().map(String::as_str).collect();
    let (stop, stop_signal) = watch::channel(false);
    // Room for one frame: the rest wait in the turn's backlog while nobody reads.
    let StartedTurn {
        turn,
        mut frames,
        records,
        ..
    } = start_turn(TurnSetup {
        script: vec![embedded(), reply(&pieces)],
        capacity: 1,
        stop: Some(stop_signal),
        ..TurnSetup::default()
    });
    assert!(wait_until(|| !records.lock().unwrap().is_empty()).await);
    assert_eq!(records.lock().unwrap()[0].outcome, TurnOutcome::Done);
    assert!(turn.connected(), "the done frame waits for the client");

    stop.send_replace(true);
    assert!(wait_until(|| !turn.connected()).await, "the turn stopped");
    let mut received = 0;
    while frames.recv().await.is_some() {
        received += 1;
    }
    assert!(
        received < pieces.len(),
        "the backlog was dropped: {received}"
    );
}

/// Polls `condition` for up to five seconds.
pub(super) async fn wait_until(condition: impl Fn() -> bool) -> bool {
    for _ in 0..500 {
        if condition() {
            return true;
        }
        actix::clock::sleep(std::time::Duration::from_millis(10)).await;
    }
    condition()
}

#[actix::test]
async fn an_answer_past_its_bound_ends_the_turn_with_what_was_shown() {
    let bounded = TurnSettings {
        max_answer_chars: 12,
        ..settings()
    };
    // Five characters of reasoning and seven of answer fill the bound.
    let mut chat = vec![LlmEvent::Reasoning("think".into())];
    chat.extend(reply(&["Hello ", "world, and more", " never sent"]));
    let run = run_turn("Q?", bounded, empty(), vec![embedded(), chat]).await;
    assert_eq!(run.deltas(), "Hello w");
    assert!(run.done().truncated, "{:?}", run.frames);
    run.assert_one_terminal_frame_last();
    let record = run.record();
    assert_eq!(record.outcome, TurnOutcome::Done);
    assert_eq!(record.answer, "Hello w", "the row keeps what was shown");
    assert_eq!(
        run.asked.last(),
        Some(&Asked::Cancel),
        "the request is given up"
    );
}

#[actix::test]
async fn an_answer_within_its_bound_is_not_marked_truncated() {
    let run = run_turn("Q?", settings(), empty(), vec![embedded(), reply(&["Hi."])]).await;
    assert!(!run.done().truncated);
    let frame = serde_json::to_value(run.frames.last().unwrap()).unwrap();
    assert!(frame.get("truncated").is_none(), "{frame}");
}
