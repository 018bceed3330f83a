//! Signing in and out (docs/PROTOCOL.md, "Accounts"): `POST /api/auth/login`,
//! `POST /api/auth/logout`, `GET` and `PATCH /api/auth/me`, `POST /api/auth/password`, the ways
//! to sign in the login page offers (`GET /api/auth/providers`), and OpenID Connect
//! (`GET /api/auth/oidc/start`, `GET /api/auth/oidc/callback`, docs/AUTH.md).

use actix_web::cookie::{Cookie, SameSite};
use actix_web::{HttpRequest, HttpResponse, get, patch, post, web};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use super::body::{RequestBody, read_json_body};
use super::client_address::client_address;
use super::error::{ApiError, ErrorBody};
use crate::audit::{self, Action, Actor, Event};
use crate::auth::people::{self, PeopleError};
use crate::auth::{Caller, SESSION_COOKIE, SESSION_LIFETIME, UserView, Via};
use crate::db::sessions;
use crate::db::users::{self, UserChanges, UserRow};
use crate::state::AppState;

/// The largest sign-in or password body, in bytes.
pub const MAX_AUTH_BODY_BYTES: usize = 8 * 1024;

#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct LoginBody {
    username: String,
    password: String,
}

impl RequestBody for LoginBody {}

/// The user an answer is about.
#[derive(Serialize, ToSchema)]
pub struct UserBody {
    user: UserView,
}

/// `POST /api/auth/login` `{"username","password"}`: 200 with the user and the
/// `bor_session` cookie; one 401 `invalid_credentials` for an unknown user and a wrong
/// password; 429 `too_many_attempts` after 5 failures for the username or the address
/// within 15 minutes.
#[utoipa::path(
    tag = "accounts",
    request_body = LoginBody,
    responses(
        (status = 200, description = "signed in; the `bor_session` cookie is set", body = UserBody),
        (status = 400, description = "`invalid_json`", body = ErrorBody),
        (status = 401, description = "`invalid_credentials`: no such user, a wrong password, or a disabled user", body = ErrorBody),
        (status = 429, description = "`too_many_attempts`, with `Retry-After`", body = ErrorBody),
    )
)]
#[post("/api/auth/login")]
pub async fn login(
    request: HttpRequest,
    payload: web::Payload,
    state: web::Data<AppState>,
) -> Result<HttpResponse, ApiError> {
    let body: LoginBody = read_json_body(
        &request,
        payload,
        MAX_AUTH_BODY_BYTES,
        state.config.request_body_timeout,
    )
    .await?;
    let address = client_address(&request);
    let signed_in = state
        .accounts
        .sign_in(&state.pool, &body.username, body.password, address)
        .await;
    let user = match signed_in {
        Ok(user) => user,
        Err(PeopleError::WrongCredentials { tried }) => {
            // The name tried, only when such a user exists: a password typed into the
            // username box stays out of the trail.
            let tried = tried.unwrap_or_else(|| "(no such user)".to_owned());
            let failed =
                Event::of(&request, Action::SignInFailed, tried).by(Actor::named("anonymous"));
            audit::record(&state.pool, failed).await;
            return Err(ApiError::InvalidCredentials);
        }
        Err(error) => return Err(error.into()),
    };
    let (caller, cookie) = start_session(&state, &user)
        .await?
        .ok_or(ApiError::InvalidCredentials)?;
    let signed_in = Event::of(&request, Action::SignedIn, &user.username)
        .by(Actor::user(user.id, &user.username))
        .with(serde_json::json!({"with": "password"}));
    audit::record(&state.pool, signed_in).await;
    Ok(HttpResponse::Ok().cookie(cookie).json(UserBody {
        user: caller.user(),
    }))
}

/// A new session of `user`: its caller and the `bor_session` cookie that carries it;
/// `None` when the user may not sign in (disabled).
pub(super) async fn start_session(
    state: &AppState,
    user: &UserRow,
) -> Result<Option<(Caller, Cookie<'static>)>, ApiError> {
    let started = state.accounts.start_session(&state.pool, user).await?;
    Ok(started.map(|(caller, token)| (caller, session_cookie(state, token))))
}

/// Whether bor's cookies are `Secure`: when `BOR_PUBLIC_URL` is https.
pub(super) fn secure_cookies(state: &AppState) -> bool {
    state
        .config
        .public_url
        .as_ref()
        .is_some_and(|url| url.scheme() == "https")
}

/// The `bor_session` cookie carrying `value` (`HttpOnly`, `SameSite=Lax`, `Path=/`,
/// `Secure` when `BOR_PUBLIC_URL` is https); an empty value with no lifetime removes it.
pub(super) fn session_cookie(state: &AppState, value: String) -> Cookie<'static> {
    let secure = secure_cookies(state);
    let lifetime = if value.is_empty() {
        actix_web::cookie::time::Duration::ZERO
    } else {
        actix_web::cookie::time::Duration::seconds(SESSION_LIFETIME.num_seconds())
    };
    Cookie::build(SESSION_COOKIE, value)
        .http_only(true)
        .same_site(SameSite::Lax)
        .path("/")
        .secure(secure)
        .max_age(lifetime)
        .finish()
}

