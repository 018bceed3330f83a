//! Just enough HTTP/1.1 for a test server, with raw control over every write.
//!
//! Requests carry `Content-Length` bodies; responses have a `Content-Length` or a chunked
//! body; connections are kept alive unless the client asks otherwise. While a response is
//! being written the connection watches its read side, so a client that goes away is
//! noticed at once, even while the mock is pausing or stalling (a client that only shuts
//! down its sending side counts as gone too: HTTP clients do not do that mid-exchange).

use std::future::Future;
use std::time::Duration;

use bytes::BytesMut;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::net::tcp::{OwnedReadHalf, OwnedWriteHalf};

/// Longest request line plus headers accepted.
const MAX_HEAD_BYTES: usize = 64 * 1024;
/// Largest request body accepted.
const MAX_BODY_BYTES: usize = 64 * 1024 * 1024;
/// Pause between two single-byte writes, long enough for the reader to see each byte
/// in a read of its own most of the time.
const SPLIT_WRITE_PAUSE: Duration = Duration::from_millis(1);

/// The terminating chunk of a chunked body.
pub(crate) const LAST_CHUNK: &[u8] = b"0\r\n\r\n";

pub(crate) struct Request {
    pub method: String,
    /// The request target as sent: path and query.
    pub target: String,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
    /// Whether the client lets the connection serve another request.
    pub keep_alive: bool,
}

impl Request {
    /// The first value of header `name` (case-insensitive).
    pub(crate) fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(key, _)| key.eq_ignore_ascii_case(name))
            .map(|(_, value)| value.as_str())
    }

    /// The target without its query.
    pub(crate) fn path(&self) -> &str {
        self.target.split('?').next().unwrap_or_default()
    }
}

pub(crate) enum ReadError {
    /// The client closed the connection, between requests or in the middle of one.
    Closed,
    /// The request cannot be served: answer with this status and message, then close.
    Refused { status: u16, message: String },
}

/// The client closed the connection (or it broke) before the response was complete.
#[derive(Debug)]
pub(crate) struct ClientGone;

/// How a response body is delimited.
pub(crate) enum Framing {
    Length(usize),
    Chunked,
}

pub(crate) struct Connection {
    reader: OwnedReadHalf,
    writer: OwnedWriteHalf,
    /// Bytes read but not yet consumed by a request.
    received: BytesMut,
}

impl Connection {
    pub(crate) fn new(stream: TcpStream) -> Connection {
        let (reader, writer) = stream.into_split();
        Connection {
            reader,
            writer,
            received: BytesMut::new(),
        }
    }

    pub(crate) async fn read_request(&mut self) -> Result<Request, ReadError> {
        let head_end = loop {
            if let Some(end) = memchr::memmem::find(&self.received, b"\r\n\r\n") {
                break end;
            }
            if self.received.len() > MAX_HEAD_BYTES {
                return Err(refused(431, "request head too large"));
            }
            self.fill().await?;
        };
        let head = self.received.split_to(head_end + 4);
        let head = std::str::from_utf8(&head[..head_end])
            .map_err(|_| refused(400, "request head is not UTF-8"))?;
        let mut request = parse_head(head)?;
        if request.header("transfer-encoding").is_some() {
            return Err(refused(411, "send the request body with Content-Length"));
        }
        let length = match request.header("content-length") {
            None => 0,
            Some(value) => value
                .trim()
                .parse::<usize>()
                .map_err(|_| refused(400, "invalid Content-Length"))?,
        };
        if length > MAX_BODY_BYTES {
            return Err(refused(413, "request body too large"));
        }
        let expects_continue = request
            .header("expect")
            .is_some_and(|value| value.eq_ignore_ascii_case("100-continue"));
        if expects_continue && self.received.len() < length {
            self.writer
                .write_all(b"HTTP/1.1 100 Continue\r\n\r\n")
                .await
                .map_err(|_| ReadError::Closed)?;
        }
        while self.received.len() < length {
            self.fill().await?;
        }
        request.body = self.received.split_to(length).to_vec();
        Ok(request)
    }

    async fn fill(&mut self) -> Result<(), ReadError> {
        match self.reader.read_buf(&mut self.received).await {
            Ok(0) | Err(_) => Err(ReadError::Closed),
            Ok(_) => Ok(()),
        }
    }

    /// Writes `bytes`, all at once or one byte per write with a pause between writes.
    pub(crate) async fn write(&mut self, bytes: &[u8], split: bool) -> Result<(), ClientGone> {
        if !split {
            return self.write_once(bytes).await;
        }
        for (index, byte) in bytes.iter().enumerate() {
            if index > 0 {
                self.pause(SPLIT_WRITE_PAUSE).await?;
            }
            self.write_once(std::slice::from_ref(byte)).await?;
        }
        Ok(())
    }

    async fn write_once(&mut self, bytes: &[u8]) -> Result<(), ClientGone> {
        let Connection {
            reader,
            writer,
            received,
        } = self;
        let written = async {
            writer.write_all(bytes).await?;
            writer.flush().await
        };
        watching(reader, received, written)
            .await?
            .map_err(|_| ClientGone)
    }

    /// Waits for `duration`, or until the client goes away.
    pub(crate) async fn pause(&mut self, duration: Duration) -> Result<(), ClientGone> {
        watching(
            &mut self.reader,
            &mut self.received,
            tokio::time::sleep(duration),
        )
        .await
    }

    /// Sends nothing until the client closes the connection.
    pub(crate) async fn wait_until_client_closes(&mut self) {
        let never = std::future::pending::<()>();
        let _ = watching(&mut self.reader, &mut self.received, never).await;
    }
}

