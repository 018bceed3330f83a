//! The HTTP API: one route table, handlers one per module. Every route is registered
//! through `utoipa_actix_web`, so the OpenAPI description lists it.

mod admin;
mod admin_health;
mod body;
pub mod chat;
mod conversations;
pub mod documents;
pub mod error;
mod from_url;
mod health;
mod metrics;
pub mod openai;
mod openapi;
mod protocol;
mod request_id;
mod static_files;
mod turn;
mod upload;
mod watched;

use actix_web::{HttpRequest, HttpResponse, ResponseError, web};
use utoipa_actix_web::service_config::ServiceConfig;

pub use admin::Admin;
pub use error::ApiError;
pub use openapi::{ApiDescription, api_description};
pub use protocol::{head_as_get, security_headers};
pub use request_id::{REQUEST_ID, request_id};

/// Every route of the service.
pub fn routes(config: &mut ServiceConfig) {
    config
        .service(static_files::index)
        .service(static_files::admin)
        .service(static_files::document)
        .service(static_files::asset)
        .service(health::health)
        .service(admin_health::admin_health)
        .service(chat::chat)
        .service(conversations::list)
        .service(conversations::export)
        .service(conversations::one)
        .service(conversations::rename)
        .service(conversations::remove)
        .service(openai::models)
        .service(openai::model)
        .service(openai::chat_completions)
        .service(documents::list)
        .service(documents::passages)
        .service(documents::add)
        .service(from_url::add_from_url)
        .service(watched::watched)
        .service(documents::delete)
        .service(documents::reindex)
        .service(metrics::scrape)
        .service(openapi::describe)
        .default_service(web::to(not_found));
}

/// Unknown paths: 404 `not_found`, in the OpenAI shape under `/v1/`.
async fn not_found(request: HttpRequest) -> HttpResponse {
    let error = ApiError::NotFound("no such route".to_owned());
    if request.path().starts_with("/v1/") {
        openai::OpenAiError::from(error).error_response()
    } else {
        error.error_response()
    }
}
