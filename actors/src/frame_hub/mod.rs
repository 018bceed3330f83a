//! The FrameHub: one per process. It keeps the frames of each `/api/chat` turn while
//! the turn runs and for the replay window after it ends, so that the turn's readers
//! (the response that started it, a reload, another tab) are views of it and none of
//! them is the turn: a reader that leaves stops nothing, one that comes back reads the
//! frames after the last it had, then the live ones. Readers pull (`ReadAfter`) when
//! the number of the turn's last frame changes, so a reader that never reads holds no
//! frames and never slows the turn. Memory is bounded per turn (text runs joined,
//! `kept.rs`; a turn's text is bounded by `BOR_MAX_ANSWER_CHARS`) and in all (past
//! `max_bytes`, ended turns are let go oldest first).

mod kept;
mod messages;

use std::collections::{HashMap, VecDeque};
use std::time::Duration;

use actix::prelude::*;
use tokio::sync::watch;
use uuid::Uuid;

pub use kept::NumberedFrame;
pub use messages::{
    Follow, FramesAfter, GetHubStats, HubStats, OpenTurn, Publish, READ_LIMIT, ReadAfter,
    StopOwnTurn, TurnClosed,
};

use crate::turn::StopTurn;
use kept::KeptFrames;

/// Bytes of frames the hub keeps in all unless told otherwise: past it, ended turns
/// are let go, oldest first.
pub const DEFAULT_MAX_KEPT_BYTES: usize = 256 * 1024 * 1024;

/// How often a turn past its replay window is looked at again while a reader is still
/// attached, and how many times at most (five seconds): a reader reads to the end
/// even with no window at all, and one that never reads holds the frames no longer.
const READER_GRACE: Duration = Duration::from_millis(100);
const READER_GRACE_CHECKS: u32 = 50;
/// The longest a reader keeps an ended turn past its window.
pub const MAX_READER_GRACE: Duration = READER_GRACE.saturating_mul(READER_GRACE_CHECKS);

/// Bytes a kept turn is counted for besides its frames: its entry, its owner, its
/// watch of the last number.
const TURN_OVERHEAD: usize = 256;

/// One turn's frames and who may read them.
struct KeptTurn {
    owner: Uuid,
    frames: KeptFrames,
    /// The turn's actor while it runs.
    stop: Option<Recipient<StopTurn>>,
    /// The number of the last frame, for readers waiting for the next.
    last_id: watch::Sender<u64>,
    ended: bool,
}

pub struct FrameHub {
    turns: HashMap<Uuid, KeptTurn>,
    /// How long an ended turn's frames are kept (`BOR_TURN_REPLAY_SECONDS`).
    replay_for: Duration,
    /// The bound of every turn's frames together.
    max_bytes: usize,
    /// What the kept frames take, summed over the turns.
    bytes: usize,
    /// Ended turns, the earliest ended first: the first let go when memory runs short.
    ended: VecDeque<Uuid>,
}

impl FrameHub {
    pub fn new(replay_for: Duration, max_bytes: usize) -> Self {
        Self {
            turns: HashMap::new(),
            replay_for,
            max_bytes,
            bytes: 0,
            ended: VecDeque::new(),
        }
    }

    /// The turn sends no more frames: its readers finish, and its frames are let go
    /// after the replay window.
    fn end_turn(&mut self, turn_id: Uuid, ctx: &mut Context<Self>) {
        let Some(turn) = self.turns.get_mut(&turn_id) else {
            return;
        };
        if turn.ended {
            return;
        }
        turn.ended = true;
        turn.stop = None;
        // Readers waiting for a frame look again and see the end.
        turn.last_id.send_modify(|_| {});
        self.ended.push_back(turn_id);
        ctx.run_later(self.replay_for, move |hub, ctx| {
            hub.window_passed(turn_id, READER_GRACE_CHECKS, ctx);
        });
    }

    /// The turn's replay window has passed: its frames are let go, unless a reader is
    /// still attached (one still reading to the end, however short the window), in
    /// which case it is looked at again a moment later, `checks_left` more times.
    fn window_passed(&mut self, turn_id: Uuid, checks_left: u32, ctx: &mut Context<Self>) {
        let read_on = self
            .turns
            .get(&turn_id)
            .is_some_and(|turn| turn.last_id.receiver_count() > 0);
        if read_on && checks_left > 0 {
            ctx.run_later(READER_GRACE, move |hub, ctx| {
                hub.window_passed(turn_id, checks_left - 1, ctx);
            });
            return;
        }
        self.let_go(turn_id);
        // The entries of turns already let go leave the front of the list.
        while self
            .ended
            .front()
            .is_some_and(|front| !self.turns.contains_key(front))
        {
            self.ended.pop_front();
        }
    }

