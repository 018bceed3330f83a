//! `POST /oauth/token` and `POST /oauth/revoke`, and how a client proves who it is
//! there: its `client_id` alone (a public client, which PKCE guards), or with its
//! secret in the body or in Basic authentication.

use actix_web::http::{StatusCode, header};
use actix_web::{HttpRequest, HttpResponse, post, web};
use base64::Engine;
use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};
use chrono::Utc;
use diesel_async::AsyncConnection;
use serde::Serialize;
use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;
use utoipa::ToSchema;
use uuid::Uuid;

use super::{
    ACCESS_TOKEN_LIFETIME, OAuthError, OAuthErrorBody, Params, REFRESH_TOKEN_LIFETIME, read_form,
};
use crate::audit::{self, Action, Actor, Event};
use crate::auth::secret;
use crate::db::DbError;
use crate::db::oauth::{self, AccessTokenRow, ClientRow, CodeRow, GrantRow, RefreshTokenRow};
use crate::db::users;
use crate::http::mcp::resource_url;
use crate::state::AppState;

/// The client that sends the request, having proved it.
async fn client_of(
    state: &AppState,
    request: &HttpRequest,
    params: &Params,
) -> Result<ClientRow, OAuthError> {
    let basic = request
        .headers()
        .get(header::AUTHORIZATION)
        .and_then(|value| value.to_str().ok())
        .and_then(|value| value.strip_prefix("Basic "))
        .map(|encoded| {
            let decoded = STANDARD
                .decode(encoded.trim())
                .ok()
                .and_then(|bytes| String::from_utf8(bytes).ok())
                .ok_or_else(|| {
                    OAuthError::invalid_client("the Basic credentials cannot be read")
                })?;
            let (id, secret) = decoded.split_once(':').ok_or_else(|| {
                OAuthError::invalid_client("the Basic credentials cannot be read")
            })?;
            // RFC 6749 §2.3.1: both are form-encoded before they are joined.
            let unescape = |text: &str| {
                url::form_urlencoded::parse(format!("x={text}").as_bytes())
                    .next()
                    .map(|(_, value)| value.into_owned())
                    .unwrap_or_default()
            };
            Ok::<_, OAuthError>((unescape(id), unescape(secret)))
        })
        .transpose()?;
    let (client_id, presented) = match (&basic, params.get("client_id")) {
        (Some((id, secret)), _) => (id.as_str(), Some(secret.as_str())),
        (None, Some(id)) => (id, params.get("client_secret")),
        (None, None) => return Err(OAuthError::invalid_client("no client_id")),
    };
    let unknown = || OAuthError::invalid_client("unknown client or wrong secret");
    let mut conn = state.pool.get().await?;
    let client = oauth::find_client(&mut conn, client_id)
        .await?
        .ok_or_else(unknown)?;
    match (&client.secret_sha256, presented) {
        (None, None) => Ok(client),
        (Some(expected), Some(presented)) => {
            let hash = secret::parse_prefixed(secret::CLIENT_SECRET_PREFIX, presented)
                .ok_or_else(unknown)?;
            if bool::from(hash.as_bytes().ct_eq(expected.as_bytes())) {
                Ok(client)
            } else {
                Err(unknown())
            }
        }
        _ => Err(unknown()),
    }
}

/// What the token endpoint answers (RFC 6749 §5.1).
#[derive(Serialize, ToSchema)]
pub struct Tokens {
    /// `bor_oat_…`: for `Authorization: Bearer` on `/mcp`.
    access_token: String,
    token_type: &'static str,
    /// Seconds the access token acts (3600).
    expires_in: i64,
    /// `bor_ort_…`: exchanged once for the next pair.
    refresh_token: String,
}

/// `POST /oauth/token` (form-encoded): `grant_type=authorization_code` (`code`,
/// `redirect_uri`, `code_verifier`, `resource`?) or `refresh_token` (`refresh_token`,
/// `resource`?), with the client's `client_id` (and secret).
#[utoipa::path(
    tag = "mcp",
    request_body(content = String, content_type = "application/x-www-form-urlencoded"),
    responses(
        (status = 200, description = "a new access token and refresh token", body = Tokens),
        (status = 400, description = "`invalid_request` (a parameter missing or given twice), `invalid_grant` (a code unknown, used, expired, of another client or redirect URI, a wrong verifier; a refresh token unknown, revoked or reused), `unsupported_grant_type`, `invalid_target` (a resource other than bor's /mcp)", body = OAuthErrorBody),
        (status = 401, description = "`invalid_client`: an unknown client or a wrong secret", body = OAuthErrorBody),
    )
)]
#[post("/oauth/token")]
pub async fn token(
    request: HttpRequest,
    payload: web::Payload,
    state: web::Data<AppState>,
) -> Result<HttpResponse, OAuthError> {
    let params = read_form(&request, payload, &state).await?;
    let grant_type = params.required("grant_type")?;
    if !matches!(grant_type, "authorization_code" | "refresh_token") {
        return Err(OAuthError::bad(
            "unsupported_grant_type",
            "grant_type is authorization_code or refresh_token",
        ));
    }
    let client = client_of(&state, &request, &params).await?;
    let tokens = match grant_type {
        "authorization_code" => exchange_code(&state, &request, &params, &client).await?,
        _ => exchange_refresh(&state, &request, &params, &client).await?,
    };
    Ok(HttpResponse::Ok()
        .insert_header((header::CACHE_CONTROL, "no-store"))
        .insert_header((header::PRAGMA, "no-cache"))
        .json(tokens))
}

