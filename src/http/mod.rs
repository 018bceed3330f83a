//! The HTTP API: one route table, handlers one per module.

mod admin;
mod body;
pub mod chat;
pub mod documents;
pub mod error;
mod health;
mod static_files;

use actix_web::{HttpResponse, ResponseError, web};

pub use admin::Admin;
pub use error::ApiError;

/// Every route of the service.
pub fn routes(config: &mut web::ServiceConfig) {
    config
        .route("/", web::get().to(static_files::index))
        .route("/admin", web::get().to(static_files::admin))
        .route("/static/{path:.*}", web::get().to(static_files::asset))
        .route("/api/health", web::get().to(health::health))
        .route("/api/chat", web::post().to(chat::chat))
        .route("/api/documents", web::get().to(documents::list))
        .route("/api/admin/documents", web::post().to(documents::add))
        .route(
            "/api/admin/documents/{id}",
            web::delete().to(documents::delete),
        )
        .route("/api/admin/reindex", web::post().to(documents::reindex))
        .default_service(web::to(not_found));
}

async fn not_found() -> HttpResponse {
    ApiError::NotFound("no such route".to_owned()).error_response()
}
