//! bor as the OAuth 2.1 authorization server of its own `/mcp` (docs/MCP.md, "OAuth"):
//! the metadata document (RFC 8414), dynamic client registration (RFC 7591), the
//! authorization endpoint with its consent page, the token endpoint (codes with PKCE
//! S256, rotated refresh tokens) and revocation (RFC 7009). The tokens act for the
//! person who allowed them, on `/mcp` only (`http/door.rs`).
//!
//! - `registration.rs`: `POST /oauth/register`
//! - `authorization.rs`: `GET`/`POST /oauth/authorize`, the consent page, its error page
//! - `tokens.rs`: `POST /oauth/token`, `POST /oauth/revoke`, the client's proof

mod authorization;
mod registration;
mod tokens;

use std::collections::HashMap;

use actix_web::http::{StatusCode, header};
use actix_web::{HttpRequest, HttpResponse, ResponseError, get, web};
use serde::Serialize;
use url::Url;
use utoipa::ToSchema;

use super::body::read_bytes;
use super::error::ApiError;
use crate::auth::public_base;
use crate::state::AppState;

pub use authorization::{authorize, consent};
pub use registration::register;
pub use tokens::{revoke, token};

/// Where the authorization server's metadata is (RFC 8414).
pub const METADATA_PATH: &str = "/.well-known/oauth-authorization-server";
pub const AUTHORIZE_PATH: &str = "/oauth/authorize";
pub const TOKEN_PATH: &str = "/oauth/token";
pub const REGISTER_PATH: &str = "/oauth/register";
pub const REVOKE_PATH: &str = "/oauth/revoke";
/// The endpoints a client calls by itself, proving who it is in the request.
pub const CLIENT_PATHS: [&str; 3] = [TOKEN_PATH, REGISTER_PATH, REVOKE_PATH];

/// How long an access token acts.
const ACCESS_TOKEN_LIFETIME: chrono::TimeDelta = chrono::TimeDelta::hours(1);
/// How long a refresh token may wait to be exchanged.
const REFRESH_TOKEN_LIFETIME: chrono::TimeDelta = chrono::TimeDelta::days(30);
/// How long an authorization code may wait to be exchanged.
const CODE_LIFETIME: chrono::TimeDelta = chrono::TimeDelta::seconds(60);
/// The most bytes a registration or a form body has.
const MAX_OAUTH_BODY_BYTES: usize = 16 * 1024;

/// An OAuth refusal: `{"error","error_description"}` with its status (RFC 6749 §5.2,
/// RFC 7591 §3.2.2), never cached.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{code}: {description}")]
pub struct OAuthError {
    status: StatusCode,
    code: &'static str,
    description: String,
}

/// The shape of an OAuth refusal.
#[derive(Serialize, ToSchema)]
pub struct OAuthErrorBody {
    error: String,
    error_description: String,
}

impl OAuthError {
    fn new(status: StatusCode, code: &'static str, description: impl Into<String>) -> Self {
        OAuthError {
            status,
            code,
            description: description.into(),
        }
    }

    fn bad(code: &'static str, description: impl Into<String>) -> Self {
        OAuthError::new(StatusCode::BAD_REQUEST, code, description)
    }

    fn invalid_request(description: impl Into<String>) -> Self {
        OAuthError::bad("invalid_request", description)
    }

    fn invalid_grant(description: impl Into<String>) -> Self {
        OAuthError::bad("invalid_grant", description)
    }

    fn invalid_client(description: impl Into<String>) -> Self {
        OAuthError::new(StatusCode::UNAUTHORIZED, "invalid_client", description)
    }

    /// A refusal of bor's own (the database down, a body too large) as OAuth words it:
    /// its status, with `code`, or `server_error` when it is bor's fault.
    fn from_api(error: &ApiError, code: &'static str) -> Self {
        let status = error.status_code();
        let code = if status.is_server_error() {
            "server_error"
        } else {
            code
        };
        OAuthError::new(status, code, error.public_message())
    }
}

impl ResponseError for OAuthError {
    fn status_code(&self) -> StatusCode {
        self.status
    }

    fn error_response(&self) -> HttpResponse {
        let mut response = HttpResponse::build(self.status);
        response.insert_header((header::CACHE_CONTROL, "no-store"));
        if self.status == StatusCode::UNAUTHORIZED {
            response.insert_header((header::WWW_AUTHENTICATE, "Basic realm=\"bor\""));
        }
        response.json(OAuthErrorBody {
            error: self.code.to_owned(),
            error_description: self.description.clone(),
        })
    }
}

impl From<crate::db::DbError> for OAuthError {
    fn from(error: crate::db::DbError) -> Self {
        OAuthError::from_api(&ApiError::from(error), "server_error")
    }
}

