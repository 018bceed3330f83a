//! `POST /oauth/register`: dynamic client registration (RFC 7591). Any program may
//! register; what it gets is a `client_id` (and a secret for a confidential client),
//! which lets it ask a person for consent and nothing more.

use std::net::IpAddr;

use actix_web::http::StatusCode;
use actix_web::{HttpRequest, HttpResponse, post, web};
use chrono::Utc;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use url::Url;
use utoipa::ToSchema;
use uuid::Uuid;

use super::{CLIENT_AUTH_METHODS, MAX_OAUTH_BODY_BYTES, OAuthError, OAuthErrorBody};
use crate::audit::{self, Action, Actor, Event};
use crate::auth::secret;
use crate::db::oauth::{self, ClientRow};
use crate::http::body::read_json_bytes;
use crate::state::AppState;

/// Redirect URIs a client registers at most.
const MAX_REDIRECT_URIS: usize = 20;
/// Characters of a redirect URI at most.
const MAX_REDIRECT_URI_CHARS: usize = 2000;
/// Characters of a client's name at most.
const MAX_CLIENT_NAME_CHARS: usize = 100;
/// The name of a client that gives none.
const UNNAMED_CLIENT: &str = "an unnamed client";

/// What a client registers (RFC 7591 §2); other fields are read by nobody.
#[derive(Deserialize, ToSchema)]
pub struct Registration {
    /// `https` addresses, or `http` on a loopback host; 1 to 20.
    redirect_uris: Vec<String>,
    /// The name the consent page shows (at most 100 characters).
    client_name: Option<String>,
    /// `none` (a public client), `client_secret_post` or `client_secret_basic` (the
    /// default, as RFC 7591 has it).
    token_endpoint_auth_method: Option<String>,
    /// A subset of `authorization_code`, `refresh_token`.
    grant_types: Option<Vec<String>>,
    /// `code` only.
    response_types: Option<Vec<String>>,
}

