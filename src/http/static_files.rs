//! The chat and admin pages and their assets, embedded in the binary from `static/`
//! (read from disk in debug builds, so page edits show without a rebuild).

use actix_web::http::header;
use actix_web::{HttpResponse, ResponseError, web};
use rust_embed::RustEmbed;

#[derive(RustEmbed)]
#[folder = "static/"]
struct StaticFiles;

/// `GET /`: the chat page.
pub async fn index() -> HttpResponse {
    serve("index.html")
}

/// `GET /admin`: the admin page.
pub async fn admin() -> HttpResponse {
    serve("admin.html")
}

/// `GET /static/{path}`: an asset beside the pages.
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
