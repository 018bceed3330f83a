//! The TurnActor's side of the SSE stream: frames go out through a bounded channel;
//! while the client reads slowly they wait in a bounded backlog; a closed stream, a
//! backlog that overflows, or a client that takes no frame for `STALLED_CLIENT_TIMEOUT`
//! is reported to the actor as `ClientGone`.

use std::collections::VecDeque;
use std::time::Duration;

use actix::prelude::*;
use tokio::sync::mpsc;

use super::TurnActor;
use super::frames::Frame;
use super::messages::ClientGone;
use crate::llm::{LlmCommand, RELAY_WINDOW};

/// Frames that may wait for a slow client beyond the channel's own capacity.
pub const MAX_BACKLOG_FRAMES: usize = 1024;
/// How long the terminal frame may wait for a client that does not read.
pub const CLOSING_TIMEOUT: Duration = Duration::from_secs(30);
/// How long frames may wait for a client that takes none of them: after this the
/// client counts as gone, so a reader that stopped reading cannot hold a turn (and its
/// upstream request) open.
pub const STALLED_CLIENT_TIMEOUT: Duration = Duration::from_secs(30);
/// Stream pieces acknowledged to the LLM actor at once while the client keeps up.
const ACK_BATCH: usize = 32;
const _: () = assert!(
    ACK_BATCH < RELAY_WINDOW,
    "acknowledgements must come before the window closes"
);

pub struct ClientRelay {
    sender: Option<mpsc::Sender<Frame>>,
    backlog: VecDeque<Frame>,
    draining: bool,
    /// The terminal frame is queued: stop once the backlog is out.
    closing: bool,
    /// Pieces of the LLM stream relayed and not yet acknowledged to the LLM actor; they
    /// are acknowledged once their frames are in the channel, so a client that does not
    /// keep up slows the reading of the upstream stream.
    unacked_pieces: usize,
}

impl ClientRelay {
    pub fn new(sender: mpsc::Sender<Frame>) -> Self {
        Self {
            sender: Some(sender),
            backlog: VecDeque::new(),
            draining: false,
            closing: false,
            unacked_pieces: 0,
        }
    }
}

impl TurnActor {
    /// Notices a client that went away even while the turn has nothing to send.
    pub(super) fn watch_client(&mut self, ctx: &mut Context<Self>) {
        let Some(sender) = self.relay.sender.clone() else {
            return;
        };
        ctx.spawn(
            async move { sender.closed().await }
                .into_actor(self)
                .map(|(), _, ctx| ctx.notify(ClientGone)),
        );
    }

    /// A piece of the LLM stream has been turned into frames.
    pub(super) fn piece_relayed(&mut self) {
        self.relay.unacked_pieces += 1;
        if self.relay.backlog.is_empty() && self.relay.unacked_pieces >= ACK_BATCH {
            self.acknowledge_pieces();
        }
    }

    fn acknowledge_pieces(&mut self) {
        let pieces = std::mem::take(&mut self.relay.unacked_pieces);
        if pieces > 0 {
            self.llm_send(LlmCommand::Relayed(pieces));
        }
    }

    pub(super) fn send_frame(&mut self, frame: Frame, ctx: &mut Context<Self>) {
        let Some(sender) = self.relay.sender.as_ref() else {
            return;
        };
        if !self.relay.backlog.is_empty() {
            if self.relay.backlog.len() >= MAX_BACKLOG_FRAMES {
                tracing::warn!(turn_id = %self.turn_id, "client does not keep up; stopping the turn");
                self.relay.backlog.clear();
                ctx.notify(ClientGone);
                return;
            }
            self.relay.backlog.push_back(frame);
            return;
        }
        match sender.try_send(frame) {
            Ok(()) => {}
            Err(mpsc::error::TrySendError::Full(frame)) => {
                self.relay.backlog.push_back(frame);
                self.drain_backlog(ctx);
            }
            Err(mpsc::error::TrySendError::Closed(_)) => ctx.notify(ClientGone),
        }
    }

    fn drain_backlog(&mut self, ctx: &mut Context<Self>) {
        if self.relay.draining {
            return;
        }
        let Some(sender) = self.relay.sender.clone() else {
            return;
        };
        self.relay.draining = true;
        ctx.spawn(
            async move { tokio::time::timeout(STALLED_CLIENT_TIMEOUT, sender.reserve_owned()).await }
                .into_actor(self)
                .map(|permit, act, ctx| {
                    act.relay.draining = false;
                    let permit = match permit {
                        Ok(Ok(permit)) => permit,
                        Ok(Err(_closed)) => return act.client_unreachable(ctx),
                        Err(_elapsed) => {
                            tracing::warn!(
                                turn_id = %act.turn_id,
                                waiting_frames = act.relay.backlog.len(),
                                "client has read nothing for {STALLED_CLIENT_TIMEOUT:?}; stopping the turn"
                            );
                            return act.client_unreachable(ctx);
                        }
                    };
                    if let Some(frame) = act.relay.backlog.pop_front() {
                        permit.send(frame);
                    }
                    if !act.relay.backlog.is_empty() {
                        act.drain_backlog(ctx);
                    } else if act.relay.closing {
                        act.close_stream(ctx);
                    } else {
                        act.acknowledge_pieces();
                    }
                }),
        );
    }

    /// The waiting frames can no longer reach the client: a turn still running stops
    /// (`stopped`), a finished one closes its stream at once.
    fn client_unreachable(&mut self, ctx: &mut Context<Self>) {
        if self.relay.closing {
            self.close_stream(ctx);
        } else {
            ctx.notify(ClientGone);
        }
    }

    /// After the terminal frame: end the stream once every frame is out.
    pub(super) fn finish_stream(&mut self, ctx: &mut Context<Self>) {
        if self.relay.backlog.is_empty() {
            self.close_stream(ctx);
            return;
        }
        self.relay.closing = true;
        ctx.run_later(CLOSING_TIMEOUT, |act, ctx| act.close_stream(ctx));
    }

    /// Drops the sender (the client sees the stream end) and stops the actor.
    pub(super) fn close_stream(&mut self, ctx: &mut Context<Self>) {
        self.relay.sender = None;
        self.relay.backlog.clear();
        ctx.stop();
    }
}
