//! Sessions, keys and their users in memory, so that authenticating a request needs no
//! PostgreSQL round trip on the common path. Loaded at start; kept in step with every
//! instance through `NOTIFY` on [`CHANNEL`] (the triggers announce `user:<id>`,
//! `session:<id>`, `key:<id>` and `oauth_token:<id>`, and the row is read again). A
//! secret this instance has not heard of yet (made on another instance a moment ago)
//! is looked up in the database once.

use std::collections::HashMap;
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::{Arc, RwLock};

use chrono::{DateTime, Utc};
use futures_util::FutureExt;
use futures_util::future::BoxFuture;
use uuid::Uuid;

use super::{Caller, Readable, Via};
use crate::db::api_keys::{self, ApiKeyRow};
use crate::db::oauth::{self, AccessTokenRow};
use crate::db::sessions::{self, SessionRow};
use crate::db::users::{self, Role, UserRow};
use crate::db::{DbError, DbPool};
use crate::notify::{Follower, RETRY_DELAY};

/// The channel the accounts triggers notify.
pub const CHANNEL: &str = "bor_auth";
/// A key's `last_used_at` is written at most this often (seconds).
const KEY_USE_RECORD_SECS: i64 = 60;

/// What a credential needs to know of its user.
#[derive(Debug, Clone, PartialEq)]
struct UserEntry {
    username: String,
    display_name: String,
    role: Role,
    disabled: bool,
}

#[derive(Debug, Clone)]
struct SessionEntry {
    id: Uuid,
    user_id: Uuid,
    expires_at: DateTime<Utc>,
}

#[derive(Debug)]
struct KeyEntry {
    id: Uuid,
    user_id: Uuid,
    /// Past it the key is refused; `None`: never.
    expires_at: Option<DateTime<Utc>>,
    /// Unix seconds of the last `last_used_at` written (0: not yet by this instance).
    recorded_use: AtomicI64,
}

/// An OAuth access token: it acts for its grant's person on its resource only.
#[derive(Debug)]
struct TokenEntry {
    id: Uuid,
    grant_id: Uuid,
    user_id: Uuid,
    /// The `/mcp` address it was issued for (RFC 8707).
    resource: String,
    expires_at: DateTime<Utc>,
    /// Unix seconds of the last `last_used_at` written of its grant.
    recorded_use: AtomicI64,
}

/// What a use is recorded on: a key, or an OAuth grant.
#[derive(Debug, Clone, Copy)]
enum Used {
    Key(Uuid),
    Grant(Uuid),
}

#[derive(Debug, Default)]
struct Tables {
    users: HashMap<Uuid, UserEntry>,
    /// By the secret's SHA-256.
    sessions: HashMap<String, SessionEntry>,
    session_hashes: HashMap<Uuid, String>,
    /// By the key's SHA-256.
    keys: HashMap<String, Arc<KeyEntry>>,
    key_hashes: HashMap<Uuid, String>,
    /// OAuth access tokens by their SHA-256.
    tokens: HashMap<String, Arc<TokenEntry>>,
    token_hashes: HashMap<Uuid, String>,
}

impl Tables {
    fn put_user(&mut self, row: &UserRow) {
        self.users.insert(
            row.id,
            UserEntry {
                username: row.username.clone(),
                display_name: row.display_name.clone(),
                role: row.role(),
                disabled: row.disabled,
            },
        );
    }

    fn put_session(&mut self, row: &SessionRow) {
        self.session_hashes
            .insert(row.id, row.secret_sha256.clone());
        self.sessions.insert(
            row.secret_sha256.clone(),
            SessionEntry {
                id: row.id,
                user_id: row.user_id,
                expires_at: row.expires_at,
            },
        );
    }

    fn put_key(&mut self, row: &ApiKeyRow) {
        self.key_hashes.insert(row.id, row.key_sha256.clone());
        self.keys.insert(
            row.key_sha256.clone(),
            Arc::new(KeyEntry {
                id: row.id,
                user_id: row.user_id,
                expires_at: row.expires_at,
                recorded_use: AtomicI64::new(0),
            }),
        );
    }

    fn put_token(&mut self, row: &AccessTokenRow) {
        self.token_hashes.insert(row.id, row.token_sha256.clone());
        self.tokens.insert(
            row.token_sha256.clone(),
            Arc::new(TokenEntry {
                id: row.id,
                grant_id: row.grant_id,
                user_id: row.user_id,
                resource: row.resource.clone(),
                expires_at: row.expires_at,
                recorded_use: AtomicI64::new(0),
            }),
        );
    }

    fn forget_token(&mut self, id: Uuid) {
        if let Some(hash) = self.token_hashes.remove(&id) {
            self.tokens.remove(&hash);
        }
    }

