//! `GET /api/health`: liveness, touching no dependency.

use actix_web::HttpResponse;
use serde_json::json;

pub async fn health() -> HttpResponse {
    HttpResponse::Ok().json(json!({"status": "ok", "version": env!("CARGO_PKG_VERSION")}))
}
