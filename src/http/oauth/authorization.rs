//! `GET /oauth/authorize`: the consent page; `POST /oauth/authorize`: the person's
//! decision. A person not signed in is sent to the login page and back by the
//! door (`http/door.rs`; this is a page); the decision is a change made with the
//! session cookie, so it must come from bor's own origin (§14's CSRF rule).
//!
//! An unknown client or a redirect URI it did not register is an error page, never a
//! redirect (bor does not send a browser to an address nobody vouched for); every other
//! fault goes back to the client's redirect URI as `error=…` (RFC 6749 §4.1.2.1).

use actix_web::http::{StatusCode, header};
use actix_web::{HttpRequest, HttpResponse, get, post, web};
use chrono::Utc;
use url::Url;

use super::{CODE_LIFETIME, OAuthError, Params, read_form};
use crate::audit::{self, Action, Event};
use crate::auth::{Caller, secret};
use crate::db::oauth::{self, ClientRow, CodeRow};
use crate::http::mcp::resource_url;
use crate::http::oidc::escape_html;
use crate::http::static_files::filled_page;
use crate::state::AppState;

/// An authorization request that holds: who asks, where the answer goes, and what for.
struct Asked {
    client: ClientRow,
    redirect_uri: String,
    state: Option<String>,
    code_challenge: String,
    resource: String,
}

/// How a request that does not hold is answered.
enum Refused {
    /// An error page: the client or its redirect URI cannot be trusted.
    Page(String),
    /// Back to the client: `error`, its description, and the request's `state`.
    Redirect(Url),
}

impl Refused {
    fn response(self) -> HttpResponse {
        match self {
            Refused::Page(reason) => error_page(&reason),
            Refused::Redirect(url) => found(&url),
        }
    }
}

fn found(url: &Url) -> HttpResponse {
    HttpResponse::Found()
        .insert_header((header::LOCATION, url.as_str()))
        .insert_header((header::CACHE_CONTROL, "no-store"))
        .finish()
}

/// `redirect_uri` with `pairs` added to its query.
fn redirect_with(redirect_uri: &str, pairs: &[(&str, &str)]) -> Option<Url> {
    let mut url = Url::parse(redirect_uri).ok()?;
    {
        let mut query = url.query_pairs_mut();
        for (name, value) in pairs {
            query.append_pair(name, value);
        }
    }
    Some(url)
}

/// The redirect of a refusal: `error`, `error_description` and `state`.
fn refusal_redirect(
    redirect_uri: &str,
    state: Option<&str>,
    error: &str,
    description: &str,
) -> Refused {
    let mut pairs = vec![("error", error), ("error_description", description)];
    if let Some(state) = state {
        pairs.push(("state", state));
    }
    match redirect_with(redirect_uri, &pairs) {
        Some(url) => Refused::Redirect(url),
        None => Refused::Page("The client's redirect URI is not an address.".to_owned()),
    }
}

