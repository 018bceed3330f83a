//! A raw HTTP/1.1 client over tokio TCP, and helpers to read what the mock sent.

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// Longest any single exchange may take before the test fails instead of hanging.
pub const EXCHANGE_LIMIT: Duration = Duration::from_secs(20);

/// A connection to the mock that sends requests as raw bytes.
pub struct RawClient {
    pub stream: TcpStream,
}

/// Everything read from the connection, as it came.
pub struct Received {
    pub raw: Vec<u8>,
    /// Size of each read that returned data.
    pub reads: Vec<usize>,
    /// Whether the server closed the connection.
    pub eof: bool,
}

impl RawClient {
    pub async fn connect(addr: SocketAddr) -> RawClient {
        RawClient {
            stream: TcpStream::connect(addr).await.unwrap(),
        }
    }

    pub async fn send(&mut self, method: &str, path: &str, headers: &[(&str, &str)], body: &[u8]) {
        let mut request = format!(
            "{method} {path} HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-length: {}\r\n",
            body.len()
        );
        for (name, value) in headers {
            request.push_str(&format!("{name}: {value}\r\n"));
        }
        request.push_str("\r\n");
        let mut bytes = request.into_bytes();
        bytes.extend_from_slice(body);
        self.stream.write_all(&bytes).await.unwrap();
    }

    /// Reads until the server closes the connection, or until nothing has arrived for
    /// `quiet` (then `eof` is false).
    pub async fn read_until_quiet(&mut self, quiet: Duration) -> Received {
        let started = Instant::now();
        let mut received = Received {
            raw: Vec::new(),
            reads: Vec::new(),
            eof: false,
        };
        let mut buffer = vec![0_u8; 64 * 1024];
        while started.elapsed() < EXCHANGE_LIMIT {
            match tokio::time::timeout(quiet, self.stream.read(&mut buffer)).await {
                Err(_) => return received,
                Ok(Ok(0) | Err(_)) => {
                    received.eof = true;
                    return received;
                }
                Ok(Ok(n)) => {
                    received.raw.extend_from_slice(&buffer[..n]);
                    received.reads.push(n);
                }
            }
        }
        panic!("the exchange took longer than {EXCHANGE_LIMIT:?}");
    }

    /// Reads until `done` holds for everything read so far, or the server closes the
    /// connection.
    pub async fn read_until(&mut self, done: impl Fn(&[u8]) -> bool) -> Received {
        let mut received = Received {
            raw: Vec::new(),
            reads: Vec::new(),
            eof: false,
        };
        let mut buffer = vec![0_u8; 64 * 1024];
        while !done(&received.raw) {
            match tokio::time::timeout(EXCHANGE_LIMIT, self.stream.read(&mut buffer)).await {
                Err(_) => panic!("nothing arrived for {EXCHANGE_LIMIT:?}"),
                Ok(Ok(0) | Err(_)) => {
                    received.eof = true;
                    break;
                }
                Ok(Ok(n)) => {
                    received.raw.extend_from_slice(&buffer[..n]);
                    received.reads.push(n);
                }
            }
        }
        received
    }

    /// Reads one complete response, leaving the connection open.
    pub async fn read_response(&mut self) -> Received {
        self.read_until(|raw| try_parse_response(raw).is_some_and(|response| response.complete))
            .await
    }

    /// Reads until the server closes the connection.
    pub async fn read_to_close(&mut self) -> Received {
        let received = self.read_until_quiet(EXCHANGE_LIMIT).await;
        assert!(received.eof, "the server did not close the connection");
        received
    }
}

/// Sends one request with `Connection: close` and reads everything until the close.
pub async fn exchange(addr: SocketAddr, method: &str, path: &str, body: &[u8]) -> Received {
    exchange_with(addr, method, path, &[], body).await
}

pub async fn exchange_with(
    addr: SocketAddr,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: &[u8],
) -> Received {
    let mut client = RawClient::connect(addr).await;
    let mut headers = headers.to_vec();
    headers.push(("connection", "close"));
    client.send(method, path, &headers, body).await;
    client.read_to_close().await
}

pub async fn post_json(addr: SocketAddr, path: &str, body: &Value) -> Received {
    exchange(addr, "POST", path, body.to_string().as_bytes()).await
}

/// A streaming chat request whose last user message is `question`.
pub fn chat_body(question: &str) -> Value {
    json!({
        "model": "smollm2",
        "stream": true,
        "messages": [
            {"role": "system", "content": "You answer questions about the user's documents."},
            {"role": "user", "content": question},
        ],
    })
}

