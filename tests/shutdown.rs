//! The real binary stopped with SIGTERM while turns stream: new turns are refused, turns
//! in flight finish within `BOR_SHUTDOWN_GRACE` or end `stopped`, rows are written, the
//! process exits 0; with `BOR_LOG_FORMAT=json` every log line is a JSON object. Killed
//! (SIGKILL) right after turns at full speed: it loses at most the rows still waiting.

#![expect(
    clippy::expect_used,
    reason = "a test stops at the first unexpected value"
)]

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use bor::testing::{TestDatabase, query_log_rows};
use bor_actors::record::TurnStatus;
use bor_mock_llm::MockLlm;
use bor_test_support::load::turns_at_full_speed;
use eventsource_stream::Eventsource;
use futures_util::StreamExt;
use serde_json::{Value, json};
use tokio::sync::oneshot;

/// The longest any step here waits.
const PATIENCE: Duration = Duration::from_secs(30);

/// `bor serve` as a child process, with its stderr collected line by line.
struct Server {
    child: Child,
    address: String,
    lines: Arc<Mutex<Vec<String>>>,
    /// Set: the reader closes bor's stderr at the next line (a terminal gone away).
    close_log: Arc<AtomicBool>,
    log_closed: Arc<AtomicBool>,
}

impl Server {
    fn start(db: &TestDatabase, mock: &MockLlm, vars: &[(&str, &str)]) -> Server {
        let mut command = Command::new(env!("CARGO_BIN_EXE_bor"));
        command
            .arg("serve")
            .current_dir(std::env::temp_dir())
            .env_clear()
            .env("BOR_BIND", "127.0.0.1:0")
            .env("BOR_DATABASE_URL", db.url())
            .env("BOR_LLM_BASE_URL", mock.base_url())
            .env("BOR_SSE_KEEPALIVE", "1")
            .env("BOR_AUTH", "off")
            .stdout(Stdio::null())
            .stderr(Stdio::piped());
        for (name, value) in vars {
            command.env(name, value);
        }
        let mut child = command.spawn().expect("bor starts");
        let stderr = child.stderr.take().expect("stderr is piped");
        let lines = Arc::new(Mutex::new(Vec::new()));
        let (port_sender, port) = std::sync::mpsc::channel();
        let collected = Arc::clone(&lines);
        let close_log = Arc::new(AtomicBool::new(false));
        let log_closed = Arc::new(AtomicBool::new(false));
        let (close, closed) = (Arc::clone(&close_log), Arc::clone(&log_closed));
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                if close.load(Ordering::SeqCst) {
                    break;
                }
                if line.contains("bor is listening") {
                    let _ = port_sender.send(listening_port(&line));
                }
                collected.lock().expect("the log lock").push(line);
            }
            // The reader (and with it the pipe) is dropped here.
            closed.store(true, Ordering::SeqCst);
        });
        let port = port
            .recv_timeout(PATIENCE)
            .expect("bor says where it listens")
            .expect("the listening line names its port");
        Server {
            child,
            address: format!("http://127.0.0.1:{port}"),
            lines,
            close_log,
            log_closed,
        }
    }

    fn terminate(&self) {
        let status = Command::new("kill")
            .args(["-TERM", &self.child.id().to_string()])
            .status()
            .expect("kill runs");
        assert!(status.success());
    }

    async fn exit_status(&mut self) -> ExitStatus {
        let started = Instant::now();
        loop {
            if let Some(status) = self.child.try_wait().expect("the child can be waited for") {
                return status;
            }
            assert!(started.elapsed() < PATIENCE, "bor did not exit");
            actix_web::rt::time::sleep(Duration::from_millis(20)).await;
        }
    }

    /// Closes bor's stderr at its next line, as a terminal that went away would.
    fn close_log(&self) {
        self.close_log.store(true, Ordering::SeqCst);
    }

    fn log_is_closed(&self) -> bool {
        self.log_closed.load(Ordering::SeqCst)
    }

    fn log_lines(&self) -> Vec<String> {
        self.lines.lock().expect("the log lock").clone()
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The port of the `bor is listening` line, in text or JSON format.
fn listening_port(line: &str) -> Option<u16> {
    if let Ok(value) = serde_json::from_str::<Value>(line) {
        return value["port"]
            .as_u64()
            .and_then(|port| u16::try_from(port).ok());
    }
    let (_, rest) = line.split_once("port=")?;
    rest.split_whitespace().next()?.parse().ok()
}

fn client() -> awc::Client {
    awc::Client::builder().timeout(PATIENCE).finish()
}

/// A chat turn read in the background: `first_delta` resolves at its first `delta`,
/// `frames` with every frame once the stream ends.
struct StreamingTurn {
    first_delta: oneshot::Receiver<()>,
    frames: oneshot::Receiver<Vec<(String, Value)>>,
}

impl StreamingTurn {
    async fn start(address: &str, message: String) -> StreamingTurn {
        let response = client()
            .post(format!("{address}/api/chat"))
            .force_close()
            .send_json(&json!({ "message": message }))
            .await
            .expect("the chat request is sent");
        assert_eq!(response.status(), 200);
        let (delta_sender, first_delta) = oneshot::channel();
        let (frames_sender, frames) = oneshot::channel();
        actix_web::rt::spawn(async move {
            let mut events = response.eventsource();
            let mut delta_sender = Some(delta_sender);
            let mut seen = Vec::new();
            while let Some(Ok(event)) = events.next().await {
                if event.event == "delta"
                    && let Some(sender) = delta_sender.take()
                {
                    let _ = sender.send(());
                }
                let data = serde_json::from_str(&event.data).unwrap_or(Value::Null);
                seen.push((event.event, data));
            }
            let _ = frames_sender.send(seen);
        });
        StreamingTurn {
            first_delta,
            frames,
        }
    }

    async fn frames(self) -> Vec<(String, Value)> {
        tokio::time::timeout(PATIENCE, self.frames)
            .await
            .expect("the stream ended")
            .expect("the reader finished")
    }
}

async fn wait_for_first_delta(turn: &mut StreamingTurn) {
    tokio::time::timeout(PATIENCE, &mut turn.first_delta)
        .await
        .expect("a delta came")
        .expect("the reader is alive");
}

/// Posts chat turns until one is refused (the signal may take a moment to be handled).
async fn refusal_after_the_signal(address: &str) -> (u16, Value) {
    let started = Instant::now();
    loop {
        let mut response = client()
            .post(format!("{address}/api/chat"))
            .force_close()
            .send_json(&json!({"message": "Anyone there?"}))
            .await
            .expect("the chat request is sent");
        let status = response.status().as_u16();
        if status != 200 {
            let body = response.json::<Value>().await.unwrap_or(Value::Null);
            return (status, body);
        }
        let _ = response.body().limit(1 << 24).await;
        assert!(started.elapsed() < PATIENCE, "turns are still accepted");
        actix_web::rt::time::sleep(Duration::from_millis(20)).await;
    }
}

fn turn_id(frames: &[(String, Value)]) -> Option<String> {
    frames
        .last()
        .and_then(|(_, data)| data["turn_id"].as_str())
        .map(str::to_owned)
}

fn slow_question(words: usize, token_delay_ms: u64) -> (String, String) {
    let reply: Vec<String> = (1..=words).map(|n| format!("word{n}")).collect();
    let reply = reply.join(" ");
    let question = format!(
        "Tell me slowly\nMOCK {}",
        json!({"reply": reply, "token_delay_ms": token_delay_ms})
    );
    (question, reply)
}

#[actix_web::test]
async fn sigterm_lets_turns_in_flight_finish_and_refuses_new_ones() {
    let db = TestDatabase::migrated().await;
    let mock = MockLlm::start().expect("the mock starts");
    let mut server = Server::start(&db, &mock, &[]);
    let (question, reply) = slow_question(10, 150);
    let mut first = StreamingTurn::start(&server.address, question.clone()).await;
    let mut second = StreamingTurn::start(&server.address, question).await;
    wait_for_first_delta(&mut first).await;
    wait_for_first_delta(&mut second).await;

    server.terminate();
    let (status, body) = refusal_after_the_signal(&server.address).await;
    assert_eq!(status, 503, "{body}");
    assert_eq!(body["error"]["code"], "unavailable");

    let mut finished = Vec::new();
    for turn in [first, second] {
        let frames = turn.frames().await;
        let text: String = frames
            .iter()
            .filter(|(event, _)| event == "delta")
            .filter_map(|(_, data)| data["text"].as_str())
            .collect();
        assert_eq!(text, reply);
        assert_eq!(frames.last().map(|(event, _)| event.as_str()), Some("done"));
        finished.push(turn_id(&frames).expect("a turn id"));
    }
    let status = server.exit_status().await;
    assert_eq!(status.code(), Some(0), "{:#?}", server.log_lines());

    let rows = query_log_rows(&db.pool()).await;
    for id in finished {
        let row = rows
            .iter()
            .find(|row| row.turn_id.to_string() == id)
            .expect("the finished turn has its row");
        assert_eq!(row.status, TurnStatus::Done);
        assert_eq!(row.answer, reply);
    }
}

#[actix_web::test]
async fn sigterm_after_the_grace_stops_turns_and_every_log_line_is_json() {
    let db = TestDatabase::migrated().await;
    let mock = MockLlm::start().expect("the mock starts");
    let mut server = Server::start(
        &db,
        &mock,
        &[("BOR_SHUTDOWN_GRACE", "0.5"), ("BOR_LOG_FORMAT", "json")],
    );
    let (question, reply) = slow_question(60, 200);
    let mut turn = StreamingTurn::start(&server.address, question).await;
    wait_for_first_delta(&mut turn).await;

    server.terminate();
    let frames = turn.frames().await;
    let ((last, data), before) = frames.split_last().expect("frames");
    assert!(
        before.iter().all(|(event, _)| event == "delta"),
        "{frames:?}"
    );
    assert_eq!(
        last, "error",
        "one terminal frame, also when the grace ran out: {frames:?}"
    );
    assert_eq!(data["code"], "internal");
    let status = server.exit_status().await;
    assert_eq!(status.code(), Some(0), "{:#?}", server.log_lines());

    let rows = query_log_rows(&db.pool()).await;
    assert_eq!(rows.len(), 1);
    let row = &rows[0];
    assert_eq!(row.status, TurnStatus::Stopped);
    assert!(!row.answer.is_empty() && row.answer.len() < reply.len());
    assert!(reply.starts_with(&row.answer), "{}", row.answer);

    let lines = server.log_lines();
    assert!(!lines.is_empty());
    let events: Vec<Value> = lines
        .iter()
        .map(|line| {
            let value: Value = serde_json::from_str(line)
                .unwrap_or_else(|error| panic!("not JSON ({error}): {line}"));
            assert!(value.is_object(), "{line}");
            value
        })
        .collect();
    let turn_id = row.turn_id.to_string();
    let turn_line = events
        .iter()
        .find(|event| event["message"] == "chat turn")
        .expect("the turn's line");
    assert_eq!(turn_line["turn_id"], turn_id.as_str());
    assert_eq!(turn_line["outcome"], "stopped");
    let spans = turn_line["spans"].as_array().expect("the line's spans");
    let request_id = spans
        .iter()
        .find_map(|span| span["request_id"].as_str())
        .expect("the turn's line has its request id");
    assert!(spans.iter().any(|span| span["turn_id"] == turn_id.as_str()));
    // Every line logged inside the turn carries both ids.
    let in_turn: Vec<&Value> = events
        .iter()
        .filter(|event| {
            event["spans"]
                .as_array()
                .is_some_and(|spans| spans.iter().any(|span| span["turn_id"] == turn_id.as_str()))
        })
        .collect();
    assert!(in_turn.len() >= 2, "{in_turn:?}");
    for event in in_turn {
        let spans = event["spans"].as_array().expect("spans");
        assert!(
            spans.iter().any(|span| span["request_id"] == request_id),
            "{event}"
        );
    }
    let answered = events.iter().any(|event| {
        event["message"] == "request answered" && event["span"]["request_id"] == request_id
    });
    assert!(answered, "the chat request's own line has its id");
    assert!(
        !lines.iter().any(|line| line.contains("Tell me slowly")),
        "the question is not logged"
    );
}

#[actix_web::test]
async fn a_stderr_that_went_away_does_not_stop_the_stop_sequence() {
    // `make run 2>&1 | tee log` and Ctrl-C: tee dies first, and bor writes its log into
    // a closed pipe from then on.
    let db = TestDatabase::migrated().await;
    let mock = MockLlm::start().expect("the mock starts");
    let mut server = Server::start(&db, &mock, &[("BOR_SHUTDOWN_GRACE", "0.5")]);
    server.close_log();
    let (question, _) = slow_question(60, 200);
    let mut turn = StreamingTurn::start(&server.address, question).await;
    wait_for_first_delta(&mut turn).await;
    let started = Instant::now();
    while !server.log_is_closed() {
        assert!(started.elapsed() < PATIENCE, "the log pipe closed");
        actix_web::rt::time::sleep(Duration::from_millis(20)).await;
    }

    server.terminate();
    let frames = turn.frames().await;
    let (last, data) = frames.last().expect("frames");
    assert_eq!(last, "error", "one terminal frame: {frames:?}");
    assert_eq!(data["code"], "internal");
    assert_eq!(server.exit_status().await.code(), Some(0));
    let rows = query_log_rows(&db.pool()).await;
    assert_eq!(rows.len(), 1);
    assert_eq!(rows[0].status, TurnStatus::Stopped);
}

#[actix_web::test]
async fn a_crash_right_after_turns_at_full_speed_loses_at_most_the_rows_waiting() {
    const MARK: usize = 100;
    const SLOTS: usize = 16;
    let db = TestDatabase::migrated().await;
    let mock = MockLlm::start().expect("the mock starts");
    let mut server = Server::start(
        &db,
        &mock,
        &[
            ("BOR_LOG_QUEUE_ROWS", &MARK.to_string()),
            ("BOR_MAX_CONCURRENT_TURNS", &SLOTS.to_string()),
        ],
    );
    let address = server.address.clone();
    let chat = || client().post(format!("{address}/api/chat"));
    let until = Instant::now() + Duration::from_secs(4);
    let burst = turns_at_full_speed(chat, "Anyone home?", SLOTS, until).await;
    server.child.kill().expect("bor is killed");
    server.child.wait().expect("bor is gone");

    let rows = query_log_rows(&db.pool()).await;
    let kept: std::collections::HashSet<String> =
        rows.iter().map(|row| row.turn_id.to_string()).collect();
    assert!(
        kept.is_subset(&burst.done),
        "rows only of turns answered done"
    );
    let lost = burst.done.len() - kept.len();
    assert!(
        burst.done.len() > 2 * (MARK + SLOTS),
        "enough turns for the bound to mean something: {}",
        burst.done.len()
    );
    assert!(
        lost <= MARK + SLOTS,
        "lost {lost} of {} answered: at most the mark and the turns in flight",
        burst.done.len()
    );
}
