//! Starting a chat turn, for every edge that offers one (`POST /api/chat` and
//! `POST /v1/chat/completions`): the checks a turn must pass (the service is not
//! stopping, a turn slot is free), the TurnActor with its LlmActor, and the channel its
//! frames come through; and the event-stream response the streaming edges answer with.
//! The edges differ only in how they read the request and encode the frames.

use std::sync::Arc;
use std::time::Duration;

use actix::{Actor, Recipient};
use actix_web::http::header;
use actix_web::{CustomizeResponder, Responder};
use actix_web_lab::sse;
use bor_actors::llm::LlmActor;
use bor_actors::metrics::metrics;
use bor_actors::turn::{Frame, StopTurn, TurnActor, TurnDeps, TurnSpec};
use futures_util::{Stream, StreamExt};
use tokio::sync::mpsc;
use uuid::Uuid;

use super::error::ApiError;
use crate::knowledge::index::CollectionFilter;
use crate::state::AppState;

/// Frames buffered between a turn and its HTTP response.
const FRAME_CHANNEL_CAPACITY: usize = 64;

/// A running turn: its id, and its frames as the TurnActor sends them. Dropping the
/// receiver is the client going away: the turn stops and its upstream request is
/// dropped.
pub struct StartedTurn {
    pub turn_id: Uuid,
    pub frames: mpsc::Receiver<Frame>,
}

/// A running turn that its owner may also stop (`/api/chat`).
pub struct StoppableTurn {
    pub turn: StartedTurn,
    /// The turn's actor, told to stop when its owner asks.
    pub stop: Recipient<StopTurn>,
}

impl StartedTurn {
    /// The frames as a stream that ends when the turn has closed its side.
    pub fn into_frames(self) -> impl Stream<Item = Frame> + Unpin + 'static {
        futures_util::stream::unfold(self.frames, |mut receiver| async move {
            let frame = receiver.recv().await?;
            Some((frame, receiver))
        })
        .boxed_local()
    }
}

/// Refuses a turn while the service is stopping (a 503 `unavailable`).
pub fn refuse_when_stopping(state: &AppState) -> Result<(), ApiError> {
    if state.lifecycle.is_accepting() {
        Ok(())
    } else {
        Err(ApiError::ShuttingDown)
    }
}

/// Takes a turn slot and starts the turn, which sees the collections of `scope` only
/// (`None`: all; see [`Readable::scope`](crate::auth::Readable::scope)). Refused with
/// 503 `busy` when every slot is taken or when the rows waiting to be written have
/// reached their mark (`BOR_LOG_QUEUE_ROWS`: a turn that cannot be kept is not started),
/// 503 `unavailable` while the service stops, and 429 `quota_exceeded` when a limit on
/// the asker's turns or tokens is reached (docs/LIMITS.md, "Limits"); the slot is free again once the
/// turn's row is queued (it travels with the record to the LogActor), or when the turn
/// leaves none.
pub async fn start_turn(
    state: &AppState,
    spec: TurnSpec,
    scope: Option<CollectionFilter>,
) -> Result<StartedTurn, ApiError> {
    start_stoppable_turn(state, spec, scope)
        .await
        .map(|stoppable| stoppable.turn)
}

/// [`start_turn`], with the way to stop the turn other than by dropping its frames.
pub async fn start_stoppable_turn(
    state: &AppState,
    spec: TurnSpec,
    scope: Option<CollectionFilter>,
) -> Result<StoppableTurn, ApiError> {
    refuse_when_stopping(state)?;
    if state.log_backlog.is_full() {
        metrics().count_refused_turn("log_backlog");
        return Err(ApiError::Busy);
    }
    let slot = Arc::clone(&state.turn_slots)
        .try_acquire_owned()
        .map_err(|_| {
            metrics().count_refused_turn("slots");
            ApiError::Busy
        })?;
    // Checked again with the slot held: a stop that began meanwhile either waits for
    // this turn or is seen here.
    refuse_when_stopping(state)?;
    // Last: a turn admitted here is counted, and nothing refuses it after.
    state
        .usage
        .admit(spec.user_id, spec.key_id)
        .await
        .map_err(|reached| {
            metrics().count_refused_turn("quota");
            ApiError::QuotaExceeded(Box::new(reached))
        })?;

    let turn_id = Uuid::new_v4();
    let (sender, receiver) = mpsc::channel::<Frame>(FRAME_CHANNEL_CAPACITY);
    let llm_settings = Arc::clone(&state.llm);
    let actor = TurnActor::new(
        turn_id,
        spec,
        Arc::clone(&state.turn),
        TurnDeps {
            knowledge: Arc::new(state.library.scoped(scope)),
            log: state.log.clone().recipient(),
            connect_llm: Box::new(move |requester| {
                LlmActor::new(llm_settings, requester).start().recipient()
            }),
            slot: Some(slot),
            stop: Some(state.lifecycle.stop_signal()),
        },
        sender,
    )
    .start();
    Ok(StoppableTurn {
        turn: StartedTurn {
            turn_id,
            frames: receiver,
        },
        stop: actor.recipient(),
    })
}

/// A `text/event-stream` response of `events`, with comment keep-alives every
/// `keep_alive` and the headers that keep proxies from buffering or compressing it.
pub fn event_stream(
    events: impl Stream<Item = sse::Event> + 'static,
    keep_alive: Duration,
) -> CustomizeResponder<impl Responder> {
    sse::Sse::from_infallible_stream(events)
        .with_keep_alive(keep_alive)
        .customize()
        .insert_header(("X-Accel-Buffering", "no"))
        .insert_header((header::CACHE_CONTROL, "no-cache"))
}
