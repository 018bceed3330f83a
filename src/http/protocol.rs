//! What every response and request gets, whatever the route: headers that keep
//! browsers from sniffing or leaking, and `HEAD` answered as `GET` without a body.

use actix_web::Error;
use actix_web::body::MessageBody;
use actix_web::dev::{ServiceRequest, ServiceResponse};
use actix_web::http::Method;
use actix_web::http::header::{self, HeaderValue};
use actix_web::middleware::Next;

/// `HEAD` is routed as `GET` (monitors check pages and health with it); the server
/// sends the head of the answer only, as HTTP says.
pub async fn head_as_get(
    mut request: ServiceRequest,
    next: Next<impl MessageBody>,
) -> Result<ServiceResponse<impl MessageBody>, Error> {
    if request.method() == Method::HEAD {
        request.head_mut().method = Method::GET;
    }
    next.call(request).await
}

/// `X-Content-Type-Options: nosniff` and `Referrer-Policy: no-referrer` on every
/// response; pages add their own policy (see `static_files`).
pub async fn security_headers(
    request: ServiceRequest,
    next: Next<impl MessageBody>,
) -> Result<ServiceResponse<impl MessageBody>, Error> {
    let mut response = next.call(request).await?;
    let headers = response.headers_mut();
    headers.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    headers.insert(
        header::REFERRER_POLICY,
        HeaderValue::from_static("no-referrer"),
    );
    Ok(response)
}

/// The token of an `Authorization: Bearer …` header; the scheme is matched in any case
/// (RFC 9110 §11.1).
pub fn bearer_token(value: &str) -> Option<&str> {
    let (scheme, token) = value.trim_start().split_once(' ')?;
    scheme
        .eq_ignore_ascii_case("bearer")
        .then(|| token.trim())
        .filter(|token| !token.is_empty())
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    proptest! {
        #[test]
        fn any_header_value_gives_a_trimmed_token_or_none(value in "(?s).{0,40}") {
            if let Some(token) = bearer_token(&value) {
                prop_assert!(!token.is_empty());
                prop_assert_eq!(token, token.trim());
                prop_assert!(value.to_ascii_lowercase().contains("bearer"));
            }
        }
    }

    #[test]
    fn the_bearer_scheme_is_matched_in_any_case() {
        assert_eq!(bearer_token("Bearer abc"), Some("abc"));
        assert_eq!(bearer_token("bearer abc"), Some("abc"));
        assert_eq!(bearer_token("BEARER  abc "), Some("abc"));
        assert_eq!(bearer_token("Basic abc"), None);
        assert_eq!(bearer_token("Bearer"), None);
        assert_eq!(bearer_token("Bearer   "), None);
        assert_eq!(bearer_token("Bearerabc"), None);
    }
}
