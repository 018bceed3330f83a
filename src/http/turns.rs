//! A `/api/chat` turn outlives its response (docs/PROTOCOL.md, "Following a turn"):
//! its frames go to the process's FrameHub, every response is a reader of them from a
//! frame number on, and its owner may stop it. `GET /api/turns/{turn_id}/events` reads
//! a turn again, from the hub while it keeps the turn's frames, from the instance that
//! runs it when that is another (the request forwarded, its answer relayed), then from
//! the turn's stored row; `POST /api/turns/{turn_id}/stop` stops it, here or there.

use std::collections::VecDeque;
use std::time::Duration;

use actix::Addr;
use actix_web::http::StatusCode;
use actix_web::{HttpRequest, HttpResponse, Responder, get, post, web};
use actix_web_lab::sse;
use bor_actors::frame_hub::{
    Follow, FrameHub, NumberedFrame, OpenTurn, Publish, ReadAfter, StopOwnTurn, TurnClosed,
};
use bor_actors::record::Source;
use bor_actors::turn::{DoneFrame, Frame};
use futures_util::StreamExt;
use futures_util::stream::LocalBoxStream;
use serde::Deserialize;
use tokio::sync::{mpsc, watch};
use utoipa::IntoParams;
use uuid::Uuid;

use super::error::{ApiError, ErrorBody};
use super::turn::{StartedTurn, StoppableTurn, event_stream};
use crate::auth::Caller;
use crate::auth::access::Refusal;
use crate::db::query_log::{self, QueryLogEntry};
use crate::db::turn_owners;
use crate::state::AppState;

/// The response header that names the turn.
pub const TURN_ID_HEADER: &str = "X-Turn-Id";

/// The request header an `EventSource` sends when it reconnects: the `id:` of the last
/// frame it read.
const LAST_EVENT_ID_HEADER: &str = "Last-Event-ID";

/// Marks a request one instance forwarded to another: it is answered there alone, never
/// forwarded again.
const FORWARDED_HEADER: &str = "X-Bor-Forwarded";

/// What a forwarded request carries on: who asks, from where, and the reader's place.
const FORWARDED_REQUEST_HEADERS: [&str; 5] =
    ["authorization", "cookie", "origin", "host", "last-event-id"];

/// What a forwarded answer carries back besides its status and body.
const FORWARDED_RESPONSE_HEADERS: [&str; 4] = [
    "content-type",
    "cache-control",
    "x-accel-buffering",
    "x-turn-id",
];

/// How long the instance running a turn may take to answer a forwarded request's
/// headers (its body then streams for as long as the turn runs).
const FORWARD_TIMEOUT: Duration = Duration::from_secs(5);

/// Hands a started turn's frames to the hub, for `owner` to read and stop, and returns
/// a reader of them from the first. The turn no longer depends on any reader: one that
/// leaves stops nothing.
///
/// The response that started the turn reads its frames straight from the turn, numbered
/// as the hub numbers them, without a message to the hub per frame read; should it fall
/// [`DIRECT_FRAMES`] behind, it reads the rest from the hub like any other reader.
pub fn keep_turn(
    hub: &Addr<FrameHub>,
    turn: StoppableTurn,
    owner: Uuid,
) -> LocalBoxStream<'static, NumberedFrame> {
    keep_turn_within(hub, turn, owner, DIRECT_FRAMES)
}

/// Frames the response that started a turn may have unread before it reads from the hub.
const DIRECT_FRAMES: usize = 256;

fn keep_turn_within(
    hub: &Addr<FrameHub>,
    turn: StoppableTurn,
    owner: Uuid,
    direct_frames: usize,
) -> LocalBoxStream<'static, NumberedFrame> {
    let StoppableTurn {
        turn: StartedTurn { turn_id, frames },
        stop: turn_actor,
    } = turn;
    hub.do_send(OpenTurn {
        turn_id,
        owner,
        stop: turn_actor,
    });
    let (direct, direct_reader) = mpsc::channel(direct_frames);
    actix_web::rt::spawn(publish_frames(hub.clone(), turn_id, frames, direct));
    let first = FirstReader {
        hub: hub.clone(),
        turn_id,
        owner,
        after: 0,
        reading: FirstReading::Direct(direct_reader),
    };
    futures_util::stream::unfold(first, FirstReader::next).boxed_local()
}