/// The document tools bor offers, enough for the mock to see `tools`.
pub fn tools() -> Value {
    json!([{"type": "function", "function": {
        "name": "search_documents",
        "parameters": {"type": "object", "properties": {"query": {"type": "string"}}},
    }}])
}

/// A response parsed from raw bytes.
pub struct Response {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
    /// Whether the body ended as its framing says (length reached, or the last chunk).
    pub complete: bool,
}

impl Received {
    pub fn response(&self) -> Response {
        parse_response(&self.raw)
    }
}

impl Response {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(key, _)| key.eq_ignore_ascii_case(name))
            .map(|(_, value)| value.as_str())
    }

    pub fn json(&self) -> Value {
        serde_json::from_slice(&self.body).unwrap()
    }

    /// The `data:` payloads of the SSE body, in order.
    pub fn events(&self) -> Vec<String> {
        let text = String::from_utf8(self.body.clone()).unwrap();
        text.split("\n\n")
            .filter(|event| !event.is_empty())
            .map(|event| event.strip_prefix("data: ").unwrap().to_owned())
            .collect()
    }

    /// The events that are JSON chunks (all but `[DONE]`).
    pub fn chunks(&self) -> Vec<Value> {
        self.events()
            .iter()
            .filter(|event| *event != "[DONE]")
            .map(|event| serde_json::from_str(event).unwrap())
            .collect()
    }

    /// The concatenated `field` of every delta.
    pub fn delta_text(&self, field: &str) -> String {
        self.chunks()
            .iter()
            .filter_map(|chunk| {
                chunk["choices"][0]["delta"][field]
                    .as_str()
                    .map(str::to_owned)
            })
            .collect()
    }

    pub fn finish_reasons(&self) -> Vec<String> {
        self.chunks()
            .iter()
            .filter_map(|chunk| {
                chunk["choices"][0]["finish_reason"]
                    .as_str()
                    .map(str::to_owned)
            })
            .collect()
    }

    pub fn ends_with_done(&self) -> bool {
        self.events().last().is_some_and(|event| event == "[DONE]")
    }
}

fn parse_response(raw: &[u8]) -> Response {
    try_parse_response(raw).expect("no complete response head")
}

fn try_parse_response(raw: &[u8]) -> Option<Response> {
    let head_end = raw.windows(4).position(|window| window == b"\r\n\r\n")?;
    let head = std::str::from_utf8(&raw[..head_end]).unwrap();
    let mut lines = head.split("\r\n");
    let status_line = lines.next().unwrap();
    let status = status_line.split(' ').nth(1).unwrap().parse().unwrap();
    let headers: Vec<(String, String)> = lines
        .map(|line| {
            let (name, value) = line.split_once(':').unwrap();
            (name.trim().to_owned(), value.trim().to_owned())
        })
        .collect();
    let rest = &raw[head_end + 4..];
    let mut response = Response {
        status,
        headers,
        body: Vec::new(),
        complete: false,
    };
    if response.header("transfer-encoding") == Some("chunked") {
        let (body, complete) = dechunk(rest);
        response.body = body;
        response.complete = complete;
    } else {
        let length: usize = response.header("content-length").unwrap().parse().unwrap();
        response.complete = rest.len() >= length;
        response.body = rest[..length.min(rest.len())].to_vec();
    }
    Some(response)
}

/// The data of a chunked body, and whether its last chunk arrived.
fn dechunk(mut rest: &[u8]) -> (Vec<u8>, bool) {
    let mut body = Vec::new();
    loop {
        let Some(line_end) = rest.windows(2).position(|window| window == b"\r\n") else {
            return (body, false);
        };
        let size_text = std::str::from_utf8(&rest[..line_end]).unwrap();
        let size = usize::from_str_radix(size_text, 16).unwrap();
        let data_start = line_end + 2;
        if size == 0 {
            return (body, &rest[data_start..] == b"\r\n");
        }
        if rest.len() < data_start + size + 2 {
            body.extend_from_slice(&rest[data_start..]);
            return (body, false);
        }
        body.extend_from_slice(&rest[data_start..data_start + size]);
        assert_eq!(&rest[data_start + size..data_start + size + 2], b"\r\n");
        rest = &rest[data_start + size + 2..];
    }
}

/// Polls `condition` until it holds or five seconds pass.
pub async fn eventually(condition: impl Fn() -> bool) -> bool {
    let started = Instant::now();
    while started.elapsed() < Duration::from_secs(5) {
        if condition() {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    condition()
}
