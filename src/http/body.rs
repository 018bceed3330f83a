//! Reading a JSON request body into its type with our own refusals: the content type
//! (415), the size limit (413), the time it takes (408), the JSON itself and its fit to
//! the type (400), each with the API's error shape. The type is the one the API
//! description shows: one definition serves the docs and the parsing.

use std::time::Duration;

use actix_web::http::header;
use actix_web::{HttpRequest, web};
use futures_util::StreamExt;
use serde::de::DeserializeOwned;

use super::error::ApiError;

/// The type of a JSON request body, and how a body that is JSON but does not fit it is
/// refused.
pub trait RequestBody: DeserializeOwned {
    /// Whether the body is a JSON array (a list of grants, of members) instead of an
    /// object.
    const IS_ARRAY: bool = false;

    /// The refusal of a body that does not fit: `field` is the top-level field at fault
    /// (`None` when it is the body itself), `message` says where and why. Unless a
    /// body's fields have codes of their own, `invalid_json`.
    fn refusal(field: Option<&str>, message: String) -> ApiError {
        let _ = field;
        ApiError::InvalidJson(message)
    }
}

/// Reads the body as JSON into `T`. The whole body must arrive within `timeout`
/// (`BOR_REQUEST_BODY_TIMEOUT`): a client that stalls in its body holds its connection
/// no longer (docs/LIMITS.md).
pub async fn read_json_body<T: RequestBody>(
    request: &HttpRequest,
    payload: web::Payload,
    max_bytes: usize,
    timeout: Duration,
) -> Result<T, ApiError> {
    let body = read_json_bytes(request, payload, max_bytes, timeout).await?;
    parse_json_body(&body)
}

/// The bytes of a body that says it is JSON, at most `max_bytes` of them, whole within
/// `timeout`; what [`read_json_body`] parses, for an edge that reads them its own way.
pub async fn read_json_bytes(
    request: &HttpRequest,
    payload: web::Payload,
    max_bytes: usize,
    timeout: Duration,
) -> Result<web::BytesMut, ApiError> {
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
    read_bytes(request, payload, max_bytes, timeout).await
}

/// The bytes of a body of any type, at most `max_bytes` of them (413), whole within
/// `timeout` (408).
pub async fn read_bytes(
    request: &HttpRequest,
    mut payload: web::Payload,
    max_bytes: usize,
    timeout: Duration,
) -> Result<web::BytesMut, ApiError> {
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
    tokio::time::timeout(timeout, read)
        .await
        .map_err(|_| ApiError::BodyTimeout {
            seconds: timeout.as_secs_f64(),
        })?
}

/// Parses `bytes` into `T`: malformed JSON, or JSON that is not an object (an array
/// for a [`RequestBody::IS_ARRAY`] type), is `invalid_json`; an object that does not fit `T` is refused as `T` says, with the
/// path of the value at fault (`history[2].role: unknown variant …`).
pub fn parse_json_body<T: RequestBody>(bytes: &[u8]) -> Result<T, ApiError> {
    if super::nul::holds_nul(bytes) {
        return Err(ApiError::NulCharacter("the body"));
    }
    // Every body is an object (or an array): serde would also fill a struct from an
    // array of its fields in order.
    let (opening, shape) = if T::IS_ARRAY {
        (b'[', "array")
    } else {
        (b'{', "object")
    };
    if bytes.iter().find(|byte| !byte.is_ascii_whitespace()) != Some(&opening) {
        return Err(
            match serde_json::from_slice::<serde::de::IgnoredAny>(bytes) {
                Err(error) => malformed(&error),
                Ok(_) => ApiError::InvalidJson(format!("the body must be a JSON {shape}")),
            },
        );
    }
    let mut deserializer = serde_json::Deserializer::from_slice(bytes);
    let body = serde_path_to_error::deserialize(&mut deserializer).map_err(|error| {
        let path = error.path().to_string();
        // In an object, a fault below it starts with one of its fields.
        let field = match error.path().iter().next() {
            Some(serde_path_to_error::Segment::Map { key }) => Some(key.clone()),
            _ => None,
        };
        let inner = error.into_inner();
        if inner.is_syntax() || inner.is_eof() {
            return malformed(&inner);
        }
        let reason = without_position(&inner);
        match field {
            Some(field) => T::refusal(Some(&field), format!("{path}: {reason}")),
            None => T::refusal(None, reason),
        }
    })?;
    deserializer.end().map_err(|error| malformed(&error))?;
    Ok(body)
}

