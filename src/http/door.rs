//! The door: a middleware on the whole route table that reads what a request presents
//! (the bearer token, the `bor_session` cookie, the headers, the peer, the path's
//! area), lets the auth room decide who asks ([`Accounts::decide`](crate::auth::Accounts::decide)),
//! puts the [`Caller`] and the admin verdict in the request's extensions, and answers a
//! refusal once in its area's shape: 401 `unauthorized` on `/api/*`, the OpenAI error
//! under `/v1/*`, on `/mcp` a 401 whose challenge starts OAuth, and for a page the
//! redirect to `/login?next=<path>`; 403 `forbidden` and `forbidden_origin` alike.

use actix_web::body::{EitherBody, MessageBody};
use actix_web::dev::{Payload, ServiceRequest, ServiceResponse};
use actix_web::http::header::{self, HeaderMap};
use actix_web::middleware::Next;
use actix_web::{Error, FromRequest, HttpMessage, HttpRequest, HttpResponse, ResponseError, web};

use super::protocol::bearer_token;
use super::{ApiError, mcp, oauth, openai::OpenAiError};
use crate::auth::{AdminVerdict, Area, Caller, Denial, Headers, Presented, SESSION_COOKIE, origin};
use crate::state::AppState;

/// The sign-in page.
pub const LOGIN_PAGE: &str = "/login";

/// The area of a path, for the auth room's rules.
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

/// A request's headers, as the trusted proxy's sign-in reads them.
pub(super) struct RequestHeaders<'a>(pub(super) &'a HeaderMap);

impl Headers for RequestHeaders<'_> {
    fn values(&self, name: &str) -> Vec<&[u8]> {
        self.0.get_all(name).map(|value| value.as_bytes()).collect()
    }
}

/// The middleware (see the module's documentation).
pub async fn door(
    request: ServiceRequest,
    next: Next<impl MessageBody>,
) -> Result<ServiceResponse<EitherBody<impl MessageBody>>, Error> {
    let Some(state) = request.app_data::<web::Data<AppState>>().cloned() else {
        return Err(ApiError::Internal("the app state is missing".into()).into());
    };
    let area = area(request.path());
    let (decided, admin) = {
        let http_request = request.request();
        let bearer = http_request
            .headers()
            .get(header::AUTHORIZATION)
            .and_then(|value| value.to_str().ok())
            .and_then(bearer_token);
        let cookie = http_request.cookie(SESSION_COOKIE);
        let mcp_resource = match area {
            Area::Mcp => mcp::resource_url(&state, http_request),
            _ => None,
        };
        let public_url = state.config.public_url.as_ref();
        let presented = Presented {
            area,
            bearer,
            session_cookie: cookie.as_ref().map(|cookie| cookie.value()),
            peer: http_request.peer_addr().map(|address| address.ip()),
            headers: &RequestHeaders(http_request.headers()),
            mcp_resource: mcp_resource.as_ref().map(url::Url::as_str),
            cross_site_change: origin::changes_something(http_request.method())
                && !origin::from_own_origin(http_request, public_url),
            from_other_origin: area == Area::Mcp
                && origin::from_other_origin(http_request, public_url),
        };
        let decided = state.accounts.decide(&state.pool, &presented).await;
        let admin = match (&decided, area) {
            (Ok(caller), Area::Admin) => {
                Some(state.accounts.admin_verdict(caller.as_ref(), bearer))
            }
            _ => None,
        };
        (decided, admin)
    };
    match decided {
        Ok(caller) => {
            if let Some(caller) = caller {
                request.extensions_mut().insert(caller);
            }
            if let Some(admin) = admin {
                request.extensions_mut().insert(admin);
            }
            next.call(request)
                .await
                .map(ServiceResponse::map_into_left_body)
        }
        Err(denial) => {
            let response = refusal_response(&state, request.request(), area, denial.into());
            Ok(request.into_response(response).map_into_right_body())
        }
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

/// A handler's caller, as the door decided it.
impl FromRequest for Caller {
    type Error = ApiError;
    type Future = std::future::Ready<Result<Caller, ApiError>>;

    fn from_request(request: &HttpRequest, _: &mut Payload) -> Self::Future {
        std::future::ready(
            request
                .extensions()
                .get::<Caller>()
                .cloned()
                .ok_or(ApiError::NotSignedIn),
        )
    }
}

/// Whether the request may use the admin routes, as the door found; a route outside
/// `/api/admin/*` never is one.
pub(super) fn admin_verdict(request: &HttpRequest) -> Result<(), ApiError> {
    let verdict = request
        .extensions()
        .get::<AdminVerdict>()
        .copied()
        .unwrap_or(AdminVerdict::NotSignedIn);
    verdict.check().map_err(ApiError::from)
}

impl From<Denial> for ApiError {
    fn from(denial: Denial) -> Self {
        match denial {
            Denial::NotSignedIn => ApiError::NotSignedIn,
            Denial::Forbidden => ApiError::Forbidden,
            Denial::ForbiddenOrigin => ApiError::ForbiddenOrigin,
            Denial::InvalidUsername(message) => ApiError::InvalidUsername(message),
            Denial::ServiceTokenRequired => ApiError::Unauthorized,
            Denial::AdminDisabled => ApiError::AdminDisabled,
            Denial::Db(error) => error.into(),
        }
    }
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