/// `POST /api/auth/logout`: 204; the session is gone on every instance and the cookie
/// removed. With a key or in `off` mode there is no session to end.
#[utoipa::path(
    tag = "accounts",
    responses(
        (status = 204, description = "signed out"),
        (status = 401, description = "`unauthorized`: not signed in", body = ErrorBody),
        (status = 403, description = "`forbidden_origin`: from another site", body = ErrorBody),
    )
)]
#[post("/api/auth/logout")]
pub async fn logout(caller: Caller, state: web::Data<AppState>) -> Result<HttpResponse, ApiError> {
    if let Via::Session(id) = caller.via {
        let mut conn = state.pool.get().await?;
        sessions::delete(&mut conn, id).await?;
        state.accounts.cache.forget_session(id);
    }
    Ok(HttpResponse::NoContent()
        .cookie(session_cookie(&state, String::new()))
        .finish())
}

/// The caller, and whether they came with a session (which they may end or whose
/// password they may change; not with a key or in `off` mode).
#[derive(Serialize, ToSchema)]
pub struct MeBody {
    user: UserView,
    session: bool,
}

/// `GET /api/auth/me`: who the caller is.
#[utoipa::path(
    tag = "accounts",
    responses(
        (status = 200, description = "the caller", body = MeBody),
        (status = 401, description = "`unauthorized`: not signed in", body = ErrorBody),
    )
)]
#[get("/api/auth/me")]
pub async fn me(caller: Caller) -> HttpResponse {
    HttpResponse::Ok().json(MeBody {
        user: caller.user(),
        session: matches!(caller.via, Via::Session(_)),
    })
}

#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ProfileBody {
    /// The name others see (1 to 64 characters).
    display_name: String,
}

impl RequestBody for ProfileBody {}

/// `PATCH /api/auth/me` `{"display_name"}`: the caller's own display name; the user
/// as they are now.
#[utoipa::path(
    tag = "accounts",
    request_body = ProfileBody,
    responses(
        (status = 200, description = "changed", body = UserBody),
        (status = 400, description = "`invalid_json`, or `invalid_username`: a display name of 1 to 64 characters", body = ErrorBody),
        (status = 401, description = "`unauthorized`: not signed in", body = ErrorBody),
        (status = 403, description = "`forbidden_origin`: from another site", body = ErrorBody),
    )
)]
#[patch("/api/auth/me")]
pub async fn update_me(
    caller: Caller,
    request: HttpRequest,
    payload: web::Payload,
    state: web::Data<AppState>,
) -> Result<HttpResponse, ApiError> {
    let body: ProfileBody = read_json_body(
        &request,
        payload,
        MAX_AUTH_BODY_BYTES,
        state.config.request_body_timeout,
    )
    .await?;
    people::check_display_name(&body.display_name)?;
    let changes = UserChanges {
        display_name: Some(body.display_name.trim().to_owned()),
        ..UserChanges::default()
    };
    let mut conn = state.pool.get().await?;
    let row = users::update(&mut conn, caller.user_id, &changes)
        .await?
        .ok_or(ApiError::Unauthorized)?;
    state.accounts.cache.remember_user(&row);
    let changed = Event::of(&request, Action::UserChanged, &row.username)
        .with(serde_json::json!({"display_name": true}));
    audit::record(&state.pool, changed).await;
    Ok(HttpResponse::Ok().json(UserBody {
        user: UserView {
            id: row.id,
            username: row.username.clone(),
            display_name: row.display_name.clone(),
            role: row.role(),
        },
    }))
}

#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct PasswordBody {
    current: String,
    new: String,
}

impl RequestBody for PasswordBody {}

/// `POST /api/auth/password` `{"current","new"}`: 204; every other session of the user
/// ends (this one stays).
#[utoipa::path(
    tag = "accounts",
    request_body = PasswordBody,
    responses(
        (status = 204, description = "changed; the user's other sessions are ended"),
        (status = 400, description = "`invalid_password`: the new one has not 12 to 1024 characters", body = ErrorBody),
        (status = 401, description = "`invalid_credentials`: the current password is wrong; `unauthorized`: not signed in", body = ErrorBody),
        (status = 403, description = "`forbidden_origin`: from another site", body = ErrorBody),
        (status = 429, description = "`too_many_attempts`, with `Retry-After`", body = ErrorBody),
    )
)]
#[post("/api/auth/password")]
pub async fn change_password(
    caller: Caller,
    request: HttpRequest,
    payload: web::Payload,
    state: web::Data<AppState>,
) -> Result<HttpResponse, ApiError> {
    let body: PasswordBody = read_json_body(
        &request,
        payload,
        MAX_AUTH_BODY_BYTES,
        state.config.request_body_timeout,
    )
    .await?;
    let address = client_address(&request);
    state
        .accounts
        .change_own_password(&state.pool, &caller, body.current, body.new, address)
        .await?;
    let changed = Event::of(&request, Action::PasswordChanged, &caller.username);
    audit::record(&state.pool, changed).await;
    Ok(HttpResponse::NoContent().finish())
}
