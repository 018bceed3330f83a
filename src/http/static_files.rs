//! The chat and admin pages and their assets, embedded in the binary from `static/`
//! (read from disk in debug builds, so page edits show without a rebuild).

use actix_web::http::header;
use actix_web::{HttpResponse, ResponseError, get, web};
use rust_embed::RustEmbed;

#[derive(RustEmbed)]
#[folder = "static/"]
struct StaticFiles;

/// The chat page.
#[utoipa::path(
    tag = "pages",
    responses((status = 200, description = "HTML", content_type = "text/html", body = String))
)]
#[get("/")]
pub async fn index() -> HttpResponse {
    serve("index.html")
}

/// The admin page.
#[utoipa::path(
    tag = "pages",
    responses((status = 200, description = "HTML", content_type = "text/html", body = String))
)]
#[get("/admin")]
pub async fn admin() -> HttpResponse {
    serve("admin.html")
}

/// An asset beside the pages (scripts, style sheets).
#[utoipa::path(
    tag = "pages",
    params(("path" = String, Path, description = "file name under static/, e.g. `chat.js`")),
    responses(
        (status = 200, description = "the file, with its content type"),
        (status = 404, description = "no such file", body = super::error::ErrorBody),
    )
)]
#[get("/static/{path:.*}")]
pub async fn asset(path: web::Path<String>) -> HttpResponse {
    serve(&path)
}

fn serve(path: &str) -> HttpResponse {
    match StaticFiles::get(path) {
        Some(file) => HttpResponse::Ok()
            .content_type(file.metadata.mimetype())
            .insert_header((header::CACHE_CONTROL, "no-cache"))
            .insert_header(("X-Content-Type-Options", "nosniff"))
            .body(file.data.into_owned()),
        None => super::error::ApiError::NotFound(format!("no file {path}")).error_response(),
    }
}