/// Checks an authorization request (its query, or the consent form's fields).
async fn checked(
    state: &AppState,
    request: &HttpRequest,
    params: &Params,
) -> Result<Asked, Refused> {
    let Some(client_id) = params.get("client_id") else {
        return Err(Refused::Page("The request names no client.".to_owned()));
    };
    let client = async {
        let mut conn = state.pool.get().await?;
        oauth::find_client(&mut conn, client_id).await
    }
    .await
    .map_err(|_| Refused::Page("bor cannot reach its database; try again.".to_owned()))?
    .ok_or_else(|| Refused::Page("No such client is registered with bor.".to_owned()))?;
    let redirect_uri = match params.get("redirect_uri") {
        Some(uri) if client.redirect_uris.iter().any(|known| known == uri) => uri.to_owned(),
        None if client.redirect_uris.len() == 1 => client.redirect_uris[0].clone(),
        _ => {
            return Err(Refused::Page(
                "The redirect URI is not one the client registered.".to_owned(),
            ));
        }
    };
    let client_state = params.get("state").map(str::to_owned);
    let refuse = |error: &str, description: &str| {
        refusal_redirect(&redirect_uri, client_state.as_deref(), error, description)
    };
    if params.get("response_type") != Some("code") {
        return Err(refuse(
            "unsupported_response_type",
            "response_type must be code",
        ));
    }
    let Some(code_challenge) = params.get("code_challenge") else {
        return Err(refuse(
            "invalid_request",
            "code_challenge is required (PKCE)",
        ));
    };
    if params.get("code_challenge_method") != Some("S256") {
        return Err(refuse(
            "invalid_request",
            "code_challenge_method must be S256",
        ));
    }
    if !is_s256_challenge(code_challenge) {
        return Err(refuse(
            "invalid_request",
            "code_challenge is not a base64url SHA-256",
        ));
    }
    let Some(own_resource) = resource_url(state, request) else {
        return Err(Refused::Page("The request has no Host.".to_owned()));
    };
    let resource = match params.get("resource") {
        None => own_resource.to_string(),
        Some(resource) if resource == own_resource.as_str() => resource.to_owned(),
        Some(_) => {
            return Err(refuse(
                "invalid_target",
                "bor issues tokens for its own /mcp only",
            ));
        }
    };
    Ok(Asked {
        client,
        redirect_uri,
        state: client_state,
        code_challenge: code_challenge.to_owned(),
        resource,
    })
}

/// A PKCE S256 challenge: 43 base64url characters (32 bytes, no padding).
fn is_s256_challenge(challenge: &str) -> bool {
    challenge.len() == 43
        && challenge
            .bytes()
            .all(|byte| byte.is_ascii_alphanumeric() || byte == b'-' || byte == b'_')
}

/// The consent page of `asked` for `caller`.
fn consent_page(caller: &Caller, asked: &Asked) -> HttpResponse {
    let collections = caller.readable.collections();
    let collections_html = if collections.is_empty() {
        "<li>No collection yet: nothing you cannot read today.</li>".to_owned()
    } else {
        collections
            .iter()
            .map(|(_, name, _)| format!("<li>{}</li>", escape_html(name)))
            .collect::<String>()
    };
    let hidden = [
        ("response_type", Some("code")),
        ("client_id", Some(asked.client.id.as_str())),
        ("redirect_uri", Some(asked.redirect_uri.as_str())),
        ("state", asked.state.as_deref()),
        ("code_challenge", Some(asked.code_challenge.as_str())),
        ("code_challenge_method", Some("S256")),
        ("resource", Some(asked.resource.as_str())),
    ];
    let fields: String = hidden
        .iter()
        .filter_map(|(name, value)| {
            value.map(|value| {
                format!(
                    "<input type=\"hidden\" name=\"{name}\" value=\"{}\">\n",
                    escape_html(value)
                )
            })
        })
        .collect();
    let redirect = Url::parse(&asked.redirect_uri).ok();
    let redirect_host = redirect
        .as_ref()
        .and_then(|url| url.host_str().map(str::to_owned))
        .unwrap_or_default();
    let form_origin = redirect.map(|url| url.origin().ascii_serialization());
    filled_page(
        "consent.html",
        &[
            ("client", &escape_html(&asked.client.name)),
            ("redirect_host", &escape_html(&redirect_host)),
            ("person", &escape_html(&caller.display_name)),
            ("collections", &collections_html),
            ("fields", &fields),
        ],
        form_origin.as_deref(),
    )
}

/// The page of a request bor cannot send back to a client.
fn error_page(reason: &str) -> HttpResponse {
    let mut response = filled_page(
        "consent-refused.html",
        &[("reason", &escape_html(reason))],
        None,
    );
    *response.status_mut() = StatusCode::BAD_REQUEST;
    response
}