    fn let_go(&mut self, turn_id: Uuid) {
        if let Some(turn) = self.turns.remove(&turn_id) {
            self.bytes -= TURN_OVERHEAD + turn.frames.bytes();
        }
    }

    /// Past the bound, ended turns are let go, the earliest ended first.
    fn within_bound(&mut self) {
        while self.bytes > self.max_bytes {
            let Some(turn_id) = self.ended.pop_front() else {
                return;
            };
            self.let_go(turn_id);
        }
    }

    fn owned(&self, turn_id: Uuid, owner: Uuid) -> Option<&KeptTurn> {
        self.turns.get(&turn_id).filter(|turn| turn.owner == owner)
    }
}

impl Actor for FrameHub {
    type Context = Context<Self>;
}

impl Handler<OpenTurn> for FrameHub {
    type Result = ();

    fn handle(&mut self, open: OpenTurn, _: &mut Self::Context) {
        self.bytes += TURN_OVERHEAD;
        let replaced = self.turns.insert(
            open.turn_id,
            KeptTurn {
                owner: open.owner,
                frames: KeptFrames::default(),
                stop: Some(open.stop),
                last_id: watch::Sender::new(0),
                ended: false,
            },
        );
        // Turn ids are new UUIDs: one opened twice is counted once.
        if let Some(replaced) = replaced {
            self.bytes -= TURN_OVERHEAD + replaced.frames.bytes();
        }
    }
}

impl Handler<Publish> for FrameHub {
    type Result = ();

    fn handle(&mut self, publish: Publish, ctx: &mut Self::Context) {
        let Some(turn) = self.turns.get_mut(&publish.turn_id) else {
            return;
        };
        if turn.ended {
            return;
        }
        let before = turn.frames.bytes();
        let mut terminal = false;
        let mut last_id = None;
        for frame in publish.frames {
            terminal = frame.is_terminal();
            last_id = Some(turn.frames.push(frame));
            // Nothing follows a terminal frame.
            if terminal {
                break;
            }
        }
        self.bytes += turn.frames.bytes() - before;
        if let Some(id) = last_id {
            turn.last_id.send_replace(id);
        }
        if terminal {
            self.end_turn(publish.turn_id, ctx);
        }
        self.within_bound();
    }
}

impl Handler<TurnClosed> for FrameHub {
    type Result = ();

    fn handle(&mut self, closed: TurnClosed, ctx: &mut Self::Context) {
        self.end_turn(closed.turn_id, ctx);
        self.within_bound();
    }
}

impl Handler<Follow> for FrameHub {
    type Result = Option<watch::Receiver<u64>>;

    fn handle(&mut self, follow: Follow, _: &mut Self::Context) -> Self::Result {
        self.owned(follow.turn_id, follow.owner)
            .map(|turn| turn.last_id.subscribe())
    }
}

impl Handler<ReadAfter> for FrameHub {
    type Result = Option<FramesAfter>;

    fn handle(&mut self, read: ReadAfter, _: &mut Self::Context) -> Self::Result {
        self.turns.get(&read.turn_id).map(|turn| FramesAfter {
            frames: turn.frames.after(read.after, READ_LIMIT),
            ended: turn.ended,
        })
    }
}

impl Handler<StopOwnTurn> for FrameHub {
    type Result = bool;

    fn handle(&mut self, stop: StopOwnTurn, _: &mut Self::Context) -> bool {
        let Some(turn) = self.owned(stop.turn_id, stop.owner) else {
            return false;
        };
        if let Some(actor) = &turn.stop {
            actor.do_send(StopTurn);
        }
        true
    }
}

impl Handler<GetHubStats> for FrameHub {
    type Result = MessageResult<GetHubStats>;

    fn handle(&mut self, _: GetHubStats, _: &mut Self::Context) -> Self::Result {
        MessageResult(HubStats {
            turns: self.turns.len(),
            bytes: self.bytes,
        })
    }
}

#[cfg(test)]
mod tests;
