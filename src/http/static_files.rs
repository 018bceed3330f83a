//! The chat and admin pages and their assets, embedded in the binary from `static/`
//! (read from disk in debug builds, so page edits show without a rebuild).

use actix_web::http::{StatusCode, header};
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
    serve_page("index.html")
}

/// The admin page.
#[utoipa::path(
    tag = "pages",
    responses((status = 200, description = "HTML", content_type = "text/html", body = String))
)]
#[get("/admin")]
pub async fn admin() -> HttpResponse {
    serve_page("admin.html")
}

/// The sections of the admin page, each at `/admin/{section}`.
pub const ADMIN_SECTIONS: [&str; 10] = [
    "health",
    "documents",
    "people",
    "groups",
    "collections",
    "feedback",
    "limits",
    "usage",
    "audit",
    "retrieval",
];

/// A section of the admin page (the same page, opened on that section); 404 for a
/// section there is not.
#[utoipa::path(
    tag = "pages",
    params(("section" = String, Path, description = "`health`, `documents`, `people`, `groups`, `collections`, `feedback`, `limits`, `usage`, `audit` or `retrieval`")),
    responses(
        (status = 200, description = "HTML", content_type = "text/html", body = String),
        (status = 404, description = "no such section: the page for an unknown address", content_type = "text/html", body = String),
    )
)]
#[get("/admin/{section}")]
pub async fn admin_section(section: web::Path<String>) -> HttpResponse {
    if ADMIN_SECTIONS.contains(&section.as_str()) {
        serve_page("admin.html")
    } else {
        missing_page()
    }
}

/// The person's own page: profile, password, theme and API keys.
#[utoipa::path(
    tag = "pages",
    responses((status = 200, description = "HTML", content_type = "text/html", body = String))
)]
#[get("/account")]
pub async fn account() -> HttpResponse {
    serve_page("account.html")
}

/// Every document the person may read, by collection.
#[utoipa::path(
    tag = "pages",
    responses((status = 200, description = "HTML", content_type = "text/html", body = String))
)]
#[get("/documents")]
pub async fn library() -> HttpResponse {
    serve_page("library.html")
}

/// The sign-in page (`?next=` the path to go back to).
#[utoipa::path(
    tag = "pages",
    responses((status = 200, description = "HTML", content_type = "text/html", body = String))
)]
#[get("/login")]
pub async fn login() -> HttpResponse {
    serve_page("login.html")
}

/// The passage page: a document chunk by chunk, the cited one (`#chunk-{id}`) in view.
#[utoipa::path(
    tag = "pages",
    params(("id" = String, Path, description = "the document's id")),
    responses((status = 200, description = "HTML", content_type = "text/html", body = String))
)]
#[get("/documents/{id}")]
pub async fn document(_id: web::Path<String>) -> HttpResponse {
    serve_page("document.html")
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

/// The page a browser reads at an address bor has no page for: 404, but a page.
pub fn missing_page() -> HttpResponse {
    let mut response = serve_page("not-found.html");
    *response.status_mut() = StatusCode::NOT_FOUND;
    response
}

/// The pages' policy: the one their `<meta>` tag states, and what only a header can
/// say — no other site may frame them.
const PAGE_POLICY: &str = "default-src 'self'; script-src 'self'; style-src 'self'; \
    img-src 'self' data:; connect-src 'self'; object-src 'none'; base-uri 'none'; \
    form-action 'self'; frame-ancestors 'none'";

/// A page made from the template `name` under `static/` (`{{slot}}` replaced by the
/// HTML given for it), under the pages' policy; its forms may also be sent on to
/// `form_origin` (a redirect after the form is a form's target too).
pub(super) fn filled_page(
    name: &str,
    slots: &[(&str, &str)],
    form_origin: Option<&str>,
) -> HttpResponse {
    let Some(file) = StaticFiles::get(name) else {
        return super::error::ApiError::NotFound(format!("no file {name}")).error_response();
    };
    // One pass over the template: what a slot is filled with is never read as slots.
    let template = String::from_utf8_lossy(&file.data);
    let mut page = String::with_capacity(template.len());
    let mut rest = template.as_ref();
    while let Some(start) = rest.find("{{") {
        page.push_str(&rest[..start]);
        let after = &rest[start + 2..];
        let filled = after.find("}}").and_then(|end| {
            let html = slots.iter().find(|(slot, _)| *slot == &after[..end])?.1;
            Some((html, end))
        });
        match filled {
            Some((html, end)) => {
                page.push_str(html);
                rest = &after[end + 2..];
            }
            None => {
                page.push_str("{{");
                rest = after;
            }
        }
    }
    page.push_str(rest);
    let policy = match form_origin {
        Some(origin) => PAGE_POLICY.replace(
            "form-action 'self'",
            &format!("form-action 'self' {origin}"),
        ),
        None => PAGE_POLICY.to_owned(),
    };
    let mut response = HttpResponse::Ok()
        .content_type("text/html; charset=utf-8")
        .insert_header((header::CACHE_CONTROL, "no-store"))
        .insert_header((header::X_FRAME_OPTIONS, "DENY"))
        .body(page);
    if let Ok(policy) = header::HeaderValue::try_from(policy) {
        response
            .headers_mut()
            .insert(header::CONTENT_SECURITY_POLICY, policy);
    }
    response
}

fn serve_page(path: &str) -> HttpResponse {
    let mut response = serve(path);
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_SECURITY_POLICY,
        header::HeaderValue::from_static(PAGE_POLICY),
    );
    headers.insert(
        header::X_FRAME_OPTIONS,
        header::HeaderValue::from_static("DENY"),
    );
    response
}

fn serve(path: &str) -> HttpResponse {
    match StaticFiles::get(path) {
        Some(file) => HttpResponse::Ok()
            .content_type(file.metadata.mimetype())
            .insert_header((header::CACHE_CONTROL, "no-cache"))
            .body(file.data.into_owned()),
        None => super::error::ApiError::NotFound(format!("no file {path}")).error_response(),
    }
}
