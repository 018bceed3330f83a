//! Just enough of an HTTP/1.1 client for load: one request at a time per connection,
//! `Content-Length` request bodies, `Content-Length` or chunked response bodies handed
//! over piece by piece as they arrive, keep-alive reuse.

use std::net::SocketAddr;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// Longest response head accepted.
const MAX_HEAD_BYTES: usize = 64 * 1024;
/// Bytes asked of the socket per read.
const READ_CHUNK: usize = 16 * 1024;

#[derive(Debug)]
pub enum HttpError {
    Io(std::io::Error),
    /// The server closed the connection before the response was complete.
    Closed,
    Malformed(&'static str),
}

impl std::fmt::Display for HttpError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            HttpError::Io(err) => write!(f, "i/o: {err}"),
            HttpError::Closed => write!(f, "connection closed mid-response"),
            HttpError::Malformed(what) => write!(f, "malformed response: {what}"),
        }
    }
}

impl From<std::io::Error> for HttpError {
    fn from(err: std::io::Error) -> Self {
        HttpError::Io(err)
    }
}

/// A response head.
pub struct Head {
    pub status: u16,
    framing: Framing,
    close: bool,
}

enum Framing {
    Length(usize),
    Chunked,
    /// The body ends when the connection closes.
    UntilClose,
}

/// A keep-alive connection to one server.
pub struct Connection {
    stream: TcpStream,
    buffer: Vec<u8>,
    /// Bytes of `buffer` already consumed.
    start: usize,
}

impl Connection {
    pub async fn open(addr: SocketAddr) -> Result<Connection, HttpError> {
        let stream = TcpStream::connect(addr).await?;
        stream.set_nodelay(true)?;
        Ok(Connection {
            stream,
            buffer: Vec::with_capacity(READ_CHUNK),
            start: 0,
        })
    }

    /// Sends one request (a prepared head and body).
    pub async fn send(&mut self, request: &[u8]) -> Result<(), HttpError> {
        self.stream.write_all(request).await?;
        Ok(())
    }

    /// Reads the response head.
    pub async fn read_head(&mut self) -> Result<Head, HttpError> {
        loop {
            let pending = &self.buffer[self.start..];
            if let Some(end) = find(pending, b"\r\n\r\n") {
                let head = parse_head(&pending[..end])?;
                self.start += end + 4;
                return Ok(head);
            }
            if pending.len() > MAX_HEAD_BYTES {
                return Err(HttpError::Malformed("head too large"));
            }
            if !self.fill().await? {
                return Err(HttpError::Closed);
            }
        }
    }

    /// Reads the body of `head`, handing each piece to `on_body` as it arrives; returns
    /// whether the connection may carry another request.
    pub async fn read_body(
        &mut self,
        head: &Head,
        mut on_body: impl FnMut(&[u8]),
    ) -> Result<bool, HttpError> {
        match head.framing {
            Framing::Length(length) => {
                self.read_exactly(length, &mut on_body).await?;
                Ok(!head.close)
            }
            Framing::UntilClose => loop {
                if self.start < self.buffer.len() {
                    let piece = self.start..self.buffer.len();
                    self.start = self.buffer.len();
                    on_body(&self.buffer[piece]);
                }
                if !self.fill().await? {
                    return Ok(false);
                }
            },
            Framing::Chunked => self.read_chunked(on_body).await.map(|()| !head.close),
        }
    }

    /// Hands the next `length` body bytes to `on_body`, as they arrive.
    async fn read_exactly(
        &mut self,
        mut length: usize,
        on_body: &mut impl FnMut(&[u8]),
    ) -> Result<(), HttpError> {
        while length > 0 {
            if self.start == self.buffer.len() && !self.fill().await? {
                return Err(HttpError::Closed);
            }
            let take = length.min(self.buffer.len() - self.start);
            let piece = self.start..self.start + take;
            self.start += take;
            length -= take;
            on_body(&self.buffer[piece]);
        }
        Ok(())
    }