/// The `resource` a token request names, when it names one: it must be bor's `/mcp`
/// and the one the grant is for.
fn resource_holds(
    state: &AppState,
    request: &HttpRequest,
    params: &Params,
    granted: &str,
) -> Result<(), OAuthError> {
    let Some(asked) = params.get("resource") else {
        return Ok(());
    };
    let own = resource_url(state, request);
    if own.as_ref().map(url::Url::as_str) != Some(asked) || asked != granted {
        return Err(OAuthError::bad(
            "invalid_target",
            "bor issues tokens for its own /mcp only, the one the grant is for",
        ));
    }
    Ok(())
}

async fn exchange_code(
    state: &AppState,
    request: &HttpRequest,
    params: &Params,
    client: &ClientRow,
) -> Result<Tokens, OAuthError> {
    let code = params.required("code")?;
    let redirect_uri = params.required("redirect_uri")?;
    let verifier = params.required("code_verifier")?;
    let mut conn = state.pool.get().await?;
    let used_up = || OAuthError::invalid_grant("the code is unknown, used or expired");
    let hash = secret::sha256_hex(code);
    let row = oauth::find_code(&mut conn, &hash)
        .await?
        .filter(|row| row.client_id == client.id)
        .ok_or_else(used_up)?;
    if let Some(grant_id) = row.grant_id {
        // Exchanged before: whoever holds the tokens it gave may have stolen the code.
        let action = Action::OAuthTokensRevoked;
        revoke_grant(state, request, client, grant_id, action, "code_reused").await?;
        return Err(used_up());
    }
    // A code that fails a check is not tried again.
    let checked = code_holds(state, request, params, &row, redirect_uri, verifier);
    if let Err(refusal) = checked {
        oauth::delete_code(&mut conn, &hash).await?;
        return Err(refusal);
    }
    let user = users::find(&mut conn, row.user_id)
        .await?
        .filter(|user| !user.disabled)
        .ok_or_else(|| OAuthError::invalid_grant("the person who allowed it is disabled"))?;
    let grant = GrantRow {
        id: Uuid::new_v4(),
        user_id: row.user_id,
        client_id: client.id.clone(),
        resource: row.resource,
        created_at: Utc::now(),
        last_used_at: None,
    };
    let secrets = new_secrets()?;
    let issued = conn
        .transaction::<_, DbError, _>(async |conn| {
            oauth::insert_grant(conn, &grant).await?;
            if !oauth::claim_code(conn, &hash, grant.id).await? {
                // Another request exchanged it a moment ago: nothing of this one stays.
                return Err(DbError::Query(diesel::result::Error::RollbackTransaction));
            }
            issue_tokens(conn, &grant, secrets).await
        })
        .await;
    let (tokens, access) = match issued {
        Ok(issued) => issued,
        Err(DbError::Query(diesel::result::Error::RollbackTransaction)) => return Err(used_up()),
        Err(error) => return Err(OAuthError::from(error)),
    };
    state.accounts.cache.remember_token(&access);
    let issued = Event::of(request, Action::OAuthTokensIssued, &client.name)
        .by(Actor::user(user.id, &user.username))
        .with(serde_json::json!({"client_id": client.id, "grant_id": grant.id, "grant_type": "authorization_code"}));
    audit::record(&state.pool, issued).await;
    Ok(tokens)
}