/// Runs `work` while watching the read side: bytes that arrive meanwhile are kept for the
/// next request; end of stream or a read error means the client is gone.
async fn watching<F: Future>(
    reader: &mut OwnedReadHalf,
    received: &mut BytesMut,
    work: F,
) -> Result<F::Output, ClientGone> {
    let mut work = std::pin::pin!(work);
    loop {
        tokio::select! {
            biased;
            output = &mut work => return Ok(output),
            read = reader.read_buf(received) => match read {
                Ok(0) | Err(_) => return Err(ClientGone),
                Ok(_) => {}
            },
        }
    }
}

fn refused(status: u16, message: &str) -> ReadError {
    ReadError::Refused {
        status,
        message: message.to_owned(),
    }
}

fn parse_head(head: &str) -> Result<Request, ReadError> {
    let mut lines = head.split("\r\n");
    let request_line = lines.next().unwrap_or_default();
    let mut parts = request_line.split(' ');
    let (Some(method), Some(target), Some(version), None) =
        (parts.next(), parts.next(), parts.next(), parts.next())
    else {
        return Err(refused(400, "malformed request line"));
    };
    let http_1_0 = match version {
        "HTTP/1.1" => false,
        "HTTP/1.0" => true,
        _ => return Err(refused(505, "only HTTP/1.0 and HTTP/1.1 are served")),
    };
    let mut headers = Vec::new();
    for line in lines {
        let (name, value) = line
            .split_once(':')
            .ok_or_else(|| refused(400, "malformed header line"))?;
        headers.push((name.trim().to_owned(), value.trim().to_owned()));
    }
    let mut request = Request {
        method: method.to_owned(),
        target: target.to_owned(),
        headers,
        body: Vec::new(),
        keep_alive: false,
    };
    let connection = request.header("connection").unwrap_or_default();
    let has_token = |token: &str| {
        connection
            .split(',')
            .any(|item| item.trim().eq_ignore_ascii_case(token))
    };
    request.keep_alive = if http_1_0 {
        has_token("keep-alive")
    } else {
        !has_token("close")
    };
    Ok(request)
}

/// The status line and headers of a response.
pub(crate) fn response_head(
    status: u16,
    content_type: &str,
    framing: Framing,
    close: bool,
) -> Vec<u8> {
    let mut head = format!(
        "HTTP/1.1 {status} {}\r\nserver: bor-mock-llm\r\ncontent-type: {content_type}\r\n",
        reason_phrase(status)
    );
    match framing {
        Framing::Length(length) => head.push_str(&format!("content-length: {length}\r\n")),
        Framing::Chunked => {
            head.push_str("transfer-encoding: chunked\r\ncache-control: no-cache\r\n");
        }
    }
    if close {
        head.push_str("connection: close\r\n");
    }
    head.push_str("\r\n");
    head.into_bytes()
}

/// `data` as one chunk of a chunked body.
pub(crate) fn chunk(data: &[u8]) -> Vec<u8> {
    let mut framed = format!("{:x}\r\n", data.len()).into_bytes();
    framed.extend_from_slice(data);
    framed.extend_from_slice(b"\r\n");
    framed
}

pub(crate) fn reason_phrase(status: u16) -> &'static str {
    match status {
        200 => "OK",
        400 => "Bad Request",
        401 => "Unauthorized",
        403 => "Forbidden",
        404 => "Not Found",
        405 => "Method Not Allowed",
        408 => "Request Timeout",
        409 => "Conflict",
        411 => "Length Required",
        413 => "Content Too Large",
        422 => "Unprocessable Content",
        429 => "Too Many Requests",
        431 => "Request Header Fields Too Large",
        500 => "Internal Server Error",
        501 => "Not Implemented",
        502 => "Bad Gateway",
        503 => "Service Unavailable",
        504 => "Gateway Timeout",
        505 => "HTTP Version Not Supported",
        _ if status < 500 => "Client Error",
        _ => "Server Error",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_head_is_parsed_with_its_headers() {
        let Ok(request) = parse_head(
            "POST /v1/chat/completions?x=1 HTTP/1.1\r\nHost: a\r\nAuthorization: Bearer k\r\ncontent-length: 2",
        ) else {
            panic!("refused");
        };
        assert_eq!(request.method, "POST");
        assert_eq!(request.path(), "/v1/chat/completions");
        assert_eq!(request.header("authorization"), Some("Bearer k"));
        assert!(request.keep_alive);
    }

    #[test]
    fn keep_alive_follows_the_version_and_connection_header() {
        let keep_alive = |head: &str| parse_head(head).ok().map(|request| request.keep_alive);
        assert_eq!(
            keep_alive("GET / HTTP/1.1\r\nConnection: close"),
            Some(false)
        );
        assert_eq!(keep_alive("GET / HTTP/1.0"), Some(false));
        assert_eq!(
            keep_alive("GET / HTTP/1.0\r\nConnection: keep-alive"),
            Some(true)
        );
    }

    #[test]
    fn malformed_heads_are_refused() {
        for head in ["GET /", "GET / HTTP/2.0", "GET / HTTP/1.1\r\nno colon"] {
            assert!(
                matches!(parse_head(head), Err(ReadError::Refused { .. })),
                "{head}"
            );
        }
    }

    #[test]
    fn chunks_are_framed_with_their_hex_length() {
        assert_eq!(chunk(b"0123456789abcdefX"), b"11\r\n0123456789abcdefX\r\n");
    }
}
