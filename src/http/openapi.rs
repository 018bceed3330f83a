//! `GET /api/openapi.json`: the OpenAPI description of the HTTP API, generated from the
//! route table and the handlers' annotations (so a route cannot be registered without
//! being described), built once at start-up.

use actix_web::http::header;
use actix_web::{App, HttpResponse, get, web};
use utoipa::openapi::security::{HttpAuthScheme, HttpBuilder, SecurityScheme};
use utoipa::openapi::{ContentBuilder, Ref, RefOr, ResponseBuilder};
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
        (name = "feedback", description = "Ratings of turns, their review by admins and the evaluation set they make"),
        (name = "mcp", description = "The Model Context Protocol server (stateless Streamable HTTP, JSON-RPC 2.0) and its OAuth metadata"),
        (name = "operations", description = "Liveness, readiness, metrics and this description"),
        (name = "pages", description = "The web pages and their assets"),
        (name = "usage", description = "Limits on turns and tokens, and the use of each person, key, collection and model"),
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
    add_admin_refusals(&mut description);
    description
}

/// The refusals every admin route shares (`crate::auth`'s door decides them once for
/// all), by status.
const ADMIN_REFUSALS: [(&str, &str); 2] = [
    (
        "401",
        "`unauthorized`: no session, API key or admin token, or one that is wrong, expired or revoked",
    ),
    (
        "403",
        "`forbidden`: the caller is not an admin; `admin_disabled`: an admin token was sent and \
         BOR_ADMIN_TOKEN is unset; `forbidden_origin`: a request with the session cookie from \
         another site",
    ),
];

/// Writes [`ADMIN_REFUSALS`] into every operation under `/api/admin/`, once here rather
/// than in each route's annotation.
fn add_admin_refusals(description: &mut utoipa::openapi::OpenApi) {
    for (path, item) in description.paths.paths.iter_mut() {
        if !path.starts_with("/api/admin/") {
            continue;
        }
        let operations = [
            &mut item.get,
            &mut item.post,
            &mut item.put,
            &mut item.patch,
            &mut item.delete,
        ];
        for operation in operations.into_iter().flatten() {
            for (status, meaning) in ADMIN_REFUSALS {
                let refusal = ResponseBuilder::new()
                    .description(meaning)
                    .content(
                        "application/json",
                        ContentBuilder::new()
                            .schema(Some(Ref::from_schema_name("ErrorBody")))
                            .build(),
                    )
                    .build();
                operation
                    .responses
                    .responses
                    .insert(status.to_owned(), RefOr::T(refusal));
            }
        }
    }
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