/// `GET /oauth/authorize` (`response_type=code`, `client_id`, `redirect_uri`, `state`,
/// `code_challenge`, `code_challenge_method=S256`, `resource`): the consent page.
#[utoipa::path(
    tag = "mcp",
    responses(
        (status = 200, description = "the consent page", content_type = "text/html", body = String),
        (status = 302, description = "to `/login?next=…` when not signed in; to the redirect URI with `error` (`invalid_request`, `unsupported_response_type`, `invalid_target`) and `state`"),
        (status = 400, description = "an error page: an unknown client, or a redirect URI it did not register", content_type = "text/html", body = String),
    )
)]
#[get("/oauth/authorize")]
pub async fn authorize(
    caller: Caller,
    request: HttpRequest,
    state: web::Data<AppState>,
) -> HttpResponse {
    let params = match Params::parse(request.query_string().as_bytes()) {
        Ok(params) => params,
        Err(error) => return error_page(&error.to_string()),
    };
    match checked(&state, &request, &params).await {
        Ok(asked) => consent_page(&caller, &asked),
        Err(refused) => refused.response(),
    }
}

/// `POST /oauth/authorize`: the consent form's fields with `decision=allow` (302 to the
/// redirect URI with `code` and `state`) or `deny` (with `error=access_denied`).
#[utoipa::path(
    tag = "mcp",
    request_body(content = String, content_type = "application/x-www-form-urlencoded",
        description = "the authorization request's parameters and `decision` (`allow` or `deny`)"),
    responses(
        (status = 302, description = "to the redirect URI with `code` and `state`, or `error`"),
        (status = 400, description = "an error page: an unknown client, or a redirect URI it did not register", content_type = "text/html", body = String),
        (status = 403, description = "`forbidden_origin`: from another site"),
    )
)]
#[post("/oauth/authorize")]
pub async fn consent(
    caller: Caller,
    request: HttpRequest,
    payload: web::Payload,
    state: web::Data<AppState>,
) -> HttpResponse {
    let params = match read_form(&request, payload, &state).await {
        Ok(params) => params,
        Err(error) => return error_page(&error.to_string()),
    };
    let asked = match checked(&state, &request, &params).await {
        Ok(asked) => asked,
        Err(refused) => return refused.response(),
    };
    let details = serde_json::json!({"client_id": asked.client.id});
    match params.get("decision") {
        Some("allow") => {}
        Some("deny") => {
            let denied =
                Event::of(&request, Action::OAuthGrantDenied, &asked.client.name).with(details);
            audit::record(&state.pool, denied).await;
            return refusal_redirect(
                &asked.redirect_uri,
                asked.state.as_deref(),
                "access_denied",
                "the person did not allow it",
            )
            .response();
        }
        _ => {
            return refusal_redirect(
                &asked.redirect_uri,
                asked.state.as_deref(),
                "invalid_request",
                "decision must be allow or deny",
            )
            .response();
        }
    }
    match issue_code(&state, &caller, &asked).await {
        Ok(code) => {
            let allowed =
                Event::of(&request, Action::OAuthGrantAllowed, &asked.client.name).with(details);
            audit::record(&state.pool, allowed).await;
            let mut pairs = vec![("code", code.as_str())];
            if let Some(client_state) = asked.state.as_deref() {
                pairs.push(("state", client_state));
            }
            match redirect_with(&asked.redirect_uri, &pairs) {
                Some(url) => found(&url),
                None => error_page("The client's redirect URI is not an address."),
            }
        }
        Err(error) => refusal_redirect(
            &asked.redirect_uri,
            asked.state.as_deref(),
            "server_error",
            &error.to_string(),
        )
        .response(),
    }
}

/// A new authorization code for `asked`, allowed by `caller`: stored as its hash,
/// usable once within 60 s.
async fn issue_code(
    state: &AppState,
    caller: &Caller,
    asked: &Asked,
) -> Result<String, OAuthError> {
    let issued = secret::new_prefixed("").map_err(|error| {
        OAuthError::new(
            StatusCode::INTERNAL_SERVER_ERROR,
            "server_error",
            error.to_string(),
        )
    })?;
    let row = CodeRow {
        code_sha256: issued.sha256,
        client_id: asked.client.id.clone(),
        user_id: caller.user_id,
        redirect_uri: asked.redirect_uri.clone(),
        code_challenge: asked.code_challenge.clone(),
        resource: asked.resource.clone(),
        expires_at: Utc::now() + CODE_LIFETIME,
        grant_id: None,
    };
    let mut conn = state.pool.get().await?;
    oauth::insert_code(&mut conn, &row).await?;
    Ok(issued.token)
}
