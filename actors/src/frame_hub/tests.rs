use std::time::Duration;

use actix::prelude::*;
use uuid::Uuid;

use super::*;
use crate::turn::Frame;

const WINDOW: Duration = Duration::from_secs(600);

/// Stands in for a TurnActor: counts the stops it is asked for.
#[derive(Default)]
struct FakeTurn {
    stops: usize,
}

impl Actor for FakeTurn {
    type Context = Context<Self>;
}

impl Handler<StopTurn> for FakeTurn {
    type Result = ();

    fn handle(&mut self, _: StopTurn, _: &mut Self::Context) {
        self.stops += 1;
    }
}

#[derive(Message)]
#[rtype(result = "usize")]
struct Stops;

impl Handler<Stops> for FakeTurn {
    type Result = usize;

    fn handle(&mut self, _: Stops, _: &mut Self::Context) -> usize {
        self.stops
    }
}

fn delta(text: &str) -> Frame {
    Frame::Delta { text: text.into() }
}

fn terminal(turn_id: Uuid) -> Frame {
    Frame::error(turn_id, None, crate::record::ErrorCode::Internal)
}

struct Opened {
    hub: Addr<FrameHub>,
    turn: Addr<FakeTurn>,
    turn_id: Uuid,
    owner: Uuid,
}

fn open(max_bytes: usize) -> Opened {
    let hub = FrameHub::new(WINDOW, max_bytes).start();
    opened_on(hub)
}

fn opened_on(hub: Addr<FrameHub>) -> Opened {
    let turn = FakeTurn::default().start();
    let (turn_id, owner) = (Uuid::new_v4(), Uuid::new_v4());
    hub.do_send(OpenTurn {
        turn_id,
        owner,
        stop: turn.clone().recipient(),
    });
    Opened {
        hub,
        turn,
        turn_id,
        owner,
    }
}

impl Opened {
    fn publish(&self, frame: Frame) {
        self.hub.do_send(Publish {
            turn_id: self.turn_id,
            frames: vec![frame],
        });
    }

    async fn read_after(&self, after: u64) -> Option<FramesAfter> {
        self.hub
            .send(ReadAfter {
                turn_id: self.turn_id,
                after,
            })
            .await
            .unwrap_or_else(|e| panic!("hub gone: {e}"))
    }

    async fn follow(&self, owner: Uuid) -> Option<tokio::sync::watch::Receiver<u64>> {
        self.hub
            .send(Follow {
                turn_id: self.turn_id,
                owner,
            })
            .await
            .unwrap_or_else(|e| panic!("hub gone: {e}"))
    }

    async fn stop(&self, owner: Uuid) -> bool {
        self.hub
            .send(StopOwnTurn {
                turn_id: self.turn_id,
                owner,
            })
            .await
            .unwrap_or_else(|e| panic!("hub gone: {e}"))
    }

    async fn stats(&self) -> HubStats {
        self.hub
            .send(GetHubStats)
            .await
            .unwrap_or_else(|e| panic!("hub gone: {e}"))
    }
}

fn numbered(id: u64, frame: Frame) -> NumberedFrame {
    NumberedFrame { id, frame }
}

#[actix::test]
async fn a_reader_gets_the_frames_after_its_last_then_the_live_ones_then_the_end() {
    let turn = open(DEFAULT_MAX_KEPT_BYTES);
    turn.publish(Frame::Retry { attempt: 1, max: 3 });
    turn.publish(delta("Hel"));
    let mut last_id = turn.follow(turn.owner).await.unwrap();
    assert_eq!(*last_id.borrow_and_update(), 2);
    assert_eq!(
        turn.read_after(1).await.unwrap(),
        FramesAfter {
            frames: vec![numbered(2, delta("Hel"))],
            ended: false
        }
    );

    turn.publish(delta("lo"));
    last_id.changed().await.unwrap();
    assert_eq!(*last_id.borrow_and_update(), 3);
    turn.publish(terminal(turn.turn_id));
    last_id.changed().await.unwrap();
    assert_eq!(
        turn.read_after(2).await.unwrap(),
        FramesAfter {
            frames: vec![
                numbered(3, delta("lo")),
                numbered(4, terminal(turn.turn_id))
            ],
            ended: true
        }
    );
    // The whole turn replays, once and in order.
    let whole = turn.read_after(0).await.unwrap();
    assert_eq!(
        whole.frames,
        vec![
            numbered(1, Frame::Retry { attempt: 1, max: 3 }),
            numbered(2, delta("Hel")),
            numbered(3, delta("lo")),
            numbered(4, terminal(turn.turn_id)),
        ]
    );
    // A frame after the end is not kept.
    turn.publish(delta("late"));
    assert_eq!(turn.read_after(4).await.unwrap().frames, vec![]);
}

#[actix::test]
async fn another_persons_turn_is_neither_followed_nor_stopped() {
    let turn = open(DEFAULT_MAX_KEPT_BYTES);
    let stranger = Uuid::new_v4();
    assert!(turn.follow(stranger).await.is_none());
    assert!(!turn.stop(stranger).await);
    assert_eq!(turn.turn.send(Stops).await.unwrap(), 0);
    let absent = Opened {
        turn_id: Uuid::new_v4(),
        ..opened_on(turn.hub.clone())
    };
    assert!(absent.follow(absent.owner).await.is_none());
    assert!(absent.read_after(0).await.is_none());
}

