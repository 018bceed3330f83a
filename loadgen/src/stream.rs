//! Reading an event stream as it arrives: SSE lines into events, and events into what
//! the load generator measures (first token, tokens, how the stream ended).

use std::time::Instant;

use serde_json::Value;

/// Which event stream a server speaks.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Protocol {
    /// bor's `POST /api/chat`: `delta` events, then `done` or `error`.
    Bor,
    /// An OpenAI streaming chat completion: chunks with `delta.content`, then `[DONE]`.
    Openai,
}

/// How a stream ended, as far as the client can tell.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Ending {
    /// `done` (bor) or `[DONE]` (OpenAI).
    Complete,
    /// An `error` frame (bor) or an error object (OpenAI), with its code.
    ErrorFrame(String),
}

/// Follows one response body.
pub struct StreamWatch {
    protocol: Protocol,
    line: Vec<u8>,
    event: String,
    data: Vec<u8>,
    pub first_token: Option<Instant>,
    pub tokens: u64,
    /// `None` while (or when) the stream has no terminal event.
    pub ending: Option<Ending>,
}

impl StreamWatch {
    pub fn new(protocol: Protocol) -> StreamWatch {
        StreamWatch {
            protocol,
            line: Vec::with_capacity(256),
            event: String::new(),
            data: Vec::with_capacity(256),
            first_token: None,
            tokens: 0,
            ending: None,
        }
    }

    /// Feeds body bytes as they arrive.
    pub fn feed(&mut self, bytes: &[u8]) {
        let mut rest = bytes;
        while let Some(newline) = rest.iter().position(|&b| b == b'\n') {
            self.line.extend_from_slice(&rest[..newline]);
            rest = &rest[newline + 1..];
            if self.line.last() == Some(&b'\r') {
                self.line.pop();
            }
            let line = std::mem::take(&mut self.line);
            self.on_line(&line);
            self.line = line;
            self.line.clear();
        }
        self.line.extend_from_slice(rest);
    }

    fn on_line(&mut self, line: &[u8]) {
        if line.is_empty() {
            if !self.data.is_empty() || !self.event.is_empty() {
                self.dispatch();
            }
            return;
        }
        if let Some(value) = field(line, b"data") {
            if !self.data.is_empty() {
                self.data.push(b'\n');
            }
            self.data.extend_from_slice(value);
        } else if let Some(value) = field(line, b"event") {
            self.event = String::from_utf8_lossy(value).into_owned();
        }
    }

    fn dispatch(&mut self) {
        let event = std::mem::take(&mut self.event);
        let data = std::mem::take(&mut self.data);
        match self.protocol {
            Protocol::Bor => match event.as_str() {
                "delta" => self.token(),
                "done" => self.end(Ending::Complete),
                "error" => {
                    let code = serde_json::from_slice::<Value>(&data)
                        .ok()
                        .and_then(|value| value["code"].as_str().map(str::to_owned))
                        .unwrap_or_else(|| "unknown".to_owned());
                    self.end(Ending::ErrorFrame(code));
                }
                _ => {}
            },
            Protocol::Openai => {
                if data.trim_ascii() == b"[DONE]" {
                    self.end(Ending::Complete);
                    return;
                }
                let Ok(chunk) = serde_json::from_slice::<Value>(&data) else {
                    self.end(Ending::ErrorFrame("invalid_json".to_owned()));
                    return;
                };
                if chunk.get("error").is_some() {
                    self.end(Ending::ErrorFrame("in_stream_error".to_owned()));
                    return;
                }
                let content = &chunk["choices"][0]["delta"]["content"];
                if content.as_str().is_some_and(|text| !text.is_empty()) {
                    self.token();
                }
            }
        }
        self.data = data;
        self.data.clear();
    }

    fn token(&mut self) {
        if self.first_token.is_none() {
            self.first_token = Some(Instant::now());
        }
        self.tokens += 1;
    }

    fn end(&mut self, ending: Ending) {
        if self.ending.is_none() {
            self.ending = Some(ending);
        }
    }
}

/// The value of an SSE field line `name: value` (one optional space after the colon).
fn field<'a>(line: &'a [u8], name: &[u8]) -> Option<&'a [u8]> {
    let rest = line.strip_prefix(name)?.strip_prefix(b":")?;
    Some(rest.strip_prefix(b" ").unwrap_or(rest))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bor_frames_split_anywhere_are_counted() {
        let body = "event: delta\ndata: {\"text\":\"a\"}\n\n: keep-alive\n\nevent: delta\r\ndata: {\"text\":\"b\"}\r\n\r\nevent: done\ndata: {}\n\n";
        for split in 0..body.len() {
            let mut watch = StreamWatch::new(Protocol::Bor);
            watch.feed(&body.as_bytes()[..split]);
            watch.feed(&body.as_bytes()[split..]);
            assert_eq!(watch.tokens, 2, "split at {split}");
            assert_eq!(watch.ending, Some(Ending::Complete));
        }
        let mut watch = StreamWatch::new(Protocol::Bor);
        watch.feed(b"event: error\ndata: {\"code\":\"llm_unavailable\"}\n\n");
        assert_eq!(
            watch.ending,
            Some(Ending::ErrorFrame("llm_unavailable".to_owned()))
        );
    }

    #[test]
    fn openai_chunks_with_content_are_tokens() {
        let mut watch = StreamWatch::new(Protocol::Openai);
        watch.feed(
            b"data: {\"choices\":[{\"delta\":{\"role\":\"assistant\",\"content\":\"\"}}]}\n\n",
        );
        assert!(watch.first_token.is_none());
        watch.feed(b"data: {\"choices\":[{\"delta\":{\"content\":\"Hi\"}}]}\n\ndata: [DONE]\n\n");
        assert_eq!(watch.tokens, 1);
        assert_eq!(watch.ending, Some(Ending::Complete));
    }
}
