//! U+0000 is refused at the edge (400 `invalid_text`), before anything reads it:
//! PostgreSQL stores no such character in text, and no name or text of bor's holds one.
//! The path and the query string are checked by [`refuse_nul`] (a middleware on the
//! whole route table); a JSON body's strings by [`holds_nul`], which the body reader
//! runs on every body; a form field of an upload by [`check_text`].

use actix_web::Error;
use actix_web::body::{EitherBody, MessageBody};
use actix_web::dev::{ServiceRequest, ServiceResponse};
use actix_web::middleware::Next;

use super::ApiError;

/// The middleware (`middleware::from_fn(refuse_nul)`): refuses a request whose path or
/// query string holds `%00` (a raw NUL byte never gets through the HTTP parser).
pub async fn refuse_nul(
    request: ServiceRequest,
    next: Next<impl MessageBody>,
) -> Result<ServiceResponse<EitherBody<impl MessageBody>>, Error> {
    let place = if holds_encoded_nul(request.path()) {
        Some("the path")
    } else if holds_encoded_nul(request.query_string()) {
        Some("the query string")
    } else {
        None
    };
    match place {
        None => Ok(next.call(request).await?.map_into_left_body()),
        Some(place) => {
            let response = super::refusal(request.path(), ApiError::NulCharacter(place));
            Ok(request.into_response(response).map_into_right_body())
        }
    }
}

/// Whether percent-encoded `text` decodes to U+0000.
fn holds_encoded_nul(text: &str) -> bool {
    text.as_bytes().windows(3).any(|window| window == b"%00")
}

/// Whether JSON text `bytes` holds U+0000: a NUL byte, or the escape `\u0000` in a
/// string (a backslash outside a string is no JSON, so every backslash read here
/// starts an escape).
pub(super) fn holds_nul(bytes: &[u8]) -> bool {
    let mut rest = bytes;
    while let Some(at) = rest.iter().position(|byte| matches!(byte, b'\\' | 0)) {
        if rest[at] == 0 {
            return true;
        }
        if rest.get(at + 1..at + 6) == Some(b"u0000".as_slice()) {
            return true;
        }
        // Skips the escaped character, so that `\\u0000` (a backslash, then text) is not one.
        rest = rest.get(at + 2..).unwrap_or_default();
    }
    false
}

/// `text` (read from `place`), refused when it holds U+0000.
pub(super) fn check_text(text: &str, place: &'static str) -> Result<(), ApiError> {
    if text.contains('\0') {
        Err(ApiError::NulCharacter(place))
    } else {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percent_encoded_nul_is_found_wherever_it_is() {
        for text in ["/api/documents/%00", "a=%00", "/x%00y", "%00"] {
            assert!(holds_encoded_nul(text), "{text}");
        }
        for text in ["/api/documents/1", "a=%2500", "a=%0", "%10%0A"] {
            assert!(!holds_encoded_nul(text), "{text}");
        }
    }
}
