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
use tokio::time::Instant;
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
    /// Ended turns within their replay window, with when they ended, the earliest
    /// first: the first let go when memory runs short.
    ended: VecDeque<(Uuid, Instant)>,
    /// Turns past their window that a reader still reads, with how many more times
    /// each is looked at, [`READER_GRACE`] apart.
    lingering: VecDeque<(Uuid, u32)>,
    /// Whether the one timer that lets turns go is set. One timer for all turns: an
    /// actor's context polls every timer it holds on every message, so a timer per
    /// turn made each message cost as much as the turns of the whole window.
    sweep_set: bool,
}

impl FrameHub {
    pub fn new(replay_for: Duration, max_bytes: usize) -> Self {
        Self {
            turns: HashMap::new(),
            replay_for,
            max_bytes,
            bytes: 0,
            ended: VecDeque::new(),
            lingering: VecDeque::new(),
            sweep_set: false,
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
        self.ended.push_back((turn_id, Instant::now()));
        self.set_sweep(ctx);
    }

    /// Sets the timer for the next turn to let go, unless it is set: a moment from now
    /// while a turn lingers, else when the earliest ended turn's window passes.
    fn set_sweep(&mut self, ctx: &mut Context<Self>) {
        if self.sweep_set {
            return;
        }
        let next = if self.lingering.is_empty() {
            match self.ended.front() {
                Some((_, ended_at)) => {
                    (*ended_at + self.replay_for).saturating_duration_since(Instant::now())
                }
                None => return,
            }
        } else {
            READER_GRACE
        };
        self.sweep_set = true;
        ctx.run_later(next, |hub, ctx| {
            hub.sweep_set = false;
            hub.sweep(Instant::now());
            hub.set_sweep(ctx);
        });
    }

    /// Lets go the turns whose replay window has passed, unless a reader is still
    /// attached (one still reading to the end, however short the window): such a turn
    /// lingers, looked at again every [`READER_GRACE`], [`READER_GRACE_CHECKS`] times.
    fn sweep(&mut self, now: Instant) {
        for _ in 0..self.lingering.len() {
            let Some((turn_id, checks_left)) = self.lingering.pop_front() else {
                break;
            };
            if checks_left > 0 && self.is_read(turn_id) {
                self.lingering.push_back((turn_id, checks_left - 1));
            } else {
                self.let_go(turn_id);
            }
        }
        while let Some(&(turn_id, ended_at)) = self.ended.front() {
            if ended_at + self.replay_for > now {
                break;
            }
            self.ended.pop_front();
            if self.is_read(turn_id) {
                self.lingering.push_back((turn_id, READER_GRACE_CHECKS - 1));
            } else {
                self.let_go(turn_id);
            }
        }
    }

    /// Whether a reader is attached to the turn.
    fn is_read(&self, turn_id: Uuid) -> bool {
        self.turns
            .get(&turn_id)
            .is_some_and(|turn| turn.last_id.receiver_count() > 0)
    }

    fn let_go(&mut self, turn_id: Uuid) {
        if let Some(turn) = self.turns.remove(&turn_id) {
            self.bytes -= TURN_OVERHEAD + turn.frames.bytes();
        }
    }

    /// Past the bound, ended turns are let go, the earliest ended first (the lingering
    /// ones ended before any still in their window).
    fn within_bound(&mut self) {
        while self.bytes > self.max_bytes {
            let turn_id = match self.lingering.pop_front() {
                Some((turn_id, _)) => turn_id,
                None => match self.ended.pop_front() {
                    Some((turn_id, _)) => turn_id,
                    None => return,
                },
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