/// Whether the code's exchange holds: before its 60 s are out, the redirect URI it was
/// issued to, the PKCE verifier of its challenge, its resource.
fn code_holds(
    state: &AppState,
    request: &HttpRequest,
    params: &Params,
    row: &CodeRow,
    redirect_uri: &str,
    verifier: &str,
) -> Result<(), OAuthError> {
    if row.expires_at <= Utc::now() {
        return Err(OAuthError::invalid_grant(
            "the code is unknown, used or expired",
        ));
    }
    if row.redirect_uri != redirect_uri {
        return Err(OAuthError::invalid_grant(
            "redirect_uri is not the one the code was issued to",
        ));
    }
    if !verifier_matches(verifier, &row.code_challenge) {
        return Err(OAuthError::invalid_grant(
            "code_verifier does not match the code_challenge",
        ));
    }
    resource_holds(state, request, params, &row.resource)
}

/// Revokes grant `grant_id` of `client` with every token it holds, for `reason`; the
/// trail says so as `action`.
async fn revoke_grant(
    state: &AppState,
    request: &HttpRequest,
    client: &ClientRow,
    grant_id: Uuid,
    action: Action,
    reason: &str,
) -> Result<(), OAuthError> {
    let mut conn = state.pool.get().await?;
    let grant = oauth::find_grant(&mut conn, grant_id).await?;
    oauth::delete_grant(&mut conn, grant_id).await?;
    state.accounts.cache.forget_tokens_of_grant(grant_id);
    let event = Event::of(request, action, &client.name)
        .by(Actor::named("OAuth client"))
        .with(serde_json::json!({
            "client_id": client.id,
            "grant_id": grant_id,
            "owner_id": grant.map(|grant| grant.user_id),
            "reason": reason,
        }));
    audit::record(&state.pool, event).await;
    Ok(())
}

async fn exchange_refresh(
    state: &AppState,
    request: &HttpRequest,
    params: &Params,
    client: &ClientRow,
) -> Result<Tokens, OAuthError> {
    let presented = params.required("refresh_token")?;
    let refused = || OAuthError::invalid_grant("the refresh token is unknown, revoked or expired");
    let hash =
        secret::parse_prefixed(secret::REFRESH_TOKEN_PREFIX, presented).ok_or_else(refused)?;
    let mut conn = state.pool.get().await?;
    let row = oauth::find_refresh_token(&mut conn, &hash)
        .await?
        .ok_or_else(refused)?;
    let grant = oauth::find_grant(&mut conn, row.grant_id)
        .await?
        .filter(|grant| grant.client_id == client.id)
        .ok_or_else(refused)?;
    if oauth::rotate_refresh_token(&mut conn, &hash)
        .await?
        .is_none()
    {
        // Exchanged before: a copy in other hands, or a replay. The whole family goes.
        let action = Action::OAuthRefreshReused;
        revoke_grant(
            state,
            request,
            client,
            grant.id,
            action,
            "refresh_token_reused",
        )
        .await?;
        return Err(OAuthError::invalid_grant(
            "the refresh token was used before; every token of its grant is revoked",
        ));
    }
    if row.expires_at <= Utc::now() {
        return Err(refused());
    }
    resource_holds(state, request, params, &grant.resource)?;
    let user = users::find(&mut conn, grant.user_id)
        .await?
        .filter(|user| !user.disabled)
        .ok_or_else(refused)?;
    let (tokens, access) = issue_tokens(&mut conn, &grant, new_secrets()?).await?;
    state.accounts.cache.remember_token(&access);
    let issued = Event::of(request, Action::OAuthTokensIssued, &client.name)
        .by(Actor::user(user.id, &user.username))
        .with(serde_json::json!({"client_id": client.id, "grant_id": grant.id, "grant_type": "refresh_token"}));
    audit::record(&state.pool, issued).await;
    Ok(tokens)
}

/// Whether BASE64URL(SHA-256(`verifier`)) is `challenge` (RFC 7636 §4.6), the verifier
/// being 43 to 128 unreserved characters.
fn verifier_matches(verifier: &str, challenge: &str) -> bool {
    let well_formed = (43..=128).contains(&verifier.len())
        && verifier
            .bytes()
            .all(|byte| byte.is_ascii_alphanumeric() || b"-._~".contains(&byte));
    let computed = URL_SAFE_NO_PAD.encode(Sha256::digest(verifier.as_bytes()));
    well_formed && bool::from(computed.as_bytes().ct_eq(challenge.as_bytes()))
}

/// A new access token and refresh token, to store as their hashes.
fn new_secrets() -> Result<(secret::Issued, secret::Issued), OAuthError> {
    let made = secret::new_prefixed(secret::ACCESS_TOKEN_PREFIX).and_then(|access| {
        secret::new_prefixed(secret::REFRESH_TOKEN_PREFIX).map(|refresh| (access, refresh))
    });
    made.map_err(|error| {
        OAuthError::new(
            StatusCode::INTERNAL_SERVER_ERROR,
            "server_error",
            error.to_string(),
        )
    })
}