#[actix::test]
async fn the_owner_stops_a_running_turn_and_an_ended_one_stays_ended() {
    let turn = open(DEFAULT_MAX_KEPT_BYTES);
    assert!(turn.stop(turn.owner).await);
    assert_eq!(turn.turn.send(Stops).await.unwrap(), 1);
    turn.hub.do_send(TurnClosed {
        turn_id: turn.turn_id,
    });
    assert!(turn.stop(turn.owner).await);
    assert_eq!(turn.turn.send(Stops).await.unwrap(), 1);
    // Closed without a terminal frame: its readers are told it ended.
    assert!(turn.read_after(0).await.unwrap().ended);
}

#[actix::test]
async fn an_ended_turn_is_let_go_after_the_replay_window() {
    tokio::time::pause();
    let turn = open(DEFAULT_MAX_KEPT_BYTES);
    turn.publish(delta("answer"));
    turn.publish(terminal(turn.turn_id));
    let mut last_id = turn.follow(turn.owner).await.unwrap();
    tokio::time::sleep(WINDOW - Duration::from_secs(1)).await;
    assert_eq!(turn.read_after(0).await.unwrap().frames.len(), 2);
    // A reader attached keeps it a little past the window, to read to the end.
    tokio::time::sleep(Duration::from_secs(2)).await;
    assert_eq!(turn.read_after(0).await.unwrap().frames.len(), 2);
    tokio::time::sleep(MAX_READER_GRACE).await;
    assert!(turn.read_after(0).await.is_none());
    assert!(turn.follow(turn.owner).await.is_none());
    // A reader still waiting learns it is over.
    assert!(last_id.changed().await.is_err());
    assert_eq!(turn.stats().await, HubStats { turns: 0, bytes: 0 });
}

/// Turns ended at different times are each let go once their own window has passed,
/// the earlier while the later is still kept, by the hub's one timer.
#[actix::test]
async fn each_ended_turn_is_let_go_when_its_own_window_passes() {
    tokio::time::pause();
    let first = open(DEFAULT_MAX_KEPT_BYTES);
    let second = opened_on(first.hub.clone());
    first.publish(terminal(first.turn_id));
    tokio::time::sleep(WINDOW / 2).await;
    second.publish(terminal(second.turn_id));
    let third = opened_on(first.hub.clone());
    third.publish(delta("still running"));
    tokio::time::sleep(WINDOW / 2 + Duration::from_secs(1)).await;
    assert!(first.read_after(0).await.is_none());
    assert_eq!(second.read_after(0).await.unwrap().frames.len(), 1);
    tokio::time::sleep(WINDOW / 2).await;
    assert!(second.read_after(0).await.is_none());
    // A running turn is kept whatever the time.
    assert_eq!(third.read_after(0).await.unwrap().frames.len(), 1);
    // One that ends now gets a window of its own.
    third.publish(terminal(third.turn_id));
    tokio::time::sleep(WINDOW - Duration::from_secs(1)).await;
    assert_eq!(third.read_after(0).await.unwrap().frames.len(), 2);
    tokio::time::sleep(Duration::from_secs(2)).await;
    assert!(third.read_after(0).await.is_none());
    assert_eq!(first.stats().await, HubStats { turns: 0, bytes: 0 });
}

#[actix::test]
async fn past_the_bound_ended_turns_are_let_go_earliest_first_and_running_ones_kept() {
    let bound = 64 * 1024;
    let first = open(bound);
    let hub = first.hub.clone();
    let turns: Vec<Opened> = std::iter::once(first)
        .chain((1..1_000).map(|_| opened_on(hub.clone())))
        .collect();
    // A thousand turns whose readers all left, each with a 1,000-frame answer.
    for turn in &turns {
        for _ in 0..1_000 {
            turn.publish(delta("token "));
        }
    }
    let running = turns.last().unwrap();
    for turn in &turns[..turns.len() - 1] {
        turn.publish(terminal(turn.turn_id));
    }
    let stats = running.stats().await;
    let running_bytes = 1_000 * (6 + 4) + 64 + TURN_OVERHEAD;
    assert!(stats.bytes <= bound + running_bytes, "{stats:?}");
    assert!(stats.turns < 100, "{stats:?}");
    // The earliest ended went first; the running turn is whole.
    assert!(turns[0].read_after(0).await.is_none());
    assert!(turns[998].read_after(0).await.is_some());
    // Read in parts of at most READ_LIMIT frames.
    let first_part = running.read_after(0).await.unwrap();
    assert_eq!(first_part.frames.len(), READ_LIMIT);
    assert_eq!(first_part.frames[0], numbered(1, delta("token ")));
    let last_part = running.read_after(1_000 - 10).await.unwrap();
    assert_eq!(last_part.frames.len(), 10);
    assert_eq!(last_part.frames[9], numbered(1_000, delta("token ")));
    assert!(!last_part.ended);
}

#[actix::test]
async fn a_batch_is_numbered_frame_by_frame_and_nothing_follows_its_terminal_frame() {
    let turn = open(DEFAULT_MAX_KEPT_BYTES);
    let last_id = turn.follow(turn.owner).await.unwrap();
    turn.hub.do_send(Publish {
        turn_id: turn.turn_id,
        frames: vec![
            Frame::Retry { attempt: 1, max: 3 },
            delta("Hel"),
            terminal(turn.turn_id),
            delta("after the end"),
        ],
    });
    let read = turn.read_after(0).await.unwrap();
    assert_eq!(
        read.frames,
        vec![
            numbered(1, Frame::Retry { attempt: 1, max: 3 }),
            numbered(2, delta("Hel")),
            numbered(3, terminal(turn.turn_id)),
        ]
    );
    assert!(read.ended);
    assert_eq!(
        *last_id.borrow(),
        3,
        "readers are woken once, at the batch's last frame"
    );
}
