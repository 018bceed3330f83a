//! The one place that decides who asks and whether they may: a middleware on the whole
//! route table. It reads `Authorization: Bearer` (an OAuth access token `bor_oat_…` on
//! `/mcp` only, a key `bor_…`, else the service token on `/api/admin/*`), then the
//! `bor_session` cookie, then a trusted proxy's
//! header, and puts the [`Caller`] in
//! the request's extensions. With `accounts`, a request without one gets 401
//! `unauthorized` on `/api/*` and `/v1/*` (but health and sign-in), and a page sends
//! the browser to `/login?next=<path>`; `/api/admin/*` needs an admin (403
//! `forbidden`); a change authenticated by the cookie or the proxy's header (which a
//! browser sends by itself too) must come from bor's own origin (403
//! `forbidden_origin`). The caller it hands on carries the collections they may read.

use actix_web::body::{EitherBody, MessageBody};
use actix_web::dev::{ServiceRequest, ServiceResponse};
use actix_web::http::header;
use actix_web::middleware::Next;
use actix_web::{Error, HttpMessage, HttpRequest, HttpResponse, ResponseError, web};
use subtle::ConstantTimeEq;

use super::{Caller, Via, origin, secret};
use crate::config::AuthMode;
use crate::http::protocol::bearer_token;
use crate::http::{ApiError, mcp, oauth, openai::OpenAiError};
use crate::state::AppState;

/// The session cookie's name.
pub const SESSION_COOKIE: &str = "bor_session";
/// The sign-in page.
pub const LOGIN_PAGE: &str = "/login";

/// What a path is, for the rules above.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Area {
    /// Open to everybody: health, sign-in, the login page, assets, metrics.
    Open,
    /// `/api/admin/*`.
    Admin,
    /// The rest of `/api/*`.
    Api,
    /// `/v1/*`, refused in the OpenAI error shape.
    OpenAi,
    /// `/mcp`: refused without a caller with the challenge that starts OAuth.
    Mcp,
    /// The OAuth endpoints a client calls (`/oauth/token`, `/oauth/register`,
    /// `/oauth/revoke`): the client proves itself in the request; no person's
    /// credential is read there.
    OAuthClient,
    /// A page: a browser that is not signed in goes to the login page.
    Page,
}

fn area(path: &str) -> Area {
    const OPEN: &[&str] = &[
        "/api/health",
        "/api/auth/login",
        "/api/auth/providers",
        "/api/auth/oidc/start",
        "/api/auth/oidc/callback",
        LOGIN_PAGE,
        "/metrics",
        "/favicon.ico",
        mcp::METADATA_PATH,
        "/.well-known/oauth-protected-resource/mcp",
        oauth::METADATA_PATH,
    ];
    if OPEN.contains(&path) || path.starts_with("/static/") {
        Area::Open
    } else if oauth::CLIENT_PATHS.contains(&path) {
        Area::OAuthClient
    } else if path.starts_with("/api/admin/") {
        Area::Admin
    } else if path.starts_with("/api/") || path == "/api" {
        Area::Api
    } else if path.starts_with("/v1/") || path == "/v1" {
        Area::OpenAi
    } else if path == mcp::MCP_PATH {
        Area::Mcp
    } else {
        Area::Page
    }
}

