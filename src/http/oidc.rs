//! Sign-in from elsewhere (docs/PROTOCOL.md, "Accounts"; docs/AUTH.md):
//! `GET /api/auth/providers` tells the login page which ways to sign in there are;
//! `GET /api/auth/oidc/start` sends the browser to the OpenID Connect provider and
//! `GET /api/auth/oidc/callback` signs it in when it comes back. A refused sign-in is
//! a page (HTML) saying why, with a link back to the login page, and signs nobody in.

use actix_web::cookie::{Cookie, SameSite};
use actix_web::http::{StatusCode, header};
use actix_web::{HttpRequest, HttpResponse, get, web};
use serde::{Deserialize, Serialize};
use url::Url;
use utoipa::{IntoParams, ToSchema};

use super::auth::{secure_cookies, session_cookie};
use super::error::ApiError;
use crate::audit::{self, Action, Actor, Event};
use crate::auth::oidc::OidcError;
use crate::auth::oidc_sign_in::{Completed, LOGIN_WINDOW, OidcRefusal, Returned};
use crate::auth::public_base;
use crate::state::AppState;

/// The cookie that binds a sign-in under way to the browser that started it.
const BROWSER_COOKIE: &str = "bor_oidc";
/// Where [`BROWSER_COOKIE`] is sent.
const BROWSER_COOKIE_PATH: &str = "/api/auth/oidc";
/// The callback, as registered at the provider (after `BOR_PUBLIC_URL`).
pub(super) const CALLBACK_PATH: &str = "/api/auth/oidc/callback";

/// The OpenID Connect provider as the login page offers it.
#[derive(Serialize, ToSchema)]
pub struct OidcOffer {
    /// What the button says after "Sign in with": the provider's host.
    name: String,
    /// Where the button goes (add `?next=<path>`).
    start: &'static str,
}

/// The ways to sign in.
#[derive(Serialize, ToSchema)]
pub struct ProvidersBody {
    /// Username and password (always offered).
    password: bool,
    /// `null` when no provider is configured.
    oidc: Option<OidcOffer>,
}

/// `GET /api/auth/providers`: the ways to sign in the login page offers. It does not
/// ask the provider: when the provider is down the page still offers it, and the
/// password.
#[utoipa::path(
    tag = "accounts",
    responses((status = 200, description = "the ways to sign in", body = ProvidersBody))
)]
#[get("/api/auth/providers")]
pub async fn providers(state: web::Data<AppState>) -> HttpResponse {
    HttpResponse::Ok().json(ProvidersBody {
        password: true,
        oidc: state.accounts.oidc.as_ref().map(|provider| OidcOffer {
            name: provider.display_name(),
            start: "/api/auth/oidc/start",
        }),
    })
}

#[derive(Deserialize, IntoParams)]
pub struct StartQuery {
    /// Where to go once signed in: a path inside bor (anything else is `/`).
    next: Option<String>,
}

/// `GET /api/auth/oidc/start?next=<path>`: 302 to the provider's authorization
/// endpoint, with the `bor_oidc` cookie that the callback must bring back.
#[utoipa::path(
    tag = "accounts",
    params(StartQuery),
    responses(
        (status = 302, description = "to the provider"),
        (status = 404, description = "no provider is configured (a page)"),
        (status = 502, description = "the provider cannot be reached (a page)"),
    )
)]
#[get("/api/auth/oidc/start")]
pub async fn start(
    request: HttpRequest,
    query: web::Query<StartQuery>,
    state: web::Data<AppState>,
) -> Result<HttpResponse, ApiError> {
    let redirect = callback_url(&state, &request);
    let begun = state
        .accounts
        .begin_oidc(&state.pool, redirect, query.next.as_deref())
        .await;
    let begun = match begun {
        Ok(begun) => begun,
        Err(refusal) => return refusal_page(refusal),
    };
    Ok(HttpResponse::Found()
        .insert_header((header::LOCATION, begun.url.as_str()))
        .insert_header((header::CACHE_CONTROL, "no-store"))
        .cookie(browser_cookie(&state, begun.browser_secret))
        .finish())
}

#[derive(Deserialize, IntoParams)]
pub struct CallbackQuery {
    code: Option<String>,
    state: Option<String>,
    /// The provider's refusal (`access_denied` …).
    error: Option<String>,
    error_description: Option<String>,
}

