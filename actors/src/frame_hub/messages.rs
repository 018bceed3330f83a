//! Messages to the FrameHub.

use actix::prelude::*;
use tokio::sync::watch;
use uuid::Uuid;

use super::kept::NumberedFrame;
use crate::turn::{Frame, StopTurn};

/// A turn starts: keep its frames for `owner`, who may follow and stop it.
#[derive(Message)]
#[rtype(result = "()")]
pub struct OpenTurn {
    pub turn_id: Uuid,
    /// Who asked: only they read its frames or stop it.
    pub owner: Uuid,
    /// The turn's actor, asked to stop when its owner says so.
    pub stop: Recipient<StopTurn>,
}

/// The next frames of a turn, in order: as many as the turn sent since the last
/// `Publish`, so that a fast turn costs one message per batch, not per frame.
#[derive(Debug, Message)]
#[rtype(result = "()")]
pub struct Publish {
    pub turn_id: Uuid,
    pub frames: Vec<Frame>,
}

/// The turn sends no more frames (after its terminal frame, or without one when the
/// service stopped it).
#[derive(Debug, Message)]
#[rtype(result = "()")]
pub struct TurnClosed {
    pub turn_id: Uuid,
}

/// `owner` wants to read a turn: the number of its last frame, which changes with each
/// new frame; `None` when the hub keeps no such turn of theirs.
#[derive(Debug, Message)]
#[rtype(result = "Option<watch::Receiver<u64>>")]
pub struct Follow {
    pub turn_id: Uuid,
    pub owner: Uuid,
}

/// The frames of a turn after number `after`, at most [`READ_LIMIT`] of them; `None`
/// once the hub no longer keeps it.
#[derive(Debug, Message)]
#[rtype(result = "Option<FramesAfter>")]
pub struct ReadAfter {
    pub turn_id: Uuid,
    pub after: u64,
}

/// The most frames one [`ReadAfter`] gives: a reader of a long turn reads it in parts.
pub const READ_LIMIT: usize = 256;

/// What a [`ReadAfter`] finds.
#[derive(Debug, Clone, PartialEq)]
pub struct FramesAfter {
    pub frames: Vec<NumberedFrame>,
    /// The turn sends no more frames than those kept: a reader that finds none after
    /// its last is done.
    pub ended: bool,
}

/// `owner` asks to stop their turn; answers whether the hub keeps such a turn of
/// theirs (stopping one that has ended already changes nothing).
#[derive(Debug, Message)]
#[rtype(result = "bool")]
pub struct StopOwnTurn {
    pub turn_id: Uuid,
    pub owner: Uuid,
}

/// Asks for the hub's counters.
#[derive(Debug, Message)]
#[rtype(result = "HubStats")]
pub struct GetHubStats;

/// What the hub holds.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct HubStats {
    /// Turns whose frames are kept, running or ended.
    pub turns: usize,
    /// Roughly the bytes their frames take.
    pub bytes: usize,
}
