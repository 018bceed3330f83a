//! The relay towards a client that reads slowly or not at all (paused time).

use std::sync::atomic::Ordering;
use std::time::Duration;

use super::*;
use crate::record::TurnOutcome;
use crate::turn::STALLED_CLIENT_TIMEOUT;

/// A running turn whose frames go through a channel of `capacity`.
fn start(capacity: usize, script: Vec<Vec<LlmEvent>>) -> StartedTurn {
    start_turn(TurnSetup {
        script,
        capacity,
        ..TurnSetup::default()
    })
}

/// Content pieces of a reply that never ends.
fn endless(pieces: &[&str]) -> Vec<LlmEvent> {
    pieces
        .iter()
        .map(|p| LlmEvent::Content((*p).to_owned()))
        .collect()
}

#[actix::test]
async fn a_client_that_reads_nothing_is_stopped_after_the_stall_timeout() {
    tokio::time::pause();
    let turn = start(1, vec![embedded(), endless(&["1 ", "2 ", "3 "])]);
    // Frames wait for the client, which never reads; the turn holds on until the timeout.
    actix::clock::sleep(STALLED_CLIENT_TIMEOUT - Duration::from_secs(1)).await;
    assert!(turn.records.lock().unwrap().is_empty(), "not stopped early");

    actix::clock::sleep(Duration::from_secs(2)).await;
    let records = turn.records.lock().unwrap().clone();
    assert_eq!(records.len(), 1, "stopped once the timeout passed");
    assert_eq!(records[0].outcome, TurnOutcome::Stopped);
    assert_eq!(records[0].answer, "1 2 3 ");
    assert_eq!(turn.asked.lock().unwrap().last(), Some(&Asked::Cancel));
    drop(turn.frames);
}

#[actix::test]
async fn a_slow_reader_that_keeps_reading_is_not_stopped() {
    tokio::time::pause();
    let mut turn = start(1, vec![embedded(), endless(&["1 ", "2 ", "3 ", "4 "])]);
    let pause = STALLED_CLIENT_TIMEOUT.mul_f64(0.6);
    let mut texts = String::new();
    for _ in 0..4 {
        actix::clock::sleep(pause).await;
        match turn.frames.recv().await {
            Some(Frame::Delta { text }) => texts.push_str(&text),
            other => panic!("expected a delta, got {other:?}"),
        }
    }
    assert_eq!(texts, "1 2 3 4 ");
    assert!(
        turn.records.lock().unwrap().is_empty(),
        "each frame taken restarts the wait"
    );
    drop(turn.frames);
    let stopped = super::failures::wait_until(|| !turn.records.lock().unwrap().is_empty()).await;
    assert!(stopped, "leaving still stops the turn");
}

#[actix::test]
async fn pieces_are_acknowledged_once_their_frames_are_in_the_channel() {
    let pieces: Vec<String> = (0..40).map(|n| format!("w{n} ")).collect();
    let texts: Vec<&str> = pieces.iter().map(String::as_str).collect();
    let mut turn = start(1, vec![embedded(), endless(&texts)]);
    // One frame fits the channel; the others wait for the client in the backlog.
    let settled = super::failures::wait_until(|| turn.asked.lock().unwrap().len() == 2).await;
    assert!(settled, "the turn asked for its chat");
    actix::clock::sleep(Duration::from_millis(50)).await;
    assert_eq!(
        turn.relayed.load(Ordering::SeqCst),
        0,
        "nothing acknowledged while frames wait"
    );

    let mut received = 0;
    while received < 40 {
        match turn.frames.recv().await {
            Some(Frame::Delta { .. }) => received += 1,
            other => panic!("expected a delta, got {other:?}"),
        }
    }
    let acknowledged =
        super::failures::wait_until(|| turn.relayed.load(Ordering::SeqCst) == 40).await;
    assert!(
        acknowledged,
        "every piece acknowledged once the backlog drained"
    );
}

#[actix::test]
async fn a_client_that_keeps_up_gets_acknowledgements_in_batches() {
    let pieces: Vec<String> = (0..64).map(|n| format!("w{n} ")).collect();
    let texts: Vec<&str> = pieces.iter().map(String::as_str).collect();
    let turn = start(100, vec![embedded(), endless(&texts)]);
    let acknowledged =
        super::failures::wait_until(|| turn.relayed.load(Ordering::SeqCst) == 64).await;
    assert!(
        acknowledged,
        "two batches of 32: {}",
        turn.relayed.load(Ordering::SeqCst)
    );
    drop(turn.frames);
}

#[actix::test]
async fn a_turn_its_owner_stops_ends_with_a_done_frame_that_says_so() {
    let mut turn = start(16, vec![embedded(), endless(&["1 ", "2 "])]);
    let mut texts = String::new();
    while texts != "1 2 " {
        match turn.frames.recv().await {
            Some(Frame::Delta { text }) => texts.push_str(&text),
            Some(_) => {}
            None => panic!("the stream ended before the answer"),
        }
    }
    turn.turn.do_send(crate::turn::StopTurn);
    let Some(Frame::Done(done)) = turn.frames.recv().await else {
        panic!("expected the done frame");
    };
    assert!(done.stopped);
    assert!(
        turn.frames.recv().await.is_none(),
        "the stream ends after it"
    );
    let records = turn.records().await;
    assert_eq!(records.len(), 1);
    assert_eq!(records[0].outcome, TurnOutcome::Stopped);
    assert_eq!(records[0].answer, "1 2 ");
    assert_eq!(turn.asked.lock().unwrap().last(), Some(&Asked::Cancel));
}