/// Whether `owner`'s turn runs in this instance: its hub keeps it, and its terminal
/// frame has not come yet (a reader that has read it finds the turn ended, even before
/// the turn has closed its channel).
pub async fn is_running(
    hub: &Addr<FrameHub>,
    turn_id: Uuid,
    owner: Uuid,
) -> Result<bool, ApiError> {
    let failed = |error| ApiError::internal("looking for a running turn", error);
    let Some(last_id) = hub.send(Follow { turn_id, owner }).await.map_err(failed)? else {
        return Ok(false);
    };
    // The last frame kept, to see whether it is the terminal one.
    let after = last_id.borrow().saturating_sub(1);
    let found = hub
        .send(ReadAfter { turn_id, after })
        .await
        .map_err(failed)?;
    Ok(found.is_some_and(|found| {
        let terminal = found
            .frames
            .last()
            .is_some_and(|numbered| numbered.frame.is_terminal());
        !found.ended && !terminal
    }))
}

/// Frames handed to the hub in one message at most.
const PUBLISH_BATCH: usize = 64;

/// Moves the turn's frames to the hub as the turn sends them, those waiting together
/// in one message, and a numbered copy of each to the response that started the turn
/// while it keeps up; reading at once, so the turn is never held back by a reader.
async fn publish_frames(
    hub: Addr<FrameHub>,
    turn_id: Uuid,
    mut frames: mpsc::Receiver<Frame>,
    direct: mpsc::Sender<NumberedFrame>,
) {
    let mut direct = Some(direct);
    // Numbered as the hub numbers what it keeps: 1, 2, … up to the terminal frame.
    let mut last_id = 0;
    loop {
        let mut batch = Vec::with_capacity(PUBLISH_BATCH);
        if frames.recv_many(&mut batch, PUBLISH_BATCH).await == 0 {
            break;
        }
        if let Some(sender) = &direct {
            for frame in &batch {
                last_id += 1;
                let numbered = NumberedFrame {
                    id: last_id,
                    frame: frame.clone(),
                };
                // A reader that left, fell behind or has the terminal frame takes no more.
                if sender.try_send(numbered).is_err() || frame.is_terminal() {
                    direct = None;
                    break;
                }
            }
        }
        hub.do_send(Publish {
            turn_id,
            frames: batch,
        });
    }
    hub.do_send(TurnClosed { turn_id });
}

/// The response that started a turn: its frames straight from the turn, then, should
/// that stream end before the terminal frame (the reader fell behind, or the turn
/// ended without one), from the hub after the last frame read.
struct FirstReader {
    hub: Addr<FrameHub>,
    turn_id: Uuid,
    owner: Uuid,
    /// The number of the last frame read.
    after: u64,
    reading: FirstReading,
}

