//! What the mock sends back, decided completely before the first byte is written.

use std::time::Duration;

use serde_json::{Value, json};

/// A reply and how to put it on the wire.
pub(crate) struct Response {
    pub reply: Reply,
    /// Write every byte of the response separately, pausing between writes.
    pub split_writes: bool,
}

pub(crate) enum Reply {
    /// A complete response with a `Content-Length` body.
    Full {
        status: u16,
        content_type: String,
        body: Vec<u8>,
    },
    /// A `200` response with a chunked body, one HTTP chunk per event.
    Stream(EventStream),
    /// Close the connection without sending anything.
    Drop,
    /// Send nothing and keep the connection open until the client closes it.
    Hang,
}

pub(crate) struct EventStream {
    pub content_type: String,
    /// Complete SSE events (`data: …\n\n`), in order.
    pub events: Vec<String>,
    pub end: StreamEnd,
    /// Pause before every event but the first.
    pub token_delay: Duration,
}

/// The pause between the comments of [`StreamEnd::KeepAlive`].
pub(crate) const KEEPALIVE_INTERVAL: std::time::Duration = std::time::Duration::from_millis(50);

/// How an event stream ends once its events are written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum StreamEnd {
    /// The terminating chunk: the body ends properly.
    Complete,
    /// Close the connection mid-body, without the terminating chunk.
    Break,
    /// Send nothing more and keep the connection open until the client closes it.
    Stall,
    /// Send only `: keep-alive` comments, every [`KEEPALIVE_INTERVAL`], until the client
    /// closes the connection.
    KeepAlive,
}

impl Reply {
    pub(crate) fn json(status: u16, body: &Value) -> Reply {
        Reply::Full {
            status,
            content_type: "application/json".to_owned(),
            body: body.to_string().into_bytes(),
        }
    }

    /// An OpenAI-shaped error object.
    pub(crate) fn error(status: u16, message: impl Into<String>) -> Reply {
        let kind = match status {
            429 => "rate_limit_error",
            400..=499 => "invalid_request_error",
            _ => "server_error",
        };
        let body = json!({
            "error": {"message": message.into(), "type": kind, "param": null, "code": status}
        });
        Reply::json(status, &body)
    }

    /// An error page as a reverse proxy in front of a model server would send it.
    pub(crate) fn html_error(status: u16) -> Reply {
        let title = format!("{status} {}", crate::http::reason_phrase(status));
        Reply::html(
            status,
            format!(
                "<html>\r\n<head><title>{title}</title></head>\r\n<body>\r\n\
                 <center><h1>{title}</h1></center>\r\n<hr><center>nginx</center>\r\n\
                 </body>\r\n</html>\r\n"
            ),
        )
    }

    pub(crate) fn html(status: u16, page: String) -> Reply {
        Reply::Full {
            status,
            content_type: "text/html".to_owned(),
            body: page.into_bytes(),
        }
    }

    /// Replaces the content type of a reply that has one.
    pub(crate) fn with_content_type(mut self, content_type: Option<&str>) -> Reply {
        if let Some(new) = content_type {
            match &mut self {
                Reply::Full { content_type, .. } => *content_type = new.to_owned(),
                Reply::Stream(stream) => stream.content_type = new.to_owned(),
                Reply::Drop | Reply::Hang => {}
            }
        }
        self
    }
}

impl From<Reply> for Response {
    fn from(reply: Reply) -> Response {
        Response {
            reply,
            split_writes: false,
        }
    }
}