    fn forget_tokens_where(&mut self, ended: impl Fn(&TokenEntry) -> bool) {
        let ids: Vec<Uuid> = self
            .tokens
            .values()
            .filter(|token| ended(token))
            .map(|token| token.id)
            .collect();
        ids.into_iter().for_each(|id| self.forget_token(id));
    }

    fn forget_user(&mut self, id: Uuid) {
        self.users.remove(&id);
        self.forget_credentials_of(id);
    }

    fn forget_credentials_of(&mut self, user_id: Uuid) {
        self.forget_sessions_of(user_id, None);
        let keys: Vec<Uuid> = self
            .keys
            .values()
            .filter(|key| key.user_id == user_id)
            .map(|key| key.id)
            .collect();
        for key in keys {
            self.forget_key(key);
        }
        self.forget_tokens_where(|token| token.user_id == user_id);
    }

    fn forget_sessions_of(&mut self, user_id: Uuid, keep: Option<Uuid>) {
        let ended: Vec<Uuid> = self
            .sessions
            .values()
            .filter(|session| session.user_id == user_id && Some(session.id) != keep)
            .map(|session| session.id)
            .collect();
        ended.into_iter().for_each(|id| self.forget_session(id));
    }

    fn forget_session(&mut self, id: Uuid) {
        if let Some(hash) = self.session_hashes.remove(&id) {
            self.sessions.remove(&hash);
        }
    }

    fn forget_key(&mut self, id: Uuid) {
        if let Some(hash) = self.key_hashes.remove(&id) {
            self.keys.remove(&hash);
        }
    }

    /// The key that hashes to `key_sha256`, with its caller when it is valid (not
    /// expired at `now`, its user not disabled).
    fn key_and_caller(
        &self,
        key_sha256: &str,
        now: DateTime<Utc>,
    ) -> Option<(Arc<KeyEntry>, Option<Caller>)> {
        self.keys.get(key_sha256).map(|key| {
            let live = key.expires_at.is_none_or(|expires_at| expires_at > now);
            let caller = live
                .then(|| self.caller(key.user_id, Via::ApiKey(key.id)))
                .flatten();
            (Arc::clone(key), caller)
        })
    }

    /// The token that hashes to `token_sha256`, with its caller when it is valid for
    /// `resource` (not expired at `now`, its user not disabled).
    fn token_and_caller(
        &self,
        token_sha256: &str,
        resource: &str,
        now: DateTime<Utc>,
    ) -> Option<(Arc<TokenEntry>, Option<Caller>)> {
        self.tokens.get(token_sha256).map(|token| {
            let live = token.expires_at > now && token.resource == resource;
            let caller = live
                .then(|| self.caller(token.user_id, Via::OAuthToken(token.grant_id)))
                .flatten();
            (Arc::clone(token), caller)
        })
    }

    /// The caller `user_id` is, through `via`; `None` when the user is unknown or
    /// disabled.
    fn caller(&self, user_id: Uuid, via: Via) -> Option<Caller> {
        let user = self.users.get(&user_id).filter(|user| !user.disabled)?;
        Some(Caller {
            user_id,
            username: user.username.clone(),
            display_name: user.display_name.clone(),
            role: user.role,
            via,
            readable: Readable::default(),
        })
    }
}

/// What the cache says of a credential.
enum Lookup {
    Found(Caller),
    /// Known, but not valid (expired, or its user disabled or unknown).
    Refused,
    /// Not known here.
    Unknown,
}

/// The sign-in credentials of every user, in memory.
pub struct CredentialCache {
    pool: DbPool,
    tables: RwLock<Tables>,
}

impl CredentialCache {
    /// Reads every user, unexpired session and access token, and key.
    pub async fn load(pool: DbPool) -> Result<CredentialCache, DbError> {
        let cache = CredentialCache {
            pool,
            tables: RwLock::new(Tables::default()),
        };
        cache.reload_once().await?;
        Ok(cache)
    }

    /// A cache that holds nothing yet, for the tests of what reads it.
    #[cfg(test)]
    pub(super) fn empty(pool: DbPool) -> CredentialCache {
        CredentialCache {
            pool,
            tables: RwLock::new(Tables::default()),
        }
    }

    async fn reload_once(&self) -> Result<(), DbError> {
        let mut conn = self.pool.get().await?;
        let user_rows = users::list(&mut conn).await?;
        let session_rows = sessions::unexpired(&mut conn).await?;
        let key_rows = api_keys::all(&mut conn).await?;
        let token_rows = oauth::unexpired_access_tokens(&mut conn).await?;
        let mut tables = Tables::default();
        user_rows.iter().for_each(|row| tables.put_user(row));
        session_rows.iter().for_each(|row| tables.put_session(row));
        key_rows.iter().for_each(|row| tables.put_key(row));
        token_rows.iter().for_each(|row| tables.put_token(row));
        self.write(|current| *current = tables);
        Ok(())
    }