enum FirstReading {
    Direct(mpsc::Receiver<NumberedFrame>),
    FromHub(LocalBoxStream<'static, NumberedFrame>),
    Finished,
}

impl FirstReader {
    async fn next(mut self) -> Option<(NumberedFrame, Self)> {
        loop {
            match &mut self.reading {
                FirstReading::Direct(direct) => {
                    let Some(numbered) = direct.recv().await else {
                        let from_hub = follow(&self.hub, self.turn_id, self.owner, self.after)
                            .await
                            .ok()
                            .flatten()?;
                        self.reading = FirstReading::FromHub(from_hub);
                        continue;
                    };
                    self.after = numbered.id;
                    if numbered.frame.is_terminal() {
                        self.reading = FirstReading::Finished;
                    }
                    return Some((numbered, self));
                }
                FirstReading::FromHub(from_hub) => {
                    let numbered = from_hub.next().await?;
                    return Some((numbered, self));
                }
                FirstReading::Finished => return None,
            }
        }
    }
}

/// A reader of `owner`'s turn from the frame after `after`; `None` when the hub keeps
/// no such turn of theirs.
async fn follow(
    hub: &Addr<FrameHub>,
    turn_id: Uuid,
    owner: Uuid,
    after: u64,
) -> Result<Option<LocalBoxStream<'static, NumberedFrame>>, ApiError> {
    let last_id = hub
        .send(Follow { turn_id, owner })
        .await
        .map_err(|e| ApiError::internal("following a turn", e))?;
    Ok(last_id.map(|last_id| {
        let reader = Reader {
            hub: hub.clone(),
            turn_id,
            after,
            last_id,
            pending: VecDeque::new(),
            finished: false,
        };
        futures_util::stream::unfold(reader, Reader::next).boxed_local()
    }))
}

/// One reader of a turn: it asks the hub for the frames after the last it has when the
/// turn's last frame number changes, so it holds nothing the hub does not keep.
struct Reader {
    hub: Addr<FrameHub>,
    turn_id: Uuid,
    /// The number of the last frame read.
    after: u64,
    last_id: watch::Receiver<u64>,
    /// Frames read from the hub, not yet written.
    pending: VecDeque<NumberedFrame>,
    /// The terminal frame was read: once `pending` is out, the stream ends.
    finished: bool,
}

impl Reader {
    async fn next(mut self) -> Option<(NumberedFrame, Self)> {
        loop {
            if let Some(frame) = self.pending.pop_front() {
                return Some((frame, self));
            }
            if self.finished {
                return None;
            }
            // Marked seen before the read: a frame that comes after it wakes the wait.
            self.last_id.borrow_and_update();
            let read = self
                .hub
                .send(ReadAfter {
                    turn_id: self.turn_id,
                    after: self.after,
                })
                .await
                .ok()
                .flatten()?;
            let Some(last) = read.frames.last() else {
                if read.ended {
                    return None;
                }
                self.last_id.changed().await.ok()?;
                continue;
            };
            self.after = last.id;
            self.finished = read
                .frames
                .iter()
                .any(|numbered| numbered.frame.is_terminal());
            self.pending.extend(read.frames);
        }
    }
}

/// A frame as `/api/chat` sends it: `id:` its number in the turn, `event: NAME` and its
/// JSON on one `data:` line (docs/PROTOCOL.md, "Event stream").
pub fn numbered_event(numbered: &NumberedFrame) -> sse::Event {
    sse::Data::new(numbered.frame.data_json())
        .event(numbered.frame.event_name())
        .id(numbered.id.to_string())
        .into()
}

/// The query of `GET /api/turns/{turn_id}/events`.
#[derive(Debug, Deserialize, IntoParams)]
pub struct EventsQuery {
    /// The number of the last frame the reader has: the frames after it come. The
    /// `Last-Event-ID` header, when sent, wins.
    after: Option<u64>,
}

