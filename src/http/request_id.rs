//! Gives every request an id: the caller's `X-Request-Id` when it is a short token, else
//! a new UUID. The request's span carries it and the client's address
//! ([`super::client_address`]), so every line logged while serving the request (a
//! chat turn's included) has them; the response returns the id as `X-Request-Id`.

use std::time::Instant;

use actix_web::Error;
use actix_web::body::MessageBody;
use actix_web::dev::{ServiceRequest, ServiceResponse};
use actix_web::http::header::{HeaderName, HeaderValue};
use actix_web::middleware::Next;
use tracing::Instrument;
use uuid::Uuid;

pub const REQUEST_ID: HeaderName = HeaderName::from_static("x-request-id");

/// The longest caller-chosen id that is kept.
const MAX_ID_LEN: usize = 64;

/// The middleware (`middleware::from_fn(request_id)`).
pub async fn request_id(
    request: ServiceRequest,
    next: Next<impl MessageBody>,
) -> Result<ServiceResponse<impl MessageBody>, Error> {
    let id = request
        .headers()
        .get(&REQUEST_ID)
        .and_then(|value| value.to_str().ok())
        .filter(|id| is_token(id))
        .map_or_else(|| Uuid::new_v4().to_string(), str::to_owned);
    let span = tracing::info_span!(
        "request",
        request_id = %id,
        method = %request.method(),
        path = %request.path(),
        client = tracing::field::Empty,
    );
    if let Some(client) = super::client_address::keep_client_address(request.request()) {
        span.record("client", tracing::field::display(client));
    }
    let started = Instant::now();
    let mut response = next.call(request).instrument(span.clone()).await?;
    span.in_scope(|| {
        tracing::info!(
            status = response.status().as_u16(),
            elapsed_ms = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX),
            "request answered"
        );
    });
    if let Ok(value) = HeaderValue::from_str(&id) {
        response.headers_mut().insert(REQUEST_ID, value);
    }
    Ok(response)
}

/// Letters, digits, `-`, `_` and `.`, at most [`MAX_ID_LEN`] of them.
fn is_token(id: &str) -> bool {
    !id.is_empty()
        && id.len() <= MAX_ID_LEN
        && id
            .bytes()
            .all(|byte| byte.is_ascii_alphanumeric() || matches!(byte, b'-' | b'_' | b'.'))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_short_tokens_are_kept() {
        assert!(is_token("3f2a-req_1.b"));
        assert!(!is_token(""));
        assert!(!is_token("id with spaces"));
        assert!(!is_token("id\nforged=line"));
        assert!(!is_token(&"a".repeat(MAX_ID_LEN + 1)));
    }
}
