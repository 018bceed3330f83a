//! The TurnActor's side of the SSE stream: frames go out through a bounded channel;
//! while the client reads slowly they wait in a bounded backlog; a closed stream is
//! reported to the actor as `ClientGone`.

use std::collections::VecDeque;
use std::time::Duration;

use actix::prelude::*;
use tokio::sync::mpsc;

use super::TurnActor;
use super::frames::Frame;
use super::messages::ClientGone;

/// Frames that may wait for a slow client beyond the channel's own capacity.
pub const MAX_BACKLOG_FRAMES: usize = 1024;
/// How long the terminal frame may wait for a client that does not read.
pub const CLOSING_TIMEOUT: Duration = Duration::from_secs(30);

pub struct ClientRelay {
    sender: Option<mpsc::Sender<Frame>>,
    backlog: VecDeque<Frame>,
    draining: bool,
    /// The terminal frame is queued: stop once the backlog is out.
    closing: bool,
}

impl ClientRelay {
    pub fn new(sender: mpsc::Sender<Frame>) -> Self {
        Self {
            sender: Some(sender),
            backlog: VecDeque::new(),
            draining: false,
            closing: false,
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

    pub(super) fn send_frame(&mut self, frame: Frame, ctx: &mut Context<Self>) {
        let Some(sender) = self.relay.sender.as_ref() else {
            return;
        };
        if !self.relay.backlog.is_empty() {
            if self.relay.backlog.len() >= MAX_BACKLOG_FRAMES {
                tracing::warn!(turn_id = %self.spec.turn_id, "client does not keep up; stopping the turn");
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
            async move { sender.reserve_owned().await }
                .into_actor(self)
                .map(|permit, act, ctx| {
                    act.relay.draining = false;
                    let Ok(permit) = permit else {
                        ctx.notify(ClientGone);
                        return;
                    };
                    if let Some(frame) = act.relay.backlog.pop_front() {
                        permit.send(frame);
                    }
                    if !act.relay.backlog.is_empty() {
                        act.drain_backlog(ctx);
                    } else if act.relay.closing {
                        act.close_stream(ctx);
                    }
                }),
        );
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