/// A turn's frames after the one named by `Last-Event-ID` or `?after=N` (none: from
/// the first), then the live ones until its terminal frame.
///
/// Each frame carries `id:`, its number in the turn. While the service keeps the turn's
/// frames (while it runs, and `BOR_TURN_REPLAY_SECONDS` after), they replay as sent;
/// after that, a turn with a stored row answers with its answer as one `delta`
/// (`id: 1`) and a `done` (`id: 2`), whatever number was asked after.
#[utoipa::path(
    tag = "chat",
    params(
        ("turn_id" = String, Path, description = "the turn's id (`X-Turn-Id`, a UUID)"),
        ("Last-Event-ID" = Option<u64>, Header, description = "the number of the last frame read"),
        EventsQuery,
    ),
    responses(
        (status = 200, description = "the turn's frames after the one named, each with its `id:`", content_type = "text/event-stream", body = Frame),
        (status = 204, description = "the turn has ended and the reader has every frame of it (an `EventSource` stops reconnecting)"),
        (status = 400, description = "`invalid_json`: `after` or `Last-Event-ID` is not a frame number", body = ErrorBody),
        (status = 404, description = "`not_found`: no such turn of the caller's (another person's turn reads as absent)", body = ErrorBody),
        (status = 503, description = "`unavailable`: the database is down (for a turn no longer kept in memory)", body = ErrorBody),
    )
)]
#[get("/api/turns/{turn_id}/events")]
pub async fn events(
    request: HttpRequest,
    turn_id: web::Path<String>,
    query: web::Query<EventsQuery>,
    caller: Caller,
    state: web::Data<AppState>,
) -> Result<HttpResponse, ApiError> {
    let asked = turn_id.into_inner();
    let turn_id = parse_turn_id(&asked)?;
    let after = match request.headers().get(LAST_EVENT_ID_HEADER) {
        Some(value) => value
            .to_str()
            .ok()
            .and_then(|text| text.trim().parse::<u64>().ok())
            .ok_or_else(|| {
                ApiError::InvalidJson("Last-Event-ID is not a frame number".to_owned())
            })?,
        None => query.after.unwrap_or(0),
    };
    let frames = match follow(&state.frame_hub, turn_id, caller.user_id, after).await? {
        // An `EventSource` reconnects whenever a stream ends, unless it is answered 204.
        Some(_) if read_to_its_end(&state.frame_hub, turn_id, after).await? => {
            return Ok(HttpResponse::NoContent().finish());
        }
        Some(reader) => reader,
        None => {
            if let Some(instance) = owning_instance(&state, &request, turn_id).await?
                && let Some(relayed) = forward_to(&request, &instance).await
            {
                return Ok(relayed);
            }
            let mut conn = state.pool.get().await?;
            let row = query_log::find(&mut conn, turn_id)
                .await?
                .filter(|row| row.user_id == caller.user_row())
                .ok_or_else(|| no_such_turn(&asked))?;
            futures_util::stream::iter(stored_frames(row)).boxed_local()
        }
    };
    let events = frames.map(|frame| numbered_event(&frame));
    Ok(event_stream(events, state.config.sse_keepalive)
        .insert_header((TURN_ID_HEADER, turn_id.to_string()))
        .respond_to(&request)
        .map_into_boxed_body())
}

/// Whether the turn has ended and holds no frame after number `after`.
async fn read_to_its_end(
    hub: &Addr<FrameHub>,
    turn_id: Uuid,
    after: u64,
) -> Result<bool, ApiError> {
    let read = hub
        .send(ReadAfter { turn_id, after })
        .await
        .map_err(|e| ApiError::internal("reading a turn", e))?;
    Ok(read.is_some_and(|read| read.ended && read.frames.is_empty()))
}

/// The owner stops a turn: it ends `stopped`, its readers get a `done` frame with
/// `"stopped": true` and end, and the partial answer is kept. A turn that has ended
/// stays as it ended.
#[utoipa::path(
    tag = "chat",
    params(("turn_id" = String, Path, description = "the turn's id (`X-Turn-Id`, a UUID)")),
    responses(
        (status = 204, description = "stopped, or already ended"),
        (status = 404, description = "`not_found`: no such turn of the caller's running or kept (another person's turn reads as absent)", body = ErrorBody),
    )
)]
#[post("/api/turns/{turn_id}/stop")]
pub async fn stop(
    request: HttpRequest,
    turn_id: web::Path<String>,
    caller: Caller,
    state: web::Data<AppState>,
) -> Result<HttpResponse, ApiError> {
    let asked = turn_id.into_inner();
    let turn_id = parse_turn_id(&asked)?;
    let found = state
        .frame_hub
        .send(StopOwnTurn {
            turn_id,
            owner: caller.user_id,
        })
        .await
        .map_err(|e| ApiError::internal("stopping a turn", e))?;
    if found {
        return Ok(HttpResponse::NoContent().finish());
    }
    if let Some(instance) = owning_instance(&state, &request, turn_id).await?
        && let Some(relayed) = forward_to(&request, &instance).await
    {
        return Ok(relayed);
    }
    Err(no_such_turn(&asked))
}

