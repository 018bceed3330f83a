//! Reading a JSON request body with our own refusals: the content type (415), the size
//! limit (413), the time it takes (408) and the JSON itself (400), each with the API's
//! error shape.

use std::time::Duration;

use actix_web::http::header;
use actix_web::{HttpRequest, web};
use futures_util::StreamExt;
use serde_json::Value;

use super::error::ApiError;

/// Reads the body as JSON. The whole body must arrive within `timeout`
/// (`BOR_REQUEST_BODY_TIMEOUT`): a client that stalls in its body holds its connection
/// no longer (docs/LIMITS.md).
pub async fn read_json_body(
    request: &HttpRequest,
    mut payload: web::Payload,
    max_bytes: usize,
    timeout: Duration,
) -> Result<Value, ApiError> {
    let is_json = request
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|value| value.to_str().ok())
        .and_then(|value| value.split(';').next())
        .is_some_and(|mime| {
            let mime = mime.trim().to_ascii_lowercase();
            mime == "application/json" || mime.ends_with("+json")
        });
    if !is_json {
        return Err(ApiError::UnsupportedMediaType);
    }
    let declared = request
        .headers()
        .get(header::CONTENT_LENGTH)
        .and_then(|value| value.to_str().ok())
        .and_then(|value| value.parse::<usize>().ok());
    if declared.is_some_and(|length| length > max_bytes) {
        return Err(ApiError::BodyTooLarge { max_bytes });
    }
    let read = async {
        let mut body = web::BytesMut::new();
        while let Some(chunk) = payload.next().await {
            let chunk =
                chunk.map_err(|err| ApiError::InvalidJson(format!("unreadable body: {err}")))?;
            if body.len() + chunk.len() > max_bytes {
                return Err(ApiError::BodyTooLarge { max_bytes });
            }
            body.extend_from_slice(&chunk);
        }
        Ok(body)
    };
    let body = tokio::time::timeout(timeout, read)
        .await
        .map_err(|_| ApiError::BodyTimeout {
            seconds: timeout.as_secs_f64(),
        })??;
    serde_json::from_slice(&body)
        .map_err(|err| ApiError::InvalidJson(format!("malformed JSON: {err}")))
}
