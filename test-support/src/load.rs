//! Turns at full speed: clients that each ask again as soon as their answer ends, and
//! what became of every turn they asked for.

use std::collections::HashSet;
use std::time::{Duration, Instant};

use futures_util::future::join_all;
use serde_json::json;

use crate::read_chat_response;

/// What a burst of turns got back.
#[derive(Debug, Default)]
pub struct Burst {
    /// The turn ids of the turns that ended `done` for their client.
    pub done: HashSet<String>,
    /// Turns refused before they started: 503 `busy` with `Retry-After`, no stream.
    pub refused: usize,
}

impl Burst {
    fn add(&mut self, other: Burst) {
        self.done.extend(other.done);
        self.refused += other.refused;
    }
}

/// `clients` clients ask `question` with requests from `request` (a `POST /api/chat`
/// with its credentials) until `until`, each again as soon as its answer ends. Every
/// answer must be a `done` stream or a `busy` refusal: anything else panics, naming it.
pub async fn turns_at_full_speed(
    request: impl Fn() -> awc::ClientRequest,
    question: &str,
    clients: usize,
    until: Instant,
) -> Burst {
    let body = json!({ "message": question });
    let request = &request;
    let body = &body;
    let client = async || {
        let mut burst = Burst::default();
        while Instant::now() < until {
            let response = read_chat_response(
                request()
                    .send_json(body)
                    .await
                    .expect("the chat request is sent"),
            )
            .await;
            match response.status {
                200 => {
                    let last = response.last();
                    assert_eq!(last.event, "done", "{:?}", response.frames);
                    burst.done.insert(response.turn_id());
                }
                503 => {
                    assert_eq!(
                        response.json.as_ref().map(|body| &body["error"]["code"]),
                        Some(&json!("busy")),
                        "{:?}",
                        response.json
                    );
                    assert!(response.headers.contains_key("retry-after"));
                    burst.refused += 1;
                    // As a client told to come back would, if sooner than it says.
                    actix_web::rt::time::sleep(Duration::from_millis(20)).await;
                }
                status => panic!("a turn answered {status}: {:?}", response.json),
            }
        }
        burst
    };
    let mut total = Burst::default();
    for burst in join_all((0..clients).map(|_| client())).await {
        total.add(burst);
    }
    total
}
