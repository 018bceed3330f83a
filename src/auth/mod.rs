//! Who asks (docs/PROTOCOL.md "Accounts", docs/AUTH.md): decided once per request
//! from what the request presented ([`Accounts::decide`]) and handed by the HTTP door
//! to every handler as a [`Caller`] value. Ways to be somebody: an API key, the service token (on
//! `/api/admin/*` only), the `bor_session` cookie, a trusted proxy's header, and in
//! `off` mode the built-in admin `local`.
//!
//! - `secret.rs`: session and key secrets, their parsers and hashes
//! - `password.rs`: argon2id hashes, the dummy verification for unknown users
//! - `people.rs`: the account rules: making, changing, disabling and removing people
//!   (never the last admin), passwords, the password sign-in, a new session
//! - `cache.rs`: sessions, keys and users in memory, kept in step through `NOTIFY`
//! - `limiter.rs`: failed sign-ins per username and per address
//! - `origin.rs`: the cross-site rule for cookie-authenticated changes
//! - `identify.rs`: who asks and whether they may go on, from what a request presented
//! - `access.rs`: which collections each caller may read and write
//! - `oidc.rs`: OpenID Connect: discovery, the authorization request, the ID token's checks
//! - `oidc_sign_in.rs`: the OpenID Connect sign-in as one operation (begin, complete)
//! - `proxy.rs`: the trusted proxy's header, from trusted addresses only
//! - `client_address.rs`: the client's address, from `X-Forwarded-For` of trusted proxies only
//! - `external.rs`: the user of an identity from elsewhere, made at the first sign-in
//!
//! OpenID Connect ends in a session row like the password does; the proxy's header is
//! a step of `identify.rs`. What a caller may read (collections) is a field of
//! [`Caller`], filled from [`AccessMap`] when the caller is decided.

pub mod access;
mod cache;
pub mod client_address;
pub mod external;
mod identify;
mod limiter;
pub mod oidc;
pub mod oidc_sign_in;
pub mod origin;
pub mod password;
pub mod people;
mod proxy;
pub mod secret;

use std::sync::Arc;

use chrono::{DateTime, Utc};
use serde::Serialize;
use utoipa::ToSchema;
use uuid::Uuid;

pub use access::{AccessMap, Readable};
pub use cache::{CHANNEL, CredentialCache};
pub use identify::{AdminVerdict, Area, Denial, Headers, Presented, SESSION_COOKIE};
pub use limiter::FailureLimiter;
pub use oidc::OidcProvider;
pub use origin::public_base;
pub use password::Verifier;
pub use proxy::TrustedProxy;

use crate::config::{AuthMode, Config, Secret};
use crate::db::users::{self, NewUser, Role, UserRow};
use crate::db::{DbError, DbPool};
use crate::db::{api_keys, oauth, sessions};

/// How long a session lasts after sign-in (docs/LIMITS.md).
pub const SESSION_LIFETIME: chrono::TimeDelta = chrono::TimeDelta::days(30);
/// The user every request acts as in `off` mode.
pub const LOCAL_USERNAME: &str = "local";

/// How the caller proved who they are.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Via {
    /// The `bor_session` cookie of this session.
    Session(Uuid),
    /// `Authorization: Bearer bor_…` with this key.
    ApiKey(Uuid),
    /// `Authorization: Bearer bor_oat_…`: an OAuth access token of this grant, on
    /// `/mcp` only.
    OAuthToken(Uuid),
    /// `Authorization: Bearer <BOR_ADMIN_TOKEN>`: an admin with no user row (the nil
    /// id), on `/api/admin/*` only.
    ServiceToken,
    /// The header of a proxy in `BOR_AUTH_PROXY_TRUSTED`.
    TrustedProxy,
    /// `BOR_AUTH=off`: every request is the built-in admin `local`.
    Local,
}

/// Who asks: what every route, turn and tool is handed.
#[derive(Debug, Clone, PartialEq)]
pub struct Caller {
    /// The user's row (`Uuid::nil()` for the service token, which has none).
    pub user_id: Uuid,
    pub username: String,
    pub display_name: String,
    pub role: Role,
    pub via: Via,
    /// The collections they may read and write, as the door found them.
    pub readable: Readable,
}

impl Caller {
    pub fn is_admin(&self) -> bool {
        self.role == Role::Admin
    }

    /// The caller's user row; `None` for the service token, which has none.
    pub fn user_row(&self) -> Option<Uuid> {
        (self.via != Via::ServiceToken).then_some(self.user_id)
    }

    /// Who adds a document the caller stores: the person, or the service token.
    pub fn adder(&self) -> crate::db::documents::Adder {
        use crate::db::documents::Adder;
        self.user_row().map_or(Adder::ServiceToken, Adder::Person)
    }

    /// The API key the caller came with, if that is how.
    pub fn key_id(&self) -> Option<Uuid> {
        match self.via {
            Via::ApiKey(id) => Some(id),
            _ => None,
        }
    }

    /// The caller the service token is.
    fn service() -> Caller {
        Caller {
            user_id: Uuid::nil(),
            username: "service".to_owned(),
            display_name: "Service token".to_owned(),
            role: Role::Admin,
            via: Via::ServiceToken,
            readable: Readable::everything(),
        }
    }

    /// The user as the API shows them.
    pub fn user(&self) -> UserView {
        UserView {
            id: self.user_id,
            username: self.username.clone(),
            display_name: self.display_name.clone(),
            role: self.role,
        }
    }
}