    fn write(&self, change: impl FnOnce(&mut Tables)) {
        match self.tables.write() {
            Ok(mut tables) => change(&mut tables),
            Err(poisoned) => change(&mut poisoned.into_inner()),
        }
    }

    fn read<T>(&self, look: impl FnOnce(&Tables) -> T) -> T {
        match self.tables.read() {
            Ok(tables) => look(&tables),
            Err(poisoned) => look(&poisoned.into_inner()),
        }
    }

    /// The caller of the session whose secret hashes to `secret_sha256`.
    pub async fn session_caller(&self, secret_sha256: &str) -> Result<Option<Caller>, DbError> {
        let now = Utc::now();
        let lookup = self.read(|tables| match tables.sessions.get(secret_sha256) {
            Some(session) if session.expires_at <= now => Lookup::Refused,
            Some(session) => tables
                .caller(session.user_id, Via::Session(session.id))
                .map_or(Lookup::Refused, Lookup::Found),
            None => Lookup::Unknown,
        });
        match lookup {
            Lookup::Found(caller) => Ok(Some(caller)),
            Lookup::Refused => Ok(None),
            Lookup::Unknown => {
                let mut conn = self.pool.get().await?;
                let Some(row) = sessions::find_by_hash(&mut conn, secret_sha256).await? else {
                    return Ok(None);
                };
                let user = users::find(&mut conn, row.user_id).await?;
                self.write(|tables| {
                    user.iter().for_each(|user| tables.put_user(user));
                    tables.put_session(&row);
                });
                Ok(self
                    .read(|tables| tables.caller(row.user_id, Via::Session(row.id)))
                    .filter(|_| row.expires_at > now))
            }
        }
    }

    /// The caller of the API key that hashes to `key_sha256`; records its use (in the
    /// background, at most once a minute).
    pub async fn key_caller(&self, key_sha256: &str) -> Result<Option<Caller>, DbError> {
        let now = Utc::now();
        let found = self.read(|tables| tables.key_and_caller(key_sha256, now));
        let (key, caller) = match found {
            Some(found) => found,
            None => {
                let mut conn = self.pool.get().await?;
                let Some(row) = api_keys::find_by_hash(&mut conn, key_sha256).await? else {
                    return Ok(None);
                };
                let user = users::find(&mut conn, row.user_id).await?;
                self.write(|tables| {
                    user.iter().for_each(|user| tables.put_user(user));
                    tables.put_key(&row);
                });
                let Some(found) = self.read(|tables| tables.key_and_caller(key_sha256, now)) else {
                    return Ok(None);
                };
                found
            }
        };
        if caller.is_some() {
            self.record_use(&key.recorded_use, Used::Key(key.id));
        }
        Ok(caller)
    }

    /// The caller of the OAuth access token that hashes to `token_sha256`, when it was
    /// issued for `resource`; records its grant's use like a key's.
    pub async fn token_caller(
        &self,
        token_sha256: &str,
        resource: &str,
    ) -> Result<Option<Caller>, DbError> {
        let now = Utc::now();
        let found = self.read(|tables| tables.token_and_caller(token_sha256, resource, now));
        let (token, caller) = match found {
            Some(found) => found,
            None => {
                let mut conn = self.pool.get().await?;
                let Some(row) = oauth::find_access_token_by_hash(&mut conn, token_sha256).await?
                else {
                    return Ok(None);
                };
                let user = users::find(&mut conn, row.user_id).await?;
                self.write(|tables| {
                    user.iter().for_each(|user| tables.put_user(user));
                    tables.put_token(&row);
                });
                let Some(found) =
                    self.read(|tables| tables.token_and_caller(token_sha256, resource, now))
                else {
                    return Ok(None);
                };
                found
            }
        };
        if caller.is_some() {
            self.record_use(&token.recorded_use, Used::Grant(token.grant_id));
        }
        Ok(caller)
    }

    /// Writes `last_used_at` of what was used (in the background), unless this instance
    /// did within the last minute.
    fn record_use(&self, recorded_use: &AtomicI64, used: Used) {
        let now = Utc::now().timestamp();
        let last = recorded_use.load(Ordering::Relaxed);
        if now - last < KEY_USE_RECORD_SECS
            || recorded_use
                .compare_exchange(last, now, Ordering::Relaxed, Ordering::Relaxed)
                .is_err()
        {
            return;
        }
        let pool = self.pool.clone();
        actix_web::rt::spawn(async move {
            let result = match pool.get().await {
                Ok(mut conn) => match used {
                    Used::Key(id) => api_keys::touch(&mut conn, id).await,
                    Used::Grant(id) => oauth::touch_grant(&mut conn, id).await,
                },
                Err(error) => Err(error),
            };
            if let Err(error) = result {
                tracing::warn!(error = %bor_actors::error_chain(&error), "a key's or grant's last use could not be recorded");
            }
        });
    }