/// The instance recorded as running the turn, when it is another one and the request
/// was not forwarded already.
async fn owning_instance(
    state: &AppState,
    request: &HttpRequest,
    turn_id: Uuid,
) -> Result<Option<String>, ApiError> {
    if request.headers().contains_key(FORWARDED_HEADER) {
        return Ok(None);
    }
    let mut conn = state.pool.get().await?;
    let instance = turn_owners::instance_of(&mut conn, turn_id).await?;
    Ok(instance.filter(|url| Some(url.as_str()) != state.turn_owners.instance_url()))
}

/// `request` sent on to the instance at `instance_url` with the caller's credentials,
/// and its answer relayed as it comes (that instance's own checks decide it); `None`
/// when the instance cannot be reached or does not know the turn.
async fn forward_to(request: &HttpRequest, instance_url: &str) -> Option<HttpResponse> {
    let path = request
        .uri()
        .path_and_query()
        .map_or(request.path(), |path| path.as_str());
    let client = awc::Client::builder().timeout(FORWARD_TIMEOUT).finish();
    let mut forwarded = client
        .request(request.method().clone(), format!("{instance_url}{path}"))
        .insert_header((FORWARDED_HEADER, "1"));
    for name in FORWARDED_REQUEST_HEADERS {
        if let Some(value) = request.headers().get(name) {
            forwarded = forwarded.insert_header((name, value.clone()));
        }
    }
    let answer = match forwarded.send().await {
        Ok(answer) => answer,
        Err(error) => {
            tracing::warn!(instance = instance_url, error = %error, "the instance running the turn did not answer");
            return None;
        }
    };
    if answer.status() == StatusCode::NOT_FOUND {
        return None;
    }
    let mut relayed = HttpResponse::build(answer.status());
    for name in FORWARDED_RESPONSE_HEADERS {
        if let Some(value) = answer.headers().get(name) {
            relayed.insert_header((name, value.clone()));
        }
    }
    Some(relayed.streaming(answer))
}

/// The one answer for a turn that is absent, not the caller's, or not a UUID.
/// Absent, another person's or not a turn id at all: one refusal, worded as the
/// feedback routes word it.
fn no_such_turn(asked: &str) -> ApiError {
    Refusal::NoTurn(asked.to_owned()).into()
}

fn parse_turn_id(text: &str) -> Result<Uuid, ApiError> {
    Uuid::parse_str(text).map_err(|_| no_such_turn(text))
}

/// A turn told from its stored row: its answer as one `delta`, then `done`.
fn stored_frames(row: QueryLogEntry) -> Vec<NumberedFrame> {
    let sources: Vec<Source> = serde_json::from_value(row.sources).unwrap_or_default();
    let done = DoneFrame {
        turn_id: row.turn_id,
        conversation_id: row.conversation_id,
        path: row.path,
        rounds: u32::try_from(row.rounds).unwrap_or(0),
        retries: u32::try_from(row.retries).unwrap_or(0),
        scaffold_stripped: u64::try_from(row.scaffold_stripped).unwrap_or(0),
        recovered: row.recovered,
        query: row.searched_query.unwrap_or(row.question),
        sources,
        truncated: false,
        stopped: row.status == bor_actors::record::TurnStatus::Stopped,
    };
    vec![
        NumberedFrame {
            id: 1,
            frame: Frame::Delta { text: row.answer },
        },
        NumberedFrame {
            id: 2,
            frame: Frame::Done(done),
        },
    ]
}