/// A user as `/api/auth/*` shows them.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct UserView {
    pub id: Uuid,
    pub username: String,
    pub display_name: String,
    pub role: Role,
}

/// A user as the admin API lists them.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct AdminUserView {
    pub id: Uuid,
    pub username: String,
    pub display_name: String,
    pub role: Role,
    pub disabled: bool,
    pub created_at: DateTime<Utc>,
    /// The names of the groups they belong to.
    pub groups: Vec<String>,
}

impl From<&UserRow> for AdminUserView {
    fn from(row: &UserRow) -> Self {
        AdminUserView {
            id: row.id,
            username: row.username.clone(),
            display_name: row.display_name.clone(),
            role: row.role(),
            disabled: row.disabled,
            created_at: row.created_at,
            groups: Vec::new(),
        }
    }
}

/// Everything sign-in needs, shared by the handlers.
pub struct Accounts {
    pub mode: AuthMode,
    pub cache: Arc<CredentialCache>,
    pub limiter: FailureLimiter,
    pub verifier: Verifier,
    /// Who may read which collection.
    pub access: Arc<AccessMap>,
    /// The OpenID Connect provider (`BOR_OIDC_ISSUER`), when one is configured.
    pub oidc: Option<OidcProvider>,
    /// The trusted proxy's header (`BOR_AUTH_PROXY_HEADER`), when one is configured.
    pub proxy: Option<TrustedProxy>,
    /// `off` mode's caller.
    local: Option<Caller>,
    /// `BOR_ADMIN_TOKEN`: with `accounts` an admin on `/api/admin/*`, with `off` the
    /// key to the admin routes.
    service_token: Option<Secret>,
}

impl Accounts {
    /// Loads the credentials; in `off` mode makes sure the user `local` exists.
    pub async fn start(config: &Config, pool: DbPool) -> Result<Accounts, DbError> {
        let mode = config.auth;
        let local = match mode {
            AuthMode::Off => Some(ensure_local_user(&pool).await?),
            AuthMode::Accounts => None,
        };
        let expired = sessions::delete_expired(&mut *pool.get().await?).await?;
        if expired > 0 {
            tracing::info!(expired, "expired sessions removed");
        }
        let cache = Arc::new(CredentialCache::load(pool.clone()).await?);
        let verifier = Verifier::default();
        verifier.prepare();
        let access = Arc::new(AccessMap::load(pool).await?);
        Ok(Accounts {
            mode,
            cache,
            access,
            limiter: FailureLimiter::default(),
            verifier,
            oidc: OidcProvider::from_config(config),
            proxy: TrustedProxy::from_config(config),
            local,
            service_token: config.admin_token.clone(),
        })
    }
}

#[cfg(test)]
impl Accounts {
    /// Accounts of `mode` over a pool that reaches no database and an empty cache,
    /// for the tests of the decisions made from memory.
    fn for_tests(mode: AuthMode, service_token: Option<&str>) -> Accounts {
        let pool =
            DbPool::new("postgres://127.0.0.1:9/none", 1).unwrap_or_else(|error| panic!("{error}"));
        let local = Caller {
            user_id: Uuid::from_u128(1),
            username: LOCAL_USERNAME.to_owned(),
            display_name: LOCAL_USERNAME.to_owned(),
            role: Role::Admin,
            via: Via::Local,
            readable: Readable::everything(),
        };
        Accounts {
            mode,
            cache: Arc::new(CredentialCache::empty(pool.clone())),
            limiter: FailureLimiter::default(),
            verifier: Verifier::default(),
            access: Arc::new(AccessMap::empty(pool)),
            oidc: None,
            proxy: None,
            local: (mode == AuthMode::Off).then_some(local),
            service_token: service_token.map(Secret::new),
        }
    }
}

/// Ends every session of `user_id` and revokes every key and OAuth grant of theirs, for good: what
/// disabling a person and an admin's new password for them do (docs/AUTH.md, "What
/// ends what"). Every instance hears of it through `NOTIFY`; the one that did it
/// forgets them at once with [`CredentialCache::forget_credentials_of`].
pub async fn revoke_credentials(
    conn: &mut diesel_async::AsyncPgConnection,
    user_id: Uuid,
) -> Result<(), DbError> {
    sessions::delete_for_user(conn, user_id, None).await?;
    oauth::delete_grants_of_user(conn, user_id).await?;
    api_keys::delete_for_user(conn, user_id).await
}

/// The row of `off` mode's `local` admin, made when missing.
async fn ensure_local_user(pool: &DbPool) -> Result<Caller, DbError> {
    let mut conn = pool.get().await?;
    let existing = users::find_by_username(&mut conn, LOCAL_USERNAME).await?;
    let row = match existing {
        Some(row) => row,
        None => {
            let new = NewUser::new(LOCAL_USERNAME, LOCAL_USERNAME, None, Role::Admin);
            match users::insert(&mut conn, &new).await? {
                Some(row) => row,
                // Made by another instance starting at the same time.
                None => users::find_by_username(&mut conn, LOCAL_USERNAME)
                    .await?
                    .ok_or_else(|| DbError::Pool("the local user vanished".to_owned()))?,
            }
        }
    };
    Ok(Caller {
        user_id: row.id,
        username: row.username,
        display_name: row.display_name,
        role: Role::Admin,
        via: Via::Local,
        readable: Readable::everything(),
    })
}
