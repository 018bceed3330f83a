//! The `Host` check (docs/PROTOCOL.md, "Hosts"): a web page on another site cannot
//! drive a bor it reaches through a name of its own that resolves to bor's address
//! (DNS rebinding), because such a request names that site's host. Accepted: IP
//! addresses (a page whose origin is an IP address is served from that address, so
//! naming one is no rebinding), `localhost` and `*.localhost`, the host of
//! `BOR_PUBLIC_URL` and the names of `BOR_ALLOWED_HOSTS`; ports are not compared. Every
//! other host gets 421 `misdirected_host` on every route. A request without a `Host`
//! (HTTP/1.0) is accepted: no browser sends one. The names allowed are the
//! configuration's ([`AllowedHosts`](crate::config::AllowedHosts)).

use actix_web::body::{EitherBody, MessageBody};
use actix_web::dev::{ServiceRequest, ServiceResponse};
use actix_web::http::Uri;
use actix_web::http::header;
use actix_web::http::uri::Authority;
use actix_web::middleware::Next;
use actix_web::{Error, web};

use super::ApiError;
use crate::state::AppState;

/// The longest `Host` a refusal quotes in its log line.
const LOGGED_HOST_CHARS: usize = 100;

/// The middleware (`middleware::from_fn(allowed_host)`): refuses a request whose `Host`
/// header, or whose target's authority (an absolute URI, HTTP/2's `:authority`), names
/// a host bor is not reached by.
pub async fn allowed_host(
    request: ServiceRequest,
    next: Next<impl MessageBody>,
) -> Result<ServiceResponse<EitherBody<impl MessageBody>>, Error> {
    let refused = request.app_data::<web::Data<AppState>>().and_then(|state| {
        let allowed = &state.allowed_hosts;
        let header = request.headers().get(header::HOST).map(|value| {
            value
                .to_str()
                .ok()
                .filter(|host| allowed.allows(host))
                .is_some()
        });
        let target = authority_of(request.uri()).map(|host| allowed.allows(host));
        let accepted = header.unwrap_or(true) && target.unwrap_or(true);
        (!accepted).then(|| shown_host(&request))
    });
    match refused {
        None => Ok(next.call(request).await?.map_into_left_body()),
        Some(host) => {
            tracing::warn!(%host, "request for a host bor is not reached by refused");
            let error = ApiError::MisdirectedHost(format!(
                "bor is not reached by the host {host:?}: set BOR_PUBLIC_URL or BOR_ALLOWED_HOSTS to accept it"
            ));
            let response = super::refusal(request.path(), error);
            Ok(request.into_response(response).map_into_right_body())
        }
    }
}

fn authority_of(uri: &Uri) -> Option<&str> {
    uri.authority().map(Authority::as_str)
}

/// The host a refused request named, cut for the log and the message.
fn shown_host(request: &ServiceRequest) -> String {
    let host = request
        .headers()
        .get(header::HOST)
        .map(|value| String::from_utf8_lossy(value.as_bytes()).into_owned())
        .or_else(|| authority_of(request.uri()).map(str::to_owned))
        .unwrap_or_default();
    bor_actors::text::prefix_chars(&host, LOGGED_HOST_CHARS).to_owned()
}
