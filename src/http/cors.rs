//! CORS for MCP clients that run in a web page of another origin (an inspector, a web
//! agent): on `/mcp`, the metadata documents and the OAuth endpoints a client calls
//! (`/oauth/token`, `/oauth/register`, `/oauth/revoke`), and nowhere else.
//!
//! Any origin may read those answers, but never with credentials: the answers carry
//! `Access-Control-Allow-Origin: *` and no `Access-Control-Allow-Credentials`, so a
//! browser sends no cookie along and a page can only send what it holds itself — a key
//! or an OAuth token. The consent page (`/oauth/authorize`) is a page the browser opens,
//! not one a script reads; the cookie-authenticated API keeps its same-origin rule.
//! Who may then use `/mcp` from another origin is the door's to decide (`door.rs`).

use actix_web::body::{EitherBody, MessageBody};
use actix_web::dev::{ServiceRequest, ServiceResponse};
use actix_web::http::header::{self, HeaderValue};
use actix_web::http::{Method, StatusCode};
use actix_web::middleware::Next;
use actix_web::{Error, HttpResponse};

use super::{mcp, oauth};

/// The paths a page of another origin may call.
fn open_to_other_origins(path: &str) -> bool {
    path == mcp::MCP_PATH
        || path == mcp::METADATA_PATH
        || path == "/.well-known/oauth-protected-resource/mcp"
        || path == oauth::METADATA_PATH
        || oauth::CLIENT_PATHS.contains(&path)
}

/// The request headers a client's script may send.
const ALLOWED_HEADERS: &str =
    "Authorization, Content-Type, Mcp-Protocol-Version, Mcp-Session-Id, Last-Event-ID";
/// The response headers a client's script may read: the challenge that starts OAuth.
const EXPOSED_HEADERS: &str = "WWW-Authenticate, Mcp-Session-Id";

/// The middleware (see the module's documentation): a preflight is answered here; any
/// other request from another origin gets the headers that let its page read the answer.
pub async fn cors(
    request: ServiceRequest,
    next: Next<impl MessageBody>,
) -> Result<ServiceResponse<EitherBody<impl MessageBody>>, Error> {
    let open = open_to_other_origins(request.path());
    let from_page = request.headers().contains_key(header::ORIGIN);
    if !open || !from_page {
        return next
            .call(request)
            .await
            .map(ServiceResponse::map_into_left_body);
    }
    let preflight = request.method() == Method::OPTIONS
        && request
            .headers()
            .contains_key(header::ACCESS_CONTROL_REQUEST_METHOD);
    if preflight {
        let methods = if request.path() == mcp::MCP_PATH || request.path().starts_with("/oauth/") {
            "POST"
        } else {
            "GET"
        };
        let response = HttpResponse::build(StatusCode::NO_CONTENT)
            .insert_header((header::ACCESS_CONTROL_ALLOW_ORIGIN, "*"))
            .insert_header((header::ACCESS_CONTROL_ALLOW_METHODS, methods))
            .insert_header((header::ACCESS_CONTROL_ALLOW_HEADERS, ALLOWED_HEADERS))
            .insert_header((header::ACCESS_CONTROL_MAX_AGE, "86400"))
            .finish();
        return Ok(request.into_response(response).map_into_right_body());
    }
    let mut response = next.call(request).await?;
    let headers = response.headers_mut();
    headers.insert(
        header::ACCESS_CONTROL_ALLOW_ORIGIN,
        HeaderValue::from_static("*"),
    );
    headers.insert(
        header::ACCESS_CONTROL_EXPOSE_HEADERS,
        HeaderValue::from_static(EXPOSED_HEADERS),
    );
    Ok(response.map_into_left_body())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_what_mcp_clients_call_is_open_to_other_origins() {
        for open in [
            "/mcp",
            "/.well-known/oauth-protected-resource",
            "/.well-known/oauth-protected-resource/mcp",
            "/.well-known/oauth-authorization-server",
            "/oauth/token",
            "/oauth/register",
            "/oauth/revoke",
        ] {
            assert!(open_to_other_origins(open), "{open}");
        }
        for closed in ["/oauth/authorize", "/api/keys", "/v1/models", "/", "/mcpx"] {
            assert!(!open_to_other_origins(closed), "{closed}");
        }
    }
}
