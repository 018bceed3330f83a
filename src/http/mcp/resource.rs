//! `/mcp` as an OAuth protected resource (RFC 9728): the metadata document a client
//! reads after a 401, and the `WWW-Authenticate` challenge that points at it.

use actix_web::http::header::{self, HeaderValue};
use actix_web::{HttpRequest, HttpResponse, get, web};
use serde::Serialize;
use url::Url;
use utoipa::ToSchema;

use super::MCP_PATH;
use crate::auth::public_base;
use crate::state::AppState;

/// Where the metadata document is, for `/mcp` and for the whole host.
pub const METADATA_PATH: &str = "/.well-known/oauth-protected-resource";

/// RFC 9728's metadata of `/mcp`.
#[derive(Serialize, ToSchema)]
pub struct ResourceMetadata {
    /// `<public>/mcp`: what a token is for.
    resource: String,
    /// `<public>`: who issues tokens for it.
    authorization_servers: Vec<String>,
    /// Tokens go in the `Authorization` header only.
    bearer_methods_supported: Vec<&'static str>,
    resource_name: &'static str,
}

/// `<public>` and the path: `BOR_PUBLIC_URL`'s, else `http://<Host>`'s.
fn public_address(state: &AppState, request: &HttpRequest, path: &str) -> Option<Url> {
    public_base(request, state.config.public_url.as_ref())?
        .join(path)
        .ok()
}

/// `<public>/mcp`: the resource an OAuth token is for.
pub fn resource_url(state: &AppState, request: &HttpRequest) -> Option<Url> {
    public_address(state, request, MCP_PATH)
}

/// The challenge of a 401 on `/mcp`: `Bearer resource_metadata="<public>/.well-known/…"`;
/// a bare `Bearer` when no public address can be made (no `Host`).
pub fn challenge(state: &AppState, request: &HttpRequest) -> HeaderValue {
    public_address(state, request, METADATA_PATH)
        .and_then(|url| HeaderValue::try_from(format!("Bearer resource_metadata=\"{url}\"")).ok())
        .unwrap_or_else(|| HeaderValue::from_static("Bearer"))
}

fn metadata(state: &AppState, request: &HttpRequest) -> HttpResponse {
    let (Some(resource), Some(issuer)) = (
        resource_url(state, request),
        public_address(state, request, "/"),
    ) else {
        return HttpResponse::BadRequest().finish();
    };
    HttpResponse::Ok()
        .insert_header((header::CACHE_CONTROL, "max-age=3600"))
        .json(ResourceMetadata {
            resource: resource.to_string(),
            authorization_servers: vec![issuer.as_str().trim_end_matches('/').to_owned()],
            bearer_methods_supported: vec!["header"],
            resource_name: "bor",
        })
}

/// `GET /.well-known/oauth-protected-resource`: what `/mcp` is and who issues its
/// tokens (RFC 9728).
#[utoipa::path(
    tag = "mcp",
    responses((status = 200, description = "the protected resource's metadata", body = ResourceMetadata))
)]
#[get("/.well-known/oauth-protected-resource")]
pub async fn protected_resource(request: HttpRequest, state: web::Data<AppState>) -> HttpResponse {
    metadata(&state, &request)
}

/// `GET /.well-known/oauth-protected-resource/mcp`: the same document, where RFC 9728
/// puts the metadata of the resource at `/mcp`.
#[utoipa::path(
    tag = "mcp",
    responses((status = 200, description = "the protected resource's metadata", body = ResourceMetadata))
)]
#[get("/.well-known/oauth-protected-resource/mcp")]
pub async fn protected_resource_of_mcp(
    request: HttpRequest,
    state: web::Data<AppState>,
) -> HttpResponse {
    metadata(&state, &request)
}