    async fn read_chunked(&mut self, mut on_body: impl FnMut(&[u8])) -> Result<(), HttpError> {
        loop {
            let size = loop {
                let pending = &self.buffer[self.start..];
                if let Some(end) = find(pending, b"\r\n") {
                    let line = std::str::from_utf8(&pending[..end])
                        .map_err(|_| HttpError::Malformed("chunk size"))?;
                    let digits = line.split(';').next().unwrap_or_default().trim();
                    let size = usize::from_str_radix(digits, 16)
                        .map_err(|_| HttpError::Malformed("chunk size"))?;
                    self.start += end + 2;
                    break size;
                }
                if !self.fill().await? {
                    return Err(HttpError::Closed);
                }
            };
            if size == 0 {
                // Trailers are not used by the servers measured: expect the final CRLF.
                while self.buffer.len() - self.start < 2 {
                    if !self.fill().await? {
                        return Err(HttpError::Closed);
                    }
                }
                self.start += 2;
                return Ok(());
            }
            self.read_exactly(size, &mut on_body).await?;
            while self.buffer.len() - self.start < 2 {
                if !self.fill().await? {
                    return Err(HttpError::Closed);
                }
            }
            self.start += 2;
        }
    }

    /// Reads more bytes; `false` at end of stream.
    async fn fill(&mut self) -> Result<bool, HttpError> {
        if self.start == self.buffer.len() {
            self.buffer.clear();
            self.start = 0;
        } else if self.start > READ_CHUNK {
            self.buffer.drain(..self.start);
            self.start = 0;
        }
        let len = self.buffer.len();
        self.buffer.resize(len + READ_CHUNK, 0);
        let read = self.stream.read(&mut self.buffer[len..]).await;
        let read = match read {
            Ok(read) => read,
            Err(err) => {
                self.buffer.truncate(len);
                return Err(err.into());
            }
        };
        self.buffer.truncate(len + read);
        Ok(read > 0)
    }
}

fn parse_head(head: &[u8]) -> Result<Head, HttpError> {
    let head = std::str::from_utf8(head).map_err(|_| HttpError::Malformed("head not UTF-8"))?;
    let mut lines = head.split("\r\n");
    let status_line = lines.next().unwrap_or_default();
    let status = status_line
        .split(' ')
        .nth(1)
        .and_then(|code| code.parse().ok())
        .ok_or(HttpError::Malformed("status line"))?;
    let mut framing = Framing::UntilClose;
    let mut close = false;
    for line in lines {
        let Some((name, value)) = line.split_once(':') else {
            continue;
        };
        let value = value.trim();
        if name.eq_ignore_ascii_case("content-length") {
            let length = value
                .parse()
                .map_err(|_| HttpError::Malformed("content-length"))?;
            framing = Framing::Length(length);
        } else if name.eq_ignore_ascii_case("transfer-encoding")
            && value.eq_ignore_ascii_case("chunked")
        {
            framing = Framing::Chunked;
        } else if name.eq_ignore_ascii_case("connection") && value.eq_ignore_ascii_case("close") {
            close = true;
        }
    }
    if matches!(framing, Framing::UntilClose) {
        close = true;
    }
    Ok(Head {
        status,
        framing,
        close,
    })
}

/// A `POST` request with a JSON body, ready to write.
pub fn post_json(host: &str, path: &str, body: &str, bearer: Option<&str>) -> Vec<u8> {
    let mut request = format!(
        "POST {path} HTTP/1.1\r\nHost: {host}\r\nContent-Type: application/json\r\n\
         Accept: text/event-stream\r\nContent-Length: {}\r\n",
        body.len()
    );
    if let Some(token) = bearer {
        request.push_str(&format!("Authorization: Bearer {token}\r\n"));
    }
    request.push_str("\r\n");
    request.push_str(body);
    request.into_bytes()
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack
        .windows(needle.len())
        .position(|window| window == needle)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn heads_give_status_and_framing() {
        let head = parse_head(b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\nx: y").unwrap();
        assert_eq!(head.status, 200);
        assert!(matches!(head.framing, Framing::Chunked));
        assert!(!head.close);
        let head =
            parse_head(b"HTTP/1.1 503 Busy\r\nContent-Length: 12\r\nConnection: close").unwrap();
        assert_eq!(head.status, 503);
        assert!(matches!(head.framing, Framing::Length(12)));
        assert!(head.close);
    }
}