/// `GET /api/auth/oidc/callback?code&state`: checks the sign-in it continues (its
/// `state`, made in this browser, not expired, used once), exchanges the code, checks
/// the ID token, and signs the person in: the `bor_session` cookie and 302 to `next`.
#[utoipa::path(
    tag = "accounts",
    params(CallbackQuery),
    responses(
        (status = 302, description = "signed in; to `next` with the `bor_session` cookie"),
        (status = 400, description = "refused: why, on a page with a link back to the login page"),
        (status = 403, description = "refused: the account is disabled (a page)"),
        (status = 502, description = "the provider cannot be reached (a page)"),
    )
)]
#[get("/api/auth/oidc/callback")]
pub async fn callback(
    request: HttpRequest,
    query: web::Query<CallbackQuery>,
    state: web::Data<AppState>,
) -> Result<HttpResponse, ApiError> {
    let query = query.into_inner();
    let browser = request.cookie(BROWSER_COOKIE);
    let returned = Returned {
        state: query.state.as_deref(),
        code: query.code,
        error: query.error,
        error_description: query.error_description,
        browser_secret: browser.as_ref().map(|cookie| cookie.value()),
    };
    let redirect = callback_url(&state, &request);
    let completed = state
        .accounts
        .complete_oidc(&state.pool, redirect, returned)
        .await;
    let Completed {
        user,
        session_secret,
        next_path,
    } = match completed {
        Ok(completed) => completed,
        Err(refusal) => return refusal_page(refusal),
    };
    let signed_in = Event::of(&request, Action::SignedIn, &user.username)
        .by(Actor::user(user.id, &user.username))
        .with(serde_json::json!({"with": "openid_connect"}));
    audit::record(&state.pool, signed_in).await;
    Ok(HttpResponse::Found()
        .insert_header((header::LOCATION, next_path))
        .insert_header((header::CACHE_CONTROL, "no-store"))
        .cookie(session_cookie(&state, session_secret))
        .cookie(browser_cookie(&state, String::new()))
        .finish())
}

/// The page of a refused sign-in, with its status; a failure of bor's own is the
/// API's error.
fn refusal_page(refusal: OidcRefusal) -> Result<HttpResponse, ApiError> {
    let refusal = match refusal {
        OidcRefusal::Provider(error) => return Ok(refused_by(&error)),
        OidcRefusal::Internal { doing, cause } => return Err(ApiError::internal(doing, cause)),
        OidcRefusal::Db(error) => return Err(error.into()),
        shown => shown,
    };
    let status = match refusal {
        OidcRefusal::NotConfigured => StatusCode::NOT_FOUND,
        OidcRefusal::Disabled => StatusCode::FORBIDDEN,
        _ => StatusCode::BAD_REQUEST,
    };
    Ok(refused(status, &refusal.to_string()))
}

/// `<BOR_PUBLIC_URL>/api/auth/oidc/callback`, else `http://<Host>/api/auth/oidc/callback`.
fn callback_url(state: &AppState, request: &HttpRequest) -> Option<Url> {
    public_base(request, state.config.public_url.as_ref())?
        .join(CALLBACK_PATH)
        .ok()
}

/// The `bor_oidc` cookie carrying `value`; an empty value with no lifetime removes it.
fn browser_cookie(state: &AppState, value: String) -> Cookie<'static> {
    let lifetime = if value.is_empty() {
        actix_web::cookie::time::Duration::ZERO
    } else {
        actix_web::cookie::time::Duration::seconds(LOGIN_WINDOW.num_seconds())
    };
    Cookie::build(BROWSER_COOKIE, value)
        .http_only(true)
        .same_site(SameSite::Lax)
        .path(BROWSER_COOKIE_PATH)
        .secure(secure_cookies(state))
        .max_age(lifetime)
        .finish()
}

fn refused_by(error: &OidcError) -> HttpResponse {
    let status = match error {
        OidcError::ProviderDown => StatusCode::BAD_GATEWAY,
        _ => StatusCode::BAD_REQUEST,
    };
    let mut reason = error.to_string();
    if let Some(first) = reason.get(..1) {
        reason = format!("{}{}.", first.to_uppercase(), &reason[1..]);
    }
    refused(status, &reason)
}

/// The page of a refused sign-in: `reason` and a link back to the login page. The
/// `bor_oidc` cookie stays: a wrong callback must not end a sign-in of this browser
/// that is still under way (it expires with [`LOGIN_WINDOW`]).
pub(super) fn refused(status: StatusCode, reason: &str) -> HttpResponse {
    let page = format!(
        "<!doctype html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <title>bor — sign-in refused</title>\n\
         <link rel=\"stylesheet\" href=\"/static/style.css\">\n\
         <link rel=\"stylesheet\" href=\"/static/login.css\">\n</head>\n\
         <body class=\"login-page\">\n<main class=\"login-main\">\n\
         <section class=\"login-form\" aria-labelledby=\"refused-heading\">\n\
         <h2 id=\"refused-heading\">Sign-in refused</h2>\n\
         <p id=\"refusal\" role=\"alert\">{}</p>\n\
         <p>Nobody was signed in. <a id=\"back-to-login\" href=\"/login\">Back to sign-in</a></p>\n\
         </section>\n</main>\n</body>\n</html>\n",
        escape_html(reason)
    );
    HttpResponse::build(status)
        .content_type("text/html; charset=utf-8")
        .insert_header((header::CACHE_CONTROL, "no-store"))
        .body(page)
}

/// `text` safe inside HTML, as text or as an attribute's quoted value.
pub(super) fn escape_html(text: &str) -> String {
    let mut escaped = String::with_capacity(text.len());
    for character in text.chars() {
        match character {
            '&' => escaped.push_str("&amp;"),
            '<' => escaped.push_str("&lt;"),
            '>' => escaped.push_str("&gt;"),
            '"' => escaped.push_str("&quot;"),
            '\'' => escaped.push_str("&#39;"),
            other => escaped.push(other),
        }
    }
    escaped
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refusals_escape_what_the_provider_sent() {
        assert_eq!(
            escape_html("<script>\"a\" & 'b'"),
            "&lt;script&gt;&quot;a&quot; &amp; &#39;b&#39;"
        );
    }
}