/// The middleware (see the module's documentation).
pub async fn enforce(
    request: ServiceRequest,
    next: Next<impl MessageBody>,
) -> Result<ServiceResponse<EitherBody<impl MessageBody>>, Error> {
    let Some(state) = request.app_data::<web::Data<AppState>>().cloned() else {
        return Err(ApiError::Internal("the app state is missing".into()).into());
    };
    let area = area(request.path());
    if area == Area::OAuthClient {
        return next
            .call(request)
            .await
            .map(ServiceResponse::map_into_left_body);
    }
    let decided = match identify(&state, request.request()).await {
        Ok(caller) => admit(&state, request.request(), area, caller).map(|admitted| {
            admitted.map(|mut caller| {
                caller.readable = state
                    .accounts
                    .access
                    .readable(caller.user_row(), caller.role);
                caller
            })
        }),
        // Health, sign-in and the assets answer whatever credential comes along.
        Err(_) if area == Area::Open => Ok(None),
        Err(error) => Err(error),
    };
    match decided {
        Ok(Some(caller)) => {
            request.extensions_mut().insert(caller);
            next.call(request)
                .await
                .map(ServiceResponse::map_into_left_body)
        }
        Ok(None) => next
            .call(request)
            .await
            .map(ServiceResponse::map_into_left_body),
        Err(refusal) => {
            let response = refusal_response(&state, request.request(), area, refusal);
            Ok(request.into_response(response).map_into_right_body())
        }
    }
}

/// Whether the caller (or nobody) may go on to `area`: the caller to hand on, or the
/// refusal.
fn admit(
    state: &AppState,
    request: &HttpRequest,
    area: Area,
    caller: Option<Caller>,
) -> Result<Option<Caller>, ApiError> {
    let accounts = state.accounts.mode == AuthMode::Accounts;
    // A page of another origin reaches `/mcp` only with a key or token it holds itself
    // (CORS sends no cookie), or without one to be told how to get one (the 401). In
    // `off` mode every request is the admin: no page of another site gets an answer.
    let by_bearer = |caller: &Caller| matches!(caller.via, Via::ApiKey(_) | Via::OAuthToken(_));
    if area == Area::Mcp
        && origin::from_other_origin(request, state.config.public_url.as_ref())
        && !(accounts && caller.as_ref().is_none_or(by_bearer))
    {
        return Err(ApiError::ForbiddenOrigin);
    }
    match caller {
        Some(caller) => {
            let by_browser = matches!(caller.via, Via::Session(_) | Via::TrustedProxy);
            if by_browser
                && origin::changes_something(request.method())
                && !origin::from_own_origin(request, state.config.public_url.as_ref())
            {
                return Err(ApiError::ForbiddenOrigin);
            }
            if accounts && area == Area::Admin && !caller.is_admin() {
                return Err(ApiError::Forbidden);
            }
            Ok(Some(caller))
        }
        None if !accounts || area == Area::Open => Ok(None),
        None => Err(ApiError::NotSignedIn),
    }
}

/// Who asks: a key, the service token (on `/api/admin/*`), the session cookie, a
/// trusted proxy's header, or in `off` mode `local`. A bearer token that is none of
/// them is refused (401); a cookie that is not a live session counts as no cookie.
async fn identify(state: &AppState, request: &HttpRequest) -> Result<Option<Caller>, ApiError> {
    let accounts = &state.accounts;
    if accounts.mode == AuthMode::Off {
        return Ok(accounts.local.clone());
    }
    let bearer = request
        .headers()
        .get(header::AUTHORIZATION)
        .and_then(|value| value.to_str().ok())
        .and_then(bearer_token);
    if let Some(token) = bearer {
        if token.starts_with(secret::ACCESS_TOKEN_PREFIX) {
            return oauth_caller(state, request, token).await;
        }
        if token.starts_with(secret::KEY_PREFIX) {
            let Some(hash) = secret::parse_api_key(token) else {
                return Err(ApiError::NotSignedIn);
            };
            return match accounts.cache.key_caller(&hash).await? {
                Some(caller) => Ok(Some(caller)),
                None => Err(ApiError::NotSignedIn),
            };
        }
        let service_token = state.config.admin_token.as_ref();
        let is_service_token = service_token.is_some_and(|expected| {
            bool::from(token.as_bytes().ct_eq(expected.expose().as_bytes()))
        });
        if is_service_token && area(request.path()) == Area::Admin {
            return Ok(Some(Caller::service()));
        }
        // An admin page that still sends a token it kept signs in by its cookie.
        if !is_service_token {
            return Err(ApiError::NotSignedIn);
        }
    }
    let session = request
        .cookie(SESSION_COOKIE)
        .and_then(|cookie| secret::parse_session_cookie(cookie.value()));
    if let Some(hash) = session
        && let Some(caller) = accounts.cache.session_caller(&hash).await?
    {
        return Ok(Some(caller));
    }
    match &accounts.proxy {
        Some(proxy) => Ok(proxy.caller(request, &state.pool, &accounts.cache).await?),
        None => Ok(None),
    }
}

