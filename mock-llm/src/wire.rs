//! Failures and wire shapes shared by the endpoints.

use crate::directive::{Directive, Endpoint, Fault, Garbage};
use crate::reply::{Reply, Response};

/// Length of the line sent by `garbage: "huge_line"`.
pub(crate) const HUGE_LINE_BYTES: usize = 2 * 1024 * 1024;

/// A 200 page a misconfigured proxy or a web server in the model server's place sends.
pub(crate) const HTML_PAGE: &str = "<!DOCTYPE html>\n<html><head><title>Welcome</title></head>\
     <body><h1>It works!</h1><p>This is not a model server.</p></body></html>\n";

/// A body that is not JSON.
const INVALID_JSON: &str = "{\"id\": \"chatcmpl-mock\", \"choices\": [{\"delta\": oops";

/// The reply that replaces the whole answer for the faults that do so; `None` for the
/// faults that act inside an event stream.
pub(crate) fn fault_reply(fault: &Fault) -> Option<Reply> {
    match *fault {
        Fault::Status { code, html: false } => Some(Reply::error(
            code,
            format!("mock failure: HTTP {code} as the MOCK directive asked"),
        )),
        Fault::Status { code, html: true } => Some(Reply::html_error(code)),
        Fault::Drop => Some(Reply::Drop),
        Fault::Hang => Some(Reply::Hang),
        Fault::Garbage(kind) => Some(garbage(kind)),
        Fault::DropAfter(_)
        | Fault::StallAfter(_)
        | Fault::KeepAliveAfter(_)
        | Fault::ErrorAfter(_)
        | Fault::NoDone => None,
    }
}

/// A 200 reply with a body that is not what a JSON client expects.
fn garbage(kind: Garbage) -> Reply {
    match kind {
        Garbage::InvalidJson => Reply::Full {
            status: 200,
            content_type: "application/json".to_owned(),
            body: INVALID_JSON.as_bytes().to_vec(),
        },
        Garbage::HugeLine => Reply::Full {
            status: 200,
            content_type: "application/json".to_owned(),
            body: vec![b'x'; HUGE_LINE_BYTES],
        },
        Garbage::Html => Reply::html(200, HTML_PAGE.to_owned()),
    }
}

/// `answer`, or the failure the directive injects into this attempt, in its wire shape.
pub(crate) fn shape(
    directive: &Directive,
    endpoint: Endpoint,
    attempt: u32,
    answer: Reply,
) -> Response {
    let reply = directive
        .fault_for(endpoint, attempt)
        .and_then(fault_reply)
        .unwrap_or(answer);
    on_the_wire(directive, endpoint, reply)
}

/// Applies the directive's content type and write splitting when it targets `endpoint`.
pub(crate) fn on_the_wire(directive: &Directive, endpoint: Endpoint, reply: Reply) -> Response {
    if !directive.targets(endpoint) {
        return reply.into();
    }
    Response {
        reply: reply.with_content_type(directive.content_type.as_deref()),
        split_writes: directive.split_writes,
    }
}