#[cfg(test)]
mod tests {
    use actix::{Actor, Context, Handler};
    use bor_actors::record::ErrorCode;
    use bor_actors::turn::StopTurn;

    use super::*;

    /// A turn's actor as far as the hub knows it: told to stop, it does nothing.
    struct TurnStandIn;

    impl Actor for TurnStandIn {
        type Context = Context<Self>;
    }

    impl Handler<StopTurn> for TurnStandIn {
        type Result = ();

        fn handle(&mut self, _: StopTurn, _: &mut Self::Context) {}
    }

    /// Ten deltas, then a terminal frame.
    fn turn_frames(turn_id: Uuid) -> Vec<Frame> {
        let mut frames: Vec<Frame> = (1..=10)
            .map(|n| Frame::Delta {
                text: format!("piece {n} "),
            })
            .collect();
        frames.push(Frame::Error {
            turn_id,
            conversation_id: None,
            code: ErrorCode::LlmInterrupted,
            detail: "interrupted",
        });
        frames
    }

    /// A turn whose frames are all sent before anyone reads, kept with `direct_frames`.
    async fn kept_turn(
        hub: &Addr<FrameHub>,
        owner: Uuid,
        direct_frames: usize,
    ) -> (Uuid, Vec<Frame>, LocalBoxStream<'static, NumberedFrame>) {
        let turn_id = Uuid::new_v4();
        let sent = turn_frames(turn_id);
        let (sender, frames) = mpsc::channel(sent.len());
        for frame in &sent {
            sender
                .send(frame.clone())
                .await
                .expect("the turn's channel is open");
        }
        drop(sender);
        let turn = StoppableTurn {
            turn: StartedTurn { turn_id, frames },
            stop: TurnStandIn.start().recipient(),
        };
        let reader = keep_turn_within(hub, turn, owner, direct_frames);
        (turn_id, sent, reader)
    }

    fn numbered(sent: &[Frame]) -> Vec<NumberedFrame> {
        (1..)
            .zip(sent)
            .map(|(id, frame)| NumberedFrame {
                id,
                frame: frame.clone(),
            })
            .collect()
    }

    fn hub() -> Addr<FrameHub> {
        FrameHub::new(Duration::from_secs(60), 1 << 20).start()
    }

    #[actix_web::test]
    async fn the_first_reader_gets_every_frame_once_numbered_as_the_hub_numbers_them() {
        let hub = hub();
        let owner = Uuid::new_v4();
        let (turn_id, sent, reader) = kept_turn(&hub, owner, DIRECT_FRAMES).await;
        let read: Vec<NumberedFrame> = reader.collect().await;
        assert_eq!(read, numbered(&sent));
        // A reader coming back later reads the same frames under the same numbers.
        let again = follow(&hub, turn_id, owner, 0)
            .await
            .expect("the hub answers")
            .expect("the hub keeps the turn");
        assert_eq!(again.collect::<Vec<_>>().await, numbered(&sent));
    }

    #[actix_web::test]
    async fn a_first_reader_that_falls_behind_reads_the_rest_from_the_hub_exactly_once() {
        let hub = hub();
        let owner = Uuid::new_v4();
        // Room for two unread frames only: the turn's eleven overflow it at once.
        let (_, sent, reader) = kept_turn(&hub, owner, 2).await;
        let read: Vec<NumberedFrame> = reader.collect().await;
        assert_eq!(read, numbered(&sent));
    }

    #[actix_web::test]
    async fn a_first_reader_that_leaves_takes_nothing_from_the_turn() {
        let hub = hub();
        let owner = Uuid::new_v4();
        let (turn_id, sent, reader) = kept_turn(&hub, owner, DIRECT_FRAMES).await;
        drop(reader);
        let reader = follow(&hub, turn_id, owner, 4)
            .await
            .expect("the hub answers")
            .expect("the hub keeps the turn");
        assert_eq!(
            reader.collect::<Vec<_>>().await,
            numbered(&sent).split_off(4)
        );
    }
}