/// The person an OAuth access token acts for: on `/mcp` only, and only the `/mcp` it
/// was issued for (RFC 8707); anywhere else the token is no credential (401).
async fn oauth_caller(
    state: &AppState,
    request: &HttpRequest,
    token: &str,
) -> Result<Option<Caller>, ApiError> {
    let hash = secret::parse_prefixed(secret::ACCESS_TOKEN_PREFIX, token);
    let resource = mcp::resource_url(state, request);
    let (Some(hash), Some(resource), Area::Mcp) = (hash, resource, area(request.path())) else {
        return Err(ApiError::NotSignedIn);
    };
    match state
        .accounts
        .cache
        .token_caller(&hash, resource.as_str())
        .await?
    {
        Some(caller) => Ok(Some(caller)),
        None => Err(ApiError::NotSignedIn),
    }
}

/// A refusal in the shape of its area: a redirect to the login page for a page that
/// needs a caller, the OpenAI error under `/v1`, on `/mcp` a 401 whose challenge names
/// the protected-resource metadata, the API error elsewhere.
fn refusal_response(
    state: &AppState,
    request: &HttpRequest,
    area: Area,
    refusal: ApiError,
) -> HttpResponse {
    match (area, &refusal) {
        (Area::Mcp, ApiError::NotSignedIn) => {
            let mut response = refusal.error_response();
            response
                .headers_mut()
                .insert(header::WWW_AUTHENTICATE, mcp::challenge(state, request));
            response
        }
        (Area::Page, ApiError::NotSignedIn) => HttpResponse::Found()
            .insert_header((header::LOCATION, login_location(request)))
            .finish(),
        (Area::OpenAi, _) => OpenAiError::from(refusal).error_response(),
        _ => refusal.error_response(),
    }
}

/// `/login?next=<the path asked for>`, the path percent-encoded.
fn login_location(request: &HttpRequest) -> String {
    let uri = request.uri();
    let wanted = uri
        .path_and_query()
        .map_or_else(|| uri.path().to_owned(), |pq| pq.as_str().to_owned());
    let next: String = url::form_urlencoded::byte_serialize(wanted.as_bytes()).collect();
    format!("{LOGIN_PAGE}?next={next}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_fall_in_their_areas() {
        assert_eq!(area("/api/health"), Area::Open);
        assert_eq!(area("/api/auth/login"), Area::Open);
        assert_eq!(area("/api/auth/providers"), Area::Open);
        assert_eq!(area("/api/auth/oidc/callback"), Area::Open);
        assert_eq!(area("/login"), Area::Open);
        assert_eq!(area("/static/app.js"), Area::Open);
        assert_eq!(area("/api/auth/me"), Area::Api);
        assert_eq!(area("/api/healthz"), Area::Api);
        assert_eq!(area("/api/admin/users"), Area::Admin);
        assert_eq!(area("/api/adminx"), Area::Api);
        assert_eq!(area("/v1/models"), Area::OpenAi);
        assert_eq!(area("/mcp"), Area::Mcp);
        assert_eq!(area("/mcpx"), Area::Page);
        assert_eq!(
            area("/.well-known/oauth-protected-resource/mcp"),
            Area::Open
        );
        assert_eq!(area("/oauth/token"), Area::OAuthClient);
        assert_eq!(area("/oauth/authorize"), Area::Page);
        assert_eq!(area("/.well-known/oauth-authorization-server"), Area::Open);
        assert_eq!(area("/"), Area::Page);
        assert_eq!(area("/admin"), Area::Page);
        assert_eq!(area("/documents/3"), Area::Page);
    }
}