    /// The caller `user_id` is with `via` (the user as this instance knows them).
    pub fn caller_of(&self, user_id: Uuid, via: Via) -> Option<Caller> {
        self.read(|tables| tables.caller(user_id, via))
    }

    /// Whether this instance knows user `user_id` (disabled or not).
    pub fn knows_user(&self, user_id: Uuid) -> bool {
        self.read(|tables| tables.users.contains_key(&user_id))
    }

    /// Takes in a row this instance just wrote (before its notification arrives).
    pub fn remember_user(&self, row: &UserRow) {
        self.write(|tables| tables.put_user(row));
    }

    pub fn remember_session(&self, row: &SessionRow) {
        self.write(|tables| tables.put_session(row));
    }

    pub fn remember_key(&self, row: &ApiKeyRow) {
        self.write(|tables| tables.put_key(row));
    }

    pub fn forget_session(&self, id: Uuid) {
        self.write(|tables| tables.forget_session(id));
    }

    /// Forgets every session of `user_id` but `keep`.
    pub fn forget_sessions_of(&self, user_id: Uuid, keep: Option<Uuid>) {
        self.write(|tables| tables.forget_sessions_of(user_id, keep));
    }

    pub fn forget_key(&self, id: Uuid) {
        self.write(|tables| tables.forget_key(id));
    }

    pub fn remember_token(&self, row: &AccessTokenRow) {
        self.write(|tables| tables.put_token(row));
    }

    /// Forgets the access tokens of grant `grant_id` (revoked).
    pub fn forget_tokens_of_grant(&self, grant_id: Uuid) {
        self.write(|tables| tables.forget_tokens_where(|token| token.grant_id == grant_id));
    }

    /// Forgets the access token `id` (revoked).
    pub fn forget_token(&self, id: Uuid) {
        self.write(|tables| tables.forget_token(id));
    }

    /// Forgets every session, key and access token of `user_id` (revoked).
    pub fn forget_credentials_of(&self, user_id: Uuid) {
        self.write(|tables| tables.forget_credentials_of(user_id));
    }

    /// Forgets `user_id` with their sessions and keys.
    pub fn forget_user(&self, user_id: Uuid) {
        self.write(|tables| tables.forget_user(user_id));
    }

    /// Reads the rows the payloads name again.
    async fn refresh(&self, payloads: &[String]) -> Result<(), DbError> {
        let mut conn = self.pool.get().await?;
        for payload in payloads {
            let Some((kind, id)) = payload
                .split_once(':')
                .and_then(|(kind, id)| Some((kind, Uuid::parse_str(id).ok()?)))
            else {
                tracing::warn!(payload, "unknown sign-in change");
                continue;
            };
            match kind {
                "user" => match users::find(&mut conn, id).await? {
                    Some(row) => self.remember_user(&row),
                    None => self.forget_user(id),
                },
                "session" => match sessions::find(&mut conn, id).await? {
                    Some(row) => self.remember_session(&row),
                    None => self.forget_session(id),
                },
                "key" => match api_keys::find(&mut conn, id).await? {
                    Some(row) => self.remember_key(&row),
                    None => self.forget_key(id),
                },
                "oauth_token" => match oauth::find_access_token(&mut conn, id).await? {
                    Some(row) => self.remember_token(&row),
                    None => self.forget_token(id),
                },
                _ => tracing::warn!(payload, "unknown sign-in change"),
            }
        }
        Ok(())
    }

    async fn reload_until_done(&self) {
        while let Err(error) = self.reload_once().await {
            tracing::warn!(error = %bor_actors::error_chain(&error), "the sign-in cache could not be reloaded; retrying");
            tokio::time::sleep(RETRY_DELAY).await;
        }
    }
}

impl Follower for CredentialCache {
    fn channel(&self) -> &'static str {
        CHANNEL
    }

    fn apply<'a>(&'a self, payloads: &'a [String]) -> BoxFuture<'a, ()> {
        async move {
            if let Err(error) = self.refresh(payloads).await {
                tracing::warn!(error = %bor_actors::error_chain(&error), "the sign-in cache could not be updated; reloading it");
                self.reload_until_done().await;
            }
        }
        .boxed()
    }

    fn reload(&self) -> BoxFuture<'_, ()> {
        self.reload_until_done().boxed()
    }
}
