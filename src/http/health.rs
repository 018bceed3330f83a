//! `GET /api/health`: liveness, touching no dependency.

use actix_web::{HttpResponse, get};
use serde::Serialize;
use utoipa::ToSchema;

/// The liveness answer.
#[derive(Serialize, ToSchema)]
pub struct Liveness {
    #[schema(example = "ok")]
    status: &'static str,
    #[schema(example = "0.1.0")]
    version: &'static str,
}

/// Liveness.
///
/// Answers as long as the process serves HTTP; touches no dependency.
#[utoipa::path(tag = "operations", responses((status = 200, body = Liveness)))]
#[get("/api/health")]
pub async fn health() -> HttpResponse {
    HttpResponse::Ok().json(Liveness {
        status: "ok",
        version: env!("CARGO_PKG_VERSION"),
    })
}