/// Stores `secrets` (an access token and a refresh token) as tokens of `grant`.
async fn issue_tokens(
    conn: &mut diesel_async::AsyncPgConnection,
    grant: &GrantRow,
    (access, refresh): (secret::Issued, secret::Issued),
) -> Result<(Tokens, AccessTokenRow), DbError> {
    let now = Utc::now();
    let access_row = AccessTokenRow {
        id: Uuid::new_v4(),
        grant_id: grant.id,
        user_id: grant.user_id,
        token_sha256: access.sha256,
        resource: grant.resource.clone(),
        expires_at: now + ACCESS_TOKEN_LIFETIME,
    };
    let refresh_row = RefreshTokenRow {
        token_sha256: refresh.sha256,
        grant_id: grant.id,
        created_at: now,
        expires_at: now + REFRESH_TOKEN_LIFETIME,
        rotated_at: None,
    };
    oauth::insert_tokens(conn, &access_row, &refresh_row).await?;
    Ok((
        Tokens {
            access_token: access.token,
            token_type: "Bearer",
            expires_in: ACCESS_TOKEN_LIFETIME.num_seconds(),
            refresh_token: refresh.token,
        },
        access_row,
    ))
}

/// `POST /oauth/revoke` (RFC 7009, form-encoded): `token` (an access token, or a
/// refresh token, which revokes its whole grant), with the client's `client_id` (and
/// secret). 200 whether or not the token was live: a client learns nothing of tokens
/// that are not its own.
#[utoipa::path(
    tag = "mcp",
    request_body(content = String, content_type = "application/x-www-form-urlencoded"),
    responses(
        (status = 200, description = "the token no longer acts (or never did)"),
        (status = 400, description = "`invalid_request`: no `token`", body = OAuthErrorBody),
        (status = 401, description = "`invalid_client`", body = OAuthErrorBody),
    )
)]
#[post("/oauth/revoke")]
pub async fn revoke(
    request: HttpRequest,
    payload: web::Payload,
    state: web::Data<AppState>,
) -> Result<HttpResponse, OAuthError> {
    let params = read_form(&request, payload, &state).await?;
    let client = client_of(&state, &request, &params).await?;
    let presented = params.required("token")?;
    let mut conn = state.pool.get().await?;
    let hash = secret::sha256_hex(presented);
    let of_client = |grant: &Option<GrantRow>| {
        grant
            .as_ref()
            .is_some_and(|grant| grant.client_id == client.id)
    };
    let mut revoked = None;
    if presented.starts_with(secret::ACCESS_TOKEN_PREFIX) {
        if let Some(row) = oauth::find_access_token_by_hash(&mut conn, &hash).await? {
            let grant = oauth::find_grant(&mut conn, row.grant_id).await?;
            if of_client(&grant) {
                oauth::delete_access_token_by_hash(&mut conn, &hash).await?;
                state.accounts.cache.forget_token(row.id);
                revoked = grant.map(|grant| (grant, "access_token"));
            }
        }
    } else if presented.starts_with(secret::REFRESH_TOKEN_PREFIX)
        && let Some(row) = oauth::find_refresh_token(&mut conn, &hash).await?
    {
        let grant = oauth::find_grant(&mut conn, row.grant_id).await?;
        if of_client(&grant) {
            oauth::delete_grant(&mut conn, row.grant_id).await?;
            state.accounts.cache.forget_tokens_of_grant(row.grant_id);
            revoked = grant.map(|grant| (grant, "refresh_token"));
        }
    }
    if let Some((grant, kind)) = revoked {
        let event = Event::of(&request, Action::OAuthTokensRevoked, &client.name)
            .by(Actor::named("OAuth client"))
            .with(serde_json::json!({"client_id": client.id, "grant_id": grant.id, "owner_id": grant.user_id, "token": kind}));
        audit::record(&state.pool, event).await;
    }
    Ok(HttpResponse::build(StatusCode::OK)
        .insert_header((header::CACHE_CONTROL, "no-store"))
        .finish())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_verifier_of_rfc_7636_matches_its_challenge() {
        let verifier = "dBjftJeZ4CVP-mJ92K1qkddgHhjA_8kW5G9ZdIsk5Ic";
        let challenge = "d4RF7PMn49N_QfDUzgoWZO31EsKhRUNbpVlCGIeccFU";
        assert!(verifier_matches(verifier, challenge));
        assert!(!verifier_matches(
            "dBjftJeZ4CVP-mJ92K1qkddgHhjA_8kW5G9ZdIsk5Id",
            challenge
        ));
        assert!(!verifier_matches("short", challenge));
    }
}