/// The parameters of a query string or a form body, each given at most once (RFC 6749
/// §3.1).
#[derive(Debug, Default)]
struct Params(HashMap<String, String>);

impl Params {
    fn parse(text: &[u8]) -> Result<Params, OAuthError> {
        let mut params = HashMap::new();
        for (name, value) in url::form_urlencoded::parse(text) {
            if params.insert(name.to_string(), value.to_string()).is_some() {
                return Err(OAuthError::invalid_request(format!(
                    "`{name}` is given more than once"
                )));
            }
        }
        Ok(Params(params))
    }

    fn get(&self, name: &str) -> Option<&str> {
        self.0
            .get(name)
            .map(String::as_str)
            .filter(|v| !v.is_empty())
    }

    fn required(&self, name: &str) -> Result<&str, OAuthError> {
        self.get(name)
            .ok_or_else(|| OAuthError::invalid_request(format!("`{name}` is missing")))
    }
}

/// A form body (`application/x-www-form-urlencoded`), at most 16 KiB.
async fn read_form(
    request: &HttpRequest,
    payload: web::Payload,
    state: &AppState,
) -> Result<Params, OAuthError> {
    let is_form = request
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|value| value.to_str().ok())
        .and_then(|value| value.split(';').next())
        .is_some_and(|mime| {
            mime.trim()
                .eq_ignore_ascii_case("application/x-www-form-urlencoded")
        });
    if !is_form {
        return Err(OAuthError::invalid_request(
            "the body must be application/x-www-form-urlencoded",
        ));
    }
    let body = read_bytes(
        request,
        payload,
        MAX_OAUTH_BODY_BYTES,
        state.config.request_body_timeout,
    )
    .await
    .map_err(|error| OAuthError::from_api(&error, "invalid_request"))?;
    if super::nul::holds_nul(&body) {
        return Err(OAuthError::invalid_request(
            "the body holds a NUL character",
        ));
    }
    Params::parse(&body)
}

/// bor as an authorization server: `<public>`, without a trailing slash.
fn issuer(state: &AppState, request: &HttpRequest) -> Option<String> {
    let base = public_base(request, state.config.public_url.as_ref())?;
    Some(base.as_str().trim_end_matches('/').to_owned())
}

/// `<public>` and `path`.
fn endpoint(state: &AppState, request: &HttpRequest, path: &str) -> Option<Url> {
    public_base(request, state.config.public_url.as_ref())?
        .join(path)
        .ok()
}

/// RFC 8414's metadata of bor as the authorization server of `/mcp`.
#[derive(Serialize, ToSchema)]
pub struct ServerMetadata {
    issuer: String,
    authorization_endpoint: String,
    token_endpoint: String,
    registration_endpoint: String,
    revocation_endpoint: String,
    response_types_supported: [&'static str; 1],
    grant_types_supported: [&'static str; 2],
    code_challenge_methods_supported: [&'static str; 1],
    token_endpoint_auth_methods_supported: [&'static str; 3],
    revocation_endpoint_auth_methods_supported: [&'static str; 3],
}

/// How a client may prove itself at the token and revocation endpoints.
const CLIENT_AUTH_METHODS: [&str; 3] = ["none", "client_secret_post", "client_secret_basic"];

/// `GET /.well-known/oauth-authorization-server`: bor's endpoints and what they accept
/// (RFC 8414).
#[utoipa::path(
    tag = "mcp",
    responses(
        (status = 200, description = "the authorization server's metadata", body = ServerMetadata),
        (status = 400, description = "the request has no Host to make addresses with"),
    )
)]
#[get("/.well-known/oauth-authorization-server")]
pub async fn server_metadata(request: HttpRequest, state: web::Data<AppState>) -> HttpResponse {
    let at = |path| endpoint(&state, &request, path).map(String::from);
    let (
        Some(issuer),
        Some(authorization_endpoint),
        Some(token_endpoint),
        Some(registration_endpoint),
        Some(revocation_endpoint),
    ) = (
        issuer(&state, &request),
        at(AUTHORIZE_PATH),
        at(TOKEN_PATH),
        at(REGISTER_PATH),
        at(REVOKE_PATH),
    )
    else {
        return HttpResponse::BadRequest().finish();
    };
    HttpResponse::Ok()
        .insert_header((header::CACHE_CONTROL, "max-age=3600"))
        .json(ServerMetadata {
            issuer,
            authorization_endpoint,
            token_endpoint,
            registration_endpoint,
            revocation_endpoint,
            response_types_supported: ["code"],
            grant_types_supported: ["authorization_code", "refresh_token"],
            code_challenge_methods_supported: ["S256"],
            token_endpoint_auth_methods_supported: CLIENT_AUTH_METHODS,
            revocation_endpoint_auth_methods_supported: CLIENT_AUTH_METHODS,
        })
}
