//! `GET /api/openapi.json`: the OpenAPI description of the HTTP API, generated from the
//! route table and the handlers' annotations (so a route cannot be registered without
//! being described), built once at start-up.

use actix_web::http::header;
use actix_web::{App, HttpResponse, get, web};
use utoipa::openapi::security::{HttpAuthScheme, HttpBuilder, SecurityScheme};
use utoipa::{Modify, OpenApi};
use utoipa_actix_web::AppExt;

/// What the generated paths do not say: the title, the description, the admin token.
#[derive(OpenApi)]
#[openapi(
    info(
        title = "bor",
        description = "Chat with your own knowledge base through any OpenAI-compatible LLM server. \
            Errors have the shape {\"error\":{\"code\",\"message\"}}. With BOR_AUTH=accounts \
            every route but health and sign-in needs the `bor_session` cookie or an API key \
            (`Authorization: Bearer bor_…`); admin routes need an admin, or \
            `Authorization: Bearer <BOR_ADMIN_TOKEN>`."
    ),
    modifiers(&AdminToken),
    tags(
        (name = "accounts", description = "Signing in and out, API keys, and the users (admin)"),
        (name = "chat", description = "Chat turns streamed as Server-Sent Events"),
        (name = "documents", description = "The knowledge base: list, add and delete documents"),
        (name = "operations", description = "Liveness, readiness, metrics and this description"),
        (name = "pages", description = "The web pages and their assets"),
    )
)]
struct ApiInfo;

/// Declares the `admin_token` bearer scheme the admin routes name.
struct AdminToken;

impl Modify for AdminToken {
    fn modify(&self, document: &mut utoipa::openapi::OpenApi) {
        let components = document.components.get_or_insert_with(Default::default);
        components.add_security_scheme(
            "admin_token",
            SecurityScheme::Http(HttpBuilder::new().scheme(HttpAuthScheme::Bearer).build()),
        );
    }
}

/// The description of every route of [`super::routes`].
pub fn api_description() -> utoipa::openapi::OpenApi {
    let (_, mut description) = App::new()
        .into_utoipa_app()
        .openapi(ApiInfo::openapi())
        .configure(super::routes)
        .split_for_parts();
    description.info.version = env!("CARGO_PKG_VERSION").to_owned();
    description
}

/// The description as served, serialised once.
#[derive(Clone)]
pub struct ApiDescription(String);

impl ApiDescription {
    pub fn new() -> Self {
        // Serialising plain data to JSON text does not fail.
        Self(api_description().to_json().unwrap_or_default())
    }
}

impl Default for ApiDescription {
    fn default() -> Self {
        Self::new()
    }
}

/// This description of the HTTP API (OpenAPI 3.1).
#[utoipa::path(
    tag = "operations",
    responses((status = 200, description = "OpenAPI 3.1 document", content_type = "application/json"))
)]
#[get("/api/openapi.json")]
pub async fn describe(description: web::Data<ApiDescription>) -> HttpResponse {
    HttpResponse::Ok()
        .content_type("application/json")
        .insert_header((header::CACHE_CONTROL, "no-cache"))
        .body(description.0.clone())
}
