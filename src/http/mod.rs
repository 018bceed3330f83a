//! The HTTP API: one route table, handlers one per module. Every route is registered
//! through `utoipa_actix_web`, so the OpenAPI description lists it.

mod admin;
mod admin_health;
mod audit;
mod auth;
mod body;
pub mod chat;
mod client_address;
mod collections;
mod conversations;
mod cors;
mod document_list;
pub mod documents;
mod door;
pub mod error;
mod feedback;
mod from_url;
pub(crate) mod groups;
mod health;
mod host;
mod import_report;
mod keys;
mod limits;
pub(crate) mod mcp;
mod metrics;
mod nul;
pub(crate) mod oauth;
mod oidc;
pub mod openai;
mod openapi;
mod params;
pub(crate) mod protocol;
mod question;
mod request_id;
mod search;
mod static_files;
mod turn;
mod turns;
mod upload;
mod usage;
mod users;
mod watched;

use actix_web::error::{InternalError, PathError, QueryPayloadError};
use actix_web::http::{Method, header};
use actix_web::{HttpRequest, HttpResponse, ResponseError, web};
use utoipa_actix_web::service_config::ServiceConfig;

pub use admin::Admin;
pub use client_address::{client_address, refuse_repeated_forwarded_for};
pub use cors::cors;
pub use door::door;
pub use error::ApiError;
pub use host::allowed_host;
pub use nul::refuse_nul;
pub use openapi::{ApiDescription, api_description};
pub use protocol::{head_as_get, security_headers};
pub use request_id::{REQUEST_ID, request_id};

/// Every route of the service, and the refusals of the extractors they use.
pub fn routes(config: &mut ServiceConfig) {
    config
        .app_data(web::QueryConfig::default().error_handler(unreadable_query))
        .app_data(web::PathConfig::default().error_handler(unreadable_path))
        .service(static_files::index)
        .service(static_files::admin)
        .service(static_files::admin_section)
        .service(static_files::account)
        .service(static_files::library)
        .service(static_files::document)
        .service(static_files::login)
        .service(static_files::asset)
        .service(health::health)
        .service(admin_health::admin_health)
        .service(audit::audit_trail)
        .service(auth::login)
        .service(auth::logout)
        .service(auth::me)
        .service(auth::update_me)
        .service(auth::change_password)
        .service(oidc::providers)
        .service(oidc::start)
        .service(oidc::callback)
        .service(keys::list)
        .service(keys::create)
        .service(keys::revoke)
        .service(keys::list_of_user)
        .service(keys::revoke_of_user)
        .service(users::list)
        .service(users::create)
        .service(users::update)
        .service(users::remove)
        .service(chat::chat)
        .service(turns::events)
        .service(turns::stop)
        .service(search::search)
        .service(feedback::rate)
        .service(feedback::unrate)
        .service(feedback::review)
        .service(feedback::search_as_asker)
        .service(feedback::set_expected)
        .service(feedback::eval_runs)
        .service(feedback::run_eval)
        .service(conversations::list)
        .service(conversations::export)
        .service(conversations::one)
        .service(conversations::change)
        .service(conversations::remove)
        .service(openai::models)
        .service(openai::model)
        .service(openai::chat_completions)
        .service(collections::readable)
        .service(collections::list)
        .service(collections::create)
        .service(collections::update)
        .service(collections::remove)
        .service(collections::set_grants)
        .service(groups::list)
        .service(groups::create)
        .service(groups::remove)
        .service(groups::set_members)
        .service(limits::list)
        .service(limits::set)
        .service(limits::remove)
        .service(usage::everyones)
        .service(usage::own)
        .service(documents::list)
        .service(document_list::admin_list)
        .service(documents::passages)
        .service(documents::add)
        .service(documents::admin_add)
        .service(from_url::add_from_url)
        .service(watched::watched)
        .service(documents::delete)
        .service(documents::admin_delete)
        .service(documents::reindex)
        .service(mcp::mcp)
        .route(mcp::MCP_PATH, web::route().to(mcp::not_allowed))
        .service(mcp::protected_resource)
        .service(mcp::protected_resource_of_mcp)
        .service(oauth::server_metadata)
        .service(oauth::register)
        .service(oauth::authorize)
        .service(oauth::consent)
        .service(oauth::token)
        .service(oauth::revoke)
        .service(metrics::scrape)
        .service(openapi::describe)
        .default_service(web::to(not_found));
}

/// Unknown paths: 404, a page for a browser that asks for one, else `not_found`.
async fn not_found(request: HttpRequest) -> HttpResponse {
    if wants_page(&request) {
        return static_files::missing_page();
    }
    refusal(
        request.path(),
        ApiError::NotFound("no such route".to_owned()),
    )
}

/// Paths whose answers are for programs, which keep the JSON refusal even when a browser
/// opens them.
const API_PREFIXES: [&str; 4] = ["/api", "/v1", "/static", "/metrics"];

/// A browser opening an address (a GET that accepts HTML) outside the API's paths.
fn wants_page(request: &HttpRequest) -> bool {
    let path = request.path();
    let accepts_html = request
        .headers()
        .get(header::ACCEPT)
        .and_then(|accept| accept.to_str().ok())
        .is_some_and(|accept| accept.contains("text/html"));
    request.method() == Method::GET
        && accepts_html
        && !API_PREFIXES.iter().any(|prefix| {
            path.strip_prefix(prefix)
                .is_some_and(|rest| rest.is_empty() || rest.starts_with('/'))
        })
}

/// A refusal in the error shape of the route at `path`: OpenAI's under `/v1/`, bor's
/// elsewhere.
pub(crate) fn refusal(path: &str, error: ApiError) -> HttpResponse {
    if path.starts_with("/v1/") {
        openai::OpenAiError::from(error).error_response()
    } else if path == oidc::CALLBACK_PATH {
        // A browser that comes back from the identity provider reads a page.
        oidc::refused(error.status_code(), &error.public_message())
    } else {
        error.error_response()
    }
}

/// A query string that does not read as its route's parameters (a parameter given
/// twice, say): 400 `invalid_json`, in the JSON error shape instead of actix-web's
/// text.
fn unreadable_query(error: QueryPayloadError, request: &HttpRequest) -> actix_web::Error {
    let cause =
        std::error::Error::source(&error).map_or_else(|| error.to_string(), |c| c.to_string());
    let refused = ApiError::InvalidJson(format!("the query string cannot be read: {cause}"));
    InternalError::from_response(error, refusal(request.path(), refused)).into()
}

/// A path segment that does not read as its parameter names nothing: 404 `not_found`.
fn unreadable_path(error: PathError, request: &HttpRequest) -> actix_web::Error {
    let refused = ApiError::NotFound("no such route".to_owned());
    InternalError::from_response(error, refusal(request.path(), refused)).into()
}