fn malformed(error: &serde_json::Error) -> ApiError {
    ApiError::InvalidJson(format!("malformed JSON: {}", without_position(error)))
}

/// serde_json's message without its ` at line L column C`, which means nothing to a
/// client that did not format the body itself.
fn without_position(error: &serde_json::Error) -> String {
    let text = error.to_string();
    match text.rfind(" at line ") {
        Some(at) if error.line() > 0 => text[..at].to_owned(),
        _ => text,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::Deserialize;

    #[derive(Debug, Deserialize)]
    struct Probe {
        #[serde(default)]
        items: Vec<Item>,
    }

    #[derive(Debug, Deserialize)]
    struct Item {
        #[expect(dead_code, reason = "read to check its type")]
        n: u8,
    }

    /// Faults in `items` have a code of their own, as `history` has on `/api/chat`.
    impl RequestBody for Probe {
        fn refusal(field: Option<&str>, message: String) -> ApiError {
            match field {
                Some("items") => ApiError::InvalidHistory(message),
                _ => ApiError::InvalidJson(message),
            }
        }
    }

    fn refusal(body: &str) -> (&'static str, String) {
        let error = parse_json_body::<Probe>(body.as_bytes()).unwrap_err();
        (error.code(), error.to_string())
    }

    #[test]
    fn u0000_anywhere_in_a_body_is_invalid_text() {
        for body in [
            r#"{"items": [], "name": "a\u0000b"}"#,
            r#"{"items": [], "name": "\u0000"}"#,
            r#"{"items": [], "a\u0000": 1}"#,
            r#"{"items": [], "name": "\\\u0000"}"#,
            r#"{"items": [], "name": "\u00001"}"#,
            "{\"items\": [], \"name\": \"a\0b\"}",
        ] {
            let (code, message) = refusal(body);
            assert_eq!(code, "invalid_text", "{body}");
            assert_eq!(message, "U+0000 (NUL) is not accepted in the body");
        }
        let text: Probe = parse_json_body(br#"{"name": "\\u0000 is how JSON writes it"}"#)
            .expect("a backslash and text are no NUL");
        assert!(text.items.is_empty());
    }

    #[test]
    fn a_body_that_fits_is_read() {
        let probe: Probe = parse_json_body(br#" {"items": [{"n": 1}], "other": true} "#).unwrap();
        assert_eq!(probe.items.len(), 1);
    }

    #[test]
    fn malformed_json_is_invalid_json_without_a_position() {
        for body in ["{not json", "", "{\"items\": []} trailing", "[1,"] {
            let (code, message) = refusal(body);
            assert_eq!(code, "invalid_json", "{body}");
            assert!(message.starts_with("malformed JSON: "), "{message}");
            assert!(!message.contains(" at line "), "{message}");
        }
    }

    #[test]
    fn only_an_object_is_a_body() {
        for body in ["[]", "[{\"n\": 1}]", "\"items\"", "7", "null"] {
            assert_eq!(
                refusal(body),
                ("invalid_json", "the body must be a JSON object".to_owned()),
                "{body}"
            );
        }
    }

    #[test]
    fn a_field_that_does_not_fit_is_named_with_its_path_and_its_code() {
        assert_eq!(
            refusal(r#"{"items": [{"n": 1}, {"n": "x"}]}"#),
            (
                "invalid_history",
                "items[1].n: invalid type: string \"x\", expected u8".to_owned()
            )
        );
        assert_eq!(refusal(r#"{"items": {}}"#).0, "invalid_history");
        assert_eq!(
            refusal(r#"{"items": [{}]}"#),
            ("invalid_history", "items[0]: missing field `n`".to_owned())
        );
    }
}
