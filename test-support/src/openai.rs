//! Talking to `/v1/chat/completions` as an OpenAI client would, keeping what the wire
//! carried: the `data:` chunks, the comment lines and the `[DONE]` marker.

use awc::http::header::HeaderMap;
use serde_json::{Value, json};

use super::{STREAM_TIMEOUT, TestApp};

/// A response of `/v1/chat/completions`: a stream's events, or a JSON body.
#[derive(Debug)]
pub struct CompletionResponse {
    pub status: u16,
    pub headers: HeaderMap,
    /// Every event of a stream, in order.
    pub events: Vec<StreamEvent>,
    /// The body, when it was not a stream.
    pub json: Option<Value>,
}

#[derive(Debug, Clone, PartialEq)]
pub enum StreamEvent {
    /// A `data:` line holding JSON (a chunk or an error object).
    Data(Value),
    /// `data: [DONE]`.
    Done,
    /// A comment line, without its `:`.
    Comment(String),
}

impl CompletionResponse {
    /// The JSON `data:` events.
    pub fn data(&self) -> Vec<&Value> {
        self.events
            .iter()
            .filter_map(|event| match event {
                StreamEvent::Data(value) => Some(value),
                _ => None,
            })
            .collect()
    }

    /// The chunks' `content` deltas, joined.
    pub fn content(&self) -> String {
        self.delta_texts("content")
    }

    /// The chunks' `reasoning_content` deltas, joined.
    pub fn reasoning(&self) -> String {
        self.delta_texts("reasoning_content")
    }

    fn delta_texts(&self, field: &str) -> String {
        self.data()
            .iter()
            .filter_map(|chunk| chunk["choices"][0]["delta"][field].as_str())
            .collect()
    }

    /// The comment lines other than keep-alives.
    pub fn comments(&self) -> Vec<&str> {
        self.events
            .iter()
            .filter_map(|event| match event {
                StreamEvent::Comment(text) if text != "keep-alive" => Some(text.as_str()),
                _ => None,
            })
            .collect()
    }

    /// The last JSON event: the final chunk, or the error object of a failed turn.
    pub fn last_data(&self) -> &Value {
        self.data().last().copied().expect("the stream has data")
    }

    /// The turn id the `bor` extension names.
    pub fn turn_id(&self) -> String {
        let json = self.json.as_ref().unwrap_or_else(|| self.last_data());
        json["bor"]["turn_id"]
            .as_str()
            .expect("the completion names its turn")
            .to_owned()
    }

    /// The refusal's or the failure's error object.
    pub fn error(&self) -> &Value {
        &self.json.as_ref().expect("a JSON body")["error"]
    }
}

impl TestApp {
    /// Asks `question` through `/v1/chat/completions`, as the only message.
    pub async fn complete(&self, question: &str, stream: bool) -> CompletionResponse {
        self.complete_json(json!({
            "model": "bor",
            "stream": stream,
            "messages": [{"role": "user", "content": question}],
        }))
        .await
    }

    pub async fn complete_json(&self, body: Value) -> CompletionResponse {
        self.post_completion(Some("application/json"), body.to_string().into_bytes())
            .await
    }

    pub async fn post_completion(
        &self,
        content_type: Option<&str>,
        body: Vec<u8>,
    ) -> CompletionResponse {
        let mut request = Self::client().post(format!("{}/v1/chat/completions", self.address));
        if let Some(content_type) = content_type {
            request = request.insert_header(("Content-Type", content_type));
        }
        let mut response = request.send_body(body).await.expect("the request is sent");
        let status = response.status().as_u16();
        let headers = response.headers().clone();
        let body = tokio::time::timeout(STREAM_TIMEOUT, response.body().limit(16 << 20))
            .await
            .expect("the response ended in time")
            .expect("the body is read");
        let is_stream = headers
            .get("content-type")
            .and_then(|value| value.to_str().ok())
            .is_some_and(|value| value.starts_with("text/event-stream"));
        let text = String::from_utf8(body.to_vec()).expect("the body is UTF-8");
        if is_stream {
            CompletionResponse {
                status,
                headers,
                events: parse_events(&text),
                json: None,
            }
        } else {
            CompletionResponse {
                status,
                headers,
                events: Vec::new(),
                json: Some(serde_json::from_str(&text).expect("the body is JSON")),
            }
        }
    }
}

/// The events of an SSE body whose events are single lines.
pub fn parse_events(text: &str) -> Vec<StreamEvent> {
    text.split("\n\n")
        .filter(|event| !event.is_empty())
        .map(|event| {
            assert!(!event.contains('\n'), "one line per event: {event:?}");
            if let Some(comment) = event.strip_prefix(':') {
                StreamEvent::Comment(comment.trim_start().to_owned())
            } else if event == "data: [DONE]" {
                StreamEvent::Done
            } else {
                let data = event.strip_prefix("data: ").expect("a data line");
                StreamEvent::Data(serde_json::from_str(data).expect("data is JSON"))
            }
        })
        .collect()
}
