//! The client's address of a request (the rule is `auth/client_address.rs`'s): found
//! once, by the request id's middleware, and kept in the request for the sign-in
//! limiter, the audit trail and the request log; and the refusal of a trusted proxy's
//! request that carries `X-Forwarded-For` more than once.

use std::net::IpAddr;

use actix_web::body::{EitherBody, MessageBody};
use actix_web::dev::{ServiceRequest, ServiceResponse};
use actix_web::middleware::Next;
use actix_web::{Error, HttpMessage, HttpRequest, web};
use ipnet::IpNet;

use super::door::RequestHeaders;
use super::error::ApiError;
use super::refusal;
use crate::auth::client_address::{ClientAddress, forwarded_client, repeats_forwarded_for};
use crate::state::AppState;

/// Where `request` comes from: its TCP peer, or the client a trusted proxy names.
pub fn client_address(request: &HttpRequest) -> Option<IpAddr> {
    if let Some(ClientAddress(found)) = request.extensions().get::<ClientAddress>() {
        return Some(*found);
    }
    let peer = request.peer_addr()?.ip();
    Some(forwarded_client(
        peer,
        &RequestHeaders(request.headers()),
        trusted_proxies(request),
    ))
}

/// Finds `request`'s client address and keeps it in the request.
pub fn keep_client_address(request: &HttpRequest) -> Option<IpAddr> {
    let found = client_address(request)?;
    request.extensions_mut().insert(ClientAddress(found));
    Some(found)
}

fn trusted_proxies(request: &HttpRequest) -> &[IpNet] {
    request
        .app_data::<web::Data<AppState>>()
        .map_or(&[][..], |state| state.config.trusted_proxies.as_slice())
}

/// The middleware (`middleware::from_fn(refuse_repeated_forwarded_for)`): 400
/// `repeated_header` for a request from a trusted proxy with `X-Forwarded-For` more
/// than once.
pub async fn refuse_repeated_forwarded_for(
    request: ServiceRequest,
    next: Next<impl MessageBody>,
) -> Result<ServiceResponse<EitherBody<impl MessageBody>>, Error> {
    let peer = request.peer_addr().map(|peer| peer.ip());
    let repeated = peer.is_some_and(|peer| {
        repeats_forwarded_for(
            peer,
            &RequestHeaders(request.headers()),
            trusted_proxies(request.request()),
        )
    });
    if repeated {
        tracing::warn!(
            address = ?peer,
            "a request from a trusted proxy carried X-Forwarded-For more than once and is refused (the proxy must send one list)"
        );
        let response = refusal(request.path(), ApiError::RepeatedHeader("X-Forwarded-For"));
        return Ok(request.into_response(response).map_into_right_body());
    }
    Ok(next.call(request).await?.map_into_left_body())
}
