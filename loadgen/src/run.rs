//! One request as the load generator sends it, and the two ways of sending many: a
//! closed loop (a fixed number of clients, each sending its next request when the last
//! one ended) and an open loop (requests start at a fixed rate, whatever is in flight).

use std::cell::{Cell, RefCell};
use std::net::SocketAddr;
use std::rc::Rc;
use std::time::{Duration, Instant};

use tokio::task::JoinSet;

use crate::http::{Connection, HttpError};
use crate::stream::{Ending, Protocol, StreamWatch};

/// Where a run's requests go, and what they are.
pub struct Target {
    pub addr: SocketAddr,
    /// The request each client sends: a closed loop's client `n` sends the `n`th (modulo
    /// their number), an open loop the first.
    pub requests: Vec<Vec<u8>>,
    pub protocol: Protocol,
    pub timeout: Duration,
}

/// The measured result of one request.
#[derive(Debug)]
pub struct Sample {
    /// From the start to the first token.
    pub ttft: Option<Duration>,
    /// From the start to the end of the body.
    pub total: Duration,
    pub tokens: u64,
    pub outcome: Outcome,
}

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Outcome {
    Complete,
    ErrorFrame(String),
    Status(u16),
    Transport(String),
    Unterminated,
    Timeout,
}

impl Outcome {
    pub fn label(&self) -> String {
        match self {
            Outcome::Complete => "complete".to_owned(),
            Outcome::ErrorFrame(code) => format!("error_frame:{code}"),
            Outcome::Status(status) => format!("http_{status}"),
            Outcome::Transport(what) => format!("transport:{what}"),
            Outcome::Unterminated => "unterminated".to_owned(),
            Outcome::Timeout => "timeout".to_owned(),
        }
    }
}

/// State shared by the tasks of a run (all on one thread).
pub struct Shared {
    pub target: Target,
    idle: RefCell<Vec<Connection>>,
    pub samples: RefCell<Vec<Sample>>,
    /// Requests past their first token and not yet ended.
    pub streaming: Cell<usize>,
    pub peak_streaming: Cell<usize>,
}

impl Shared {
    pub fn new(target: Target) -> Rc<Shared> {
        Rc::new(Shared {
            target,
            idle: RefCell::new(Vec::new()),
            samples: RefCell::new(Vec::new()),
            streaming: Cell::new(0),
            peak_streaming: Cell::new(0),
        })
    }

    fn stream_started(&self) {
        let now = self.streaming.get() + 1;
        self.streaming.set(now);
        self.peak_streaming.set(self.peak_streaming.get().max(now));
    }
}

/// Sends one request on an idle connection (or a new one) and records its sample.
async fn one_request(shared: &Shared, client: usize, started: Instant) {
    let target = &shared.target;
    let request = &target.requests[client % target.requests.len()];
    let outcome = tokio::time::timeout(target.timeout, exchange(shared, request, started)).await;
    let sample = match outcome {
        Ok(sample) => sample,
        Err(_) => Sample {
            ttft: None,
            total: started.elapsed(),
            tokens: 0,
            outcome: Outcome::Timeout,
        },
    };
    shared.samples.borrow_mut().push(sample);
}

async fn exchange(shared: &Shared, request: &[u8], started: Instant) -> Sample {
    let target = &shared.target;
    let failed = |what: HttpError| Sample {
        ttft: None,
        total: started.elapsed(),
        tokens: 0,
        outcome: Outcome::Transport(match what {
            HttpError::Io(err) => format!("{:?}", err.kind()),
            HttpError::Closed => "closed".to_owned(),
            HttpError::Malformed(what) => what.to_owned(),
        }),
    };
    // A kept-alive connection may have been closed by the server while idle: one more
    // try on a fresh connection.
    let reused = shared.idle.borrow_mut().pop();
    let attempt = match reused {
        Some(mut connection) => match start(&mut connection, request).await {
            Ok(head) => Ok((connection, head)),
            Err(_) => fresh(target.addr, request).await,
        },
        None => fresh(target.addr, request).await,
    };
    let (mut connection, head) = match attempt {
        Ok(opened) => opened,
        Err(err) => return failed(err),
    };
    let mut watch = StreamWatch::new(target.protocol);
    let mut counted = false;
    let body = connection
        .read_body(&head, |bytes| {
            watch.feed(bytes);
            if !counted && watch.first_token.is_some() {
                counted = true;
                shared.stream_started();
            }
        })
        .await;
    if counted {
        shared.streaming.set(shared.streaming.get() - 1);
    }
    let reusable = match body {
        Ok(reusable) => reusable,
        Err(err) => return failed(err),
    };
    if reusable {
        shared.idle.borrow_mut().push(connection);
    }
    let outcome = if head.status != 200 {
        Outcome::Status(head.status)
    } else {
        match watch.ending {
            Some(Ending::Complete) => Outcome::Complete,
            Some(Ending::ErrorFrame(code)) => Outcome::ErrorFrame(code),
            None => Outcome::Unterminated,
        }
    };
    Sample {
        ttft: watch
            .first_token
            .map(|at| at.saturating_duration_since(started)),
        total: started.elapsed(),
        tokens: watch.tokens,
        outcome,
    }
}

async fn start(
    connection: &mut Connection,
    request: &[u8],
) -> Result<crate::http::Head, HttpError> {
    connection.send(request).await?;
    connection.read_head().await
}

async fn fresh(
    addr: SocketAddr,
    request: &[u8],
) -> Result<(Connection, crate::http::Head), HttpError> {
    let mut connection = Connection::open(addr).await?;
    let head = start(&mut connection, request).await?;
    Ok((connection, head))
}

/// `clients` clients send requests back to back until `requests` were sent or
/// `duration` passed, whichever comes first. New clients join at most `ramp_per_second`
/// per second, so a thousand connections do not overflow the server's accept queue.
pub async fn closed_loop(
    shared: Rc<Shared>,
    clients: usize,
    requests: u64,
    duration: Duration,
    ramp_per_second: f64,
) {
    let started = Instant::now();
    let sent = Rc::new(Cell::new(0u64));
    let mut tasks = JoinSet::new();
    for client in 0..clients {
        let join_at = started + Duration::from_secs_f64(client as f64 / ramp_per_second);
        let shared = Rc::clone(&shared);
        let sent = Rc::clone(&sent);
        tasks.spawn_local(async move {
            tokio::time::sleep_until(join_at.into()).await;
            while sent.get() < requests && started.elapsed() < duration {
                sent.set(sent.get() + 1);
                one_request(&shared, client, Instant::now()).await;
            }
        });
    }
    while tasks.join_next().await.is_some() {}
}

/// Requests start `rate` times a second for `duration`, whatever is still in flight, so
/// a slow server cannot slow the arrivals down. Each is timed from the moment it is
/// sent: the timer wakes the generator up to a millisecond late, which is not the
/// server's doing.
pub async fn open_loop(shared: Rc<Shared>, rate: f64, duration: Duration) {
    let started = Instant::now();
    let count = (rate * duration.as_secs_f64()).round() as u64;
    let mut tasks = JoinSet::new();
    for index in 0..count {
        let scheduled = started + Duration::from_secs_f64(index as f64 / rate);
        tokio::time::sleep_until(scheduled.into()).await;
        let shared = Rc::clone(&shared);
        tasks.spawn_local(async move { one_request(&shared, 0, Instant::now()).await });
        while tasks.try_join_next().is_some() {}
    }
    while tasks.join_next().await.is_some() {}
}