/// A registered client (RFC 7591 §3.2.1); the secret is shown this once.
#[derive(Serialize, ToSchema)]
pub struct RegisteredClient {
    client_id: String,
    client_id_issued_at: i64,
    #[serde(skip_serializing_if = "Option::is_none")]
    client_secret: Option<String>,
    /// `0`: the secret does not expire. Present with a secret only.
    #[serde(skip_serializing_if = "Option::is_none")]
    client_secret_expires_at: Option<i64>,
    client_name: String,
    redirect_uris: Vec<String>,
    token_endpoint_auth_method: String,
    grant_types: [&'static str; 2],
    response_types: [&'static str; 1],
}

fn invalid_metadata(description: impl Into<String>) -> OAuthError {
    OAuthError::bad("invalid_client_metadata", description)
}

fn invalid_redirect(description: impl Into<String>) -> OAuthError {
    OAuthError::bad("invalid_redirect_uri", description)
}

/// Whether `uri` may receive codes: `https`, or `http` on a loopback host (a program on
/// the person's own machine), with no fragment.
fn redirect_uri_allowed(uri: &str) -> Result<(), OAuthError> {
    if uri.chars().count() > MAX_REDIRECT_URI_CHARS {
        return Err(invalid_redirect(format!(
            "a redirect URI has at most {MAX_REDIRECT_URI_CHARS} characters"
        )));
    }
    let url = Url::parse(uri)
        .map_err(|error| invalid_redirect(format!("`{uri}` is not an address: {error}")))?;
    if url.fragment().is_some() {
        return Err(invalid_redirect(format!("`{uri}` has a fragment")));
    }
    let loopback = match url.host() {
        Some(url::Host::Domain(domain)) => domain.eq_ignore_ascii_case("localhost"),
        Some(url::Host::Ipv4(address)) => IpAddr::V4(address).is_loopback(),
        Some(url::Host::Ipv6(address)) => IpAddr::V6(address).is_loopback(),
        None => false,
    };
    match url.scheme() {
        "https" if url.host().is_some() => Ok(()),
        "http" if loopback => Ok(()),
        _ => Err(invalid_redirect(format!(
            "`{uri}` is neither https nor http on a loopback host"
        ))),
    }
}

/// The registration checked: (name, redirect URIs, auth method).
fn checked(registration: Registration) -> Result<(String, Vec<String>, String), OAuthError> {
    if registration.redirect_uris.is_empty() {
        return Err(invalid_redirect("`redirect_uris` names no address"));
    }
    if registration.redirect_uris.len() > MAX_REDIRECT_URIS {
        return Err(invalid_redirect(format!(
            "a client registers at most {MAX_REDIRECT_URIS} redirect URIs"
        )));
    }
    for uri in &registration.redirect_uris {
        redirect_uri_allowed(uri)?;
    }
    let name = registration
        .client_name
        .as_deref()
        .map(str::trim)
        .filter(|name| !name.is_empty())
        .unwrap_or(UNNAMED_CLIENT);
    if name.chars().count() > MAX_CLIENT_NAME_CHARS || name.chars().any(char::is_control) {
        return Err(invalid_metadata(format!(
            "`client_name` has at most {MAX_CLIENT_NAME_CHARS} characters, none of them control characters"
        )));
    }
    let method = registration
        .token_endpoint_auth_method
        .unwrap_or_else(|| "client_secret_basic".to_owned());
    if !CLIENT_AUTH_METHODS.contains(&method.as_str()) {
        return Err(invalid_metadata(format!(
            "`token_endpoint_auth_method` is one of {}",
            CLIENT_AUTH_METHODS.join(", ")
        )));
    }
    let grants_known = registration
        .grant_types
        .iter()
        .flatten()
        .all(|grant| grant == "authorization_code" || grant == "refresh_token");
    if !grants_known {
        return Err(invalid_metadata(
            "`grant_types` may name `authorization_code` and `refresh_token` only",
        ));
    }
    if !registration
        .response_types
        .iter()
        .flatten()
        .all(|response| response == "code")
    {
        return Err(invalid_metadata("`response_types` may name `code` only"));
    }
    Ok((name.to_owned(), registration.redirect_uris, method))
}

/// `POST /oauth/register` (RFC 7591): 201 with the client's `client_id` (and its
/// `client_secret`, shown once, unless `token_endpoint_auth_method` is `none`).
#[utoipa::path(
    tag = "mcp",
    request_body = Registration,
    responses(
        (status = 201, description = "registered", body = RegisteredClient),
        (status = 400, description = "`invalid_redirect_uri` (not https nor http on a loopback host, a fragment, none or over 20) or `invalid_client_metadata`", body = OAuthErrorBody),
        (status = 413, description = "`invalid_client_metadata`: the body is over 16 KiB", body = OAuthErrorBody),
    )
)]
#[post("/oauth/register")]
pub async fn register(
    request: HttpRequest,
    payload: web::Payload,
    state: web::Data<AppState>,
) -> Result<HttpResponse, OAuthError> {
    let body = read_json_bytes(
        &request,
        payload,
        MAX_OAUTH_BODY_BYTES,
        state.config.request_body_timeout,
    )
    .await
    .map_err(|error| OAuthError::from_api(&error, "invalid_client_metadata"))?;
    if crate::http::nul::holds_nul(&body) {
        return Err(invalid_metadata("the body holds a NUL character"));
    }
    let value: Value = serde_json::from_slice(&body)
        .map_err(|error| invalid_metadata(format!("the body is not JSON: {error}")))?;
    if !value.is_object() {
        return Err(invalid_metadata("the body is not a JSON object"));
    }
    let registration: Registration =
        serde_json::from_value(value).map_err(|error| invalid_metadata(error.to_string()))?;
    let (name, redirect_uris, method) = checked(registration)?;
    let secret = match method.as_str() {
        "none" => None,
        _ => Some(
            secret::new_prefixed(secret::CLIENT_SECRET_PREFIX).map_err(|error| {
                OAuthError::new(
                    StatusCode::INTERNAL_SERVER_ERROR,
                    "server_error",
                    error.to_string(),
                )
            })?,
        ),
    };
    let row = ClientRow {
        id: Uuid::new_v4().to_string(),
        name,
        redirect_uris,
        auth_method: method,
        secret_sha256: secret.as_ref().map(|secret| secret.sha256.clone()),
        created_at: Utc::now(),
    };
    let mut conn = state.pool.get().await?;
    oauth::insert_client(&mut conn, &row).await?;
    let registered = Event::of(&request, Action::OAuthClientRegistered, &row.name)
        .by(Actor::named("OAuth client"))
        .with(serde_json::json!({
            "client_id": row.id,
            "redirect_uris": row.redirect_uris,
            "token_endpoint_auth_method": row.auth_method,
        }));
    audit::record(&state.pool, registered).await;
    Ok(HttpResponse::Created()
        .insert_header((actix_web::http::header::CACHE_CONTROL, "no-store"))
        .json(RegisteredClient {
            client_id: row.id,
            client_id_issued_at: row.created_at.timestamp(),
            client_secret_expires_at: secret.as_ref().map(|_| 0),
            client_secret: secret.map(|secret| secret.token),
            client_name: row.name,
            redirect_uris: row.redirect_uris,
            token_endpoint_auth_method: row.auth_method,
            grant_types: ["authorization_code", "refresh_token"],
            response_types: ["code"],
        }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn redirect_uris_are_https_or_loopback_http() {
        for allowed in [
            "https://claude.ai/api/mcp/auth_callback",
            "http://127.0.0.1:33418/callback",
            "http://localhost:6274/oauth/callback",
            "http://[::1]:8080/",
        ] {
            assert!(redirect_uri_allowed(allowed).is_ok(), "{allowed}");
        }
        for refused in [
            "http://example.com/callback",
            "http://127.0.0.1.example.com/",
            "javascript:alert(1)",
            "https://example.com/cb#fragment",
            "cursor://callback",
            "not an address",
        ] {
            assert_eq!(
                redirect_uri_allowed(refused).map_err(|error| error.code),
                Err("invalid_redirect_uri"),
                "{refused}"
            );
        }
    }
}
