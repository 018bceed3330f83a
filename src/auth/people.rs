//! People (docs/AUTH.md): the account rules in one place, for the admin API, the
//! person's own routes and `bor user` alike: making a user, setting and changing a
//! password (their sessions end), disabling (their sessions, keys and OAuth tokens end
//! for good), removing, the guard that never leaves bor without an admin who is not
//! disabled, the password sign-in with its limiter and its dummy hash for unknown
//! users, and a new session. Every refusal is a [`PeopleError`].

use std::net::IpAddr;
use std::time::Instant;

use chrono::Utc;
use diesel_async::{AsyncConnection, AsyncPgConnection};
use uuid::Uuid;

use super::password::{check_new_password, generate_password, hash_password};
use super::secret;
use super::{Accounts, Caller, CredentialCache, SESSION_LIFETIME, Via, revoke_credentials};
use crate::db::sessions::{self, SessionRow};
use crate::db::users::{self, NewUser, Role, UserChanges, UserRow};
use crate::db::{DbError, DbPool};
use crate::username;

/// Why an account operation did not happen.
#[derive(Debug, thiserror::Error)]
pub enum PeopleError {
    #[error("a username has {}", username::RULE)]
    InvalidUsername,
    #[error(
        "a display name has 1 to {} characters",
        username::MAX_DISPLAY_NAME_CHARS
    )]
    InvalidDisplayName,
    /// The new password does not fit the rule; the message says it.
    #[error("{0}")]
    InvalidPassword(String),
    #[error("that username is taken")]
    UsernameTaken,
    #[error("there is no such user")]
    NotFound,
    #[error("bor needs an admin who is not disabled: make another admin first")]
    LastAdmin,
    /// A wrong password, an unknown or a disabled user: one answer for all. `tried`
    /// names the user when one exists (never what was typed otherwise).
    #[error("wrong username or password")]
    WrongCredentials { tried: Option<String> },
    #[error("too many failed sign-ins; try again in {retry_after_secs} s")]
    TooManyAttempts { retry_after_secs: u64 },
    /// Randomness, hashing or the blocking thread failed.
    #[error("{doing} failed: {cause}")]
    Internal { doing: &'static str, cause: String },
    #[error(transparent)]
    Db(#[from] DbError),
}

impl PeopleError {
    fn internal(doing: &'static str, cause: impl ToString) -> PeopleError {
        PeopleError::Internal {
            doing,
            cause: cause.to_string(),
        }
    }
}

/// The username rule ([`username::fits`]).
pub fn check_username(name: &str) -> Result<(), PeopleError> {
    if username::fits(name) {
        Ok(())
    } else {
        Err(PeopleError::InvalidUsername)
    }
}

/// The display name rule ([`username::display_name_fits`]).
pub fn check_display_name(name: &str) -> Result<(), PeopleError> {
    if username::display_name_fits(name) {
        Ok(())
    } else {
        Err(PeopleError::InvalidDisplayName)
    }
}

/// The argon2id hash of a new `password` that fits the rule, made off the async
/// threads.
pub async fn new_password_hash(password: String) -> Result<String, PeopleError> {
    check_new_password(&password).map_err(PeopleError::InvalidPassword)?;
    blocking("hashing a password", move || hash_password(&password))
        .await?
        .map_err(|error| PeopleError::internal("hashing a password", error))
}

/// Runs `work` on a thread for blocking work.
async fn blocking<T: Send + 'static>(
    doing: &'static str,
    work: impl FnOnce() -> T + Send + 'static,
) -> Result<T, PeopleError> {
    tokio::task::spawn_blocking(work)
        .await
        .map_err(|error| PeopleError::internal(doing, error))
}

/// Makes a user with `password` (a generated one when `None`, returned).
pub async fn create_user(
    conn: &mut AsyncPgConnection,
    username: &str,
    display_name: Option<&str>,
    role: Role,
    password: Option<String>,
) -> Result<(UserRow, Option<String>), PeopleError> {
    check_username(username)?;
    let display_name = display_name.map(str::trim).unwrap_or(username);
    check_display_name(display_name)?;
    let (password, generated) = match password {
        Some(password) => (password, false),
        None => (
            generate_password()
                .map_err(|error| PeopleError::internal("generating a password", error))?,
            true,
        ),
    };
    let hash = new_password_hash(password.clone()).await?;
    let new = NewUser::new(username, display_name, Some(&hash), role);
    let row = users::insert(conn, &new)
        .await?
        .ok_or(PeopleError::UsernameTaken)?;
    Ok((row, generated.then_some(password)))
}

/// Applies `changes` to user `id`, unless they would leave bor without an admin who
/// is not disabled: a new password or a disable ends the user's sessions and revokes
/// their keys and OAuth grants for good in the same transaction. The instance that
/// did it knows at once through `cache` (`None` from the command line: every instance
/// hears of it through `NOTIFY`).
pub async fn update_user(
    conn: &mut AsyncPgConnection,
    cache: Option<&CredentialCache>,
    id: Uuid,
    changes: &UserChanges,
) -> Result<UserRow, PeopleError> {
    let revoke = changes.password_hash.is_some() || changes.disabled == Some(true);
    let demoted = changes
        .role
        .as_deref()
        .is_some_and(|role| Role::from_stored(role) != Role::Admin);
    let keeps_admin = !demoted && changes.disabled != Some(true);
    let row = guarded(conn, id, keeps_admin, Change::Update(changes, revoke))
        .await?
        .ok_or(PeopleError::NotFound)?;
    if let Some(cache) = cache {
        cache.remember_user(&row);
        if revoke {
            cache.forget_credentials_of(id);
        }
    }
    Ok(row)
}

/// Removes user `id` with their sessions and keys, unless they are the last admin who
/// is not disabled.
pub async fn delete_user(
    conn: &mut AsyncPgConnection,
    cache: &CredentialCache,
    id: Uuid,
) -> Result<(), PeopleError> {
    guarded(conn, id, false, Change::Delete).await?;
    cache.forget_user(id);
    Ok(())
}

/// A change to a user that may leave bor without an admin.
enum Change<'a> {
    /// The changes, and whether they end the user's sessions and revoke their keys.
    Update(&'a UserChanges, bool),
    Delete,
}

/// What a guarded change did.
enum Guarded {
    /// The user as they are now (`None` once deleted).
    Done(Option<UserRow>),
    NotFound,
    LastAdmin,
}

/// Applies `change` to user `id` in a transaction, unless it would leave no admin
/// who is not disabled: `keeps_admin` says whether the user is one afterwards. The
/// one place the last-admin guard is written.
async fn guarded(
    conn: &mut AsyncPgConnection,
    id: Uuid,
    keeps_admin: bool,
    change: Change<'_>,
) -> Result<Option<UserRow>, PeopleError> {
    let outcome = conn
        .transaction::<_, DbError, _>(async |conn| {
            let admins = users::lock_active_admins(conn).await?;
            let Some(user) = users::find(conn, id).await? else {
                return Ok(Guarded::NotFound);
            };
            let is_active_admin = user.role() == Role::Admin && !user.disabled;
            if is_active_admin && !keeps_admin && admins == [id] {
                return Ok(Guarded::LastAdmin);
            }
            Ok(Guarded::Done(match change {
                Change::Update(changes, revoke) => {
                    let row = users::update(conn, id, changes).await?;
                    if revoke {
                        revoke_credentials(conn, id).await?;
                    }
                    row
                }
                Change::Delete => {
                    users::delete(conn, id).await?;
                    None
                }
            }))
        })
        .await?;
    match outcome {
        Guarded::Done(row) => Ok(row),
        Guarded::NotFound => Err(PeopleError::NotFound),
        Guarded::LastAdmin => Err(PeopleError::LastAdmin),
    }
}

impl Accounts {
    /// The password sign-in: the user `username` names, when `password` is theirs and
    /// they are not disabled. An unknown user costs a verification too (the dummy
    /// hash); failures are counted per username and address, and past the limit
    /// refused before any is checked.
    pub async fn sign_in(
        &self,
        pool: &DbPool,
        username: &str,
        password: String,
        address: Option<IpAddr>,
    ) -> Result<UserRow, PeopleError> {
        self.check_limiter(username, address)?;
        let mut conn = pool.get().await?;
        let user = users::find_by_username(&mut conn, username)
            .await?
            .filter(|user| !user.disabled);
        let stored = user.as_ref().and_then(|user| user.password_hash.clone());
        let matches = self.verify(password, stored).await?;
        match user {
            Some(user) if matches => Ok(user),
            user => {
                self.limiter
                    .record_failure(username, address, Instant::now());
                Err(PeopleError::WrongCredentials {
                    tried: user.map(|user| user.username),
                })
            }
        }
    }

    /// A person's change of their own password, proved by the `current` one (counted
    /// by the limiter like a sign-in): every session of theirs ends but the one they
    /// came with.
    pub async fn change_own_password(
        &self,
        pool: &DbPool,
        caller: &Caller,
        current: String,
        new: String,
        address: Option<IpAddr>,
    ) -> Result<(), PeopleError> {
        check_new_password(&new).map_err(PeopleError::InvalidPassword)?;
        self.check_limiter(&caller.username, address)?;
        let mut conn = pool.get().await?;
        let stored = users::find(&mut conn, caller.user_id)
            .await?
            .and_then(|user| user.password_hash);
        if !self.verify(current, stored).await? {
            self.limiter
                .record_failure(&caller.username, address, Instant::now());
            return Err(PeopleError::WrongCredentials {
                tried: Some(caller.username.clone()),
            });
        }
        let changes = UserChanges {
            password_hash: Some(new_password_hash(new).await?),
            ..UserChanges::default()
        };
        let keep = match caller.via {
            Via::Session(id) => Some(id),
            _ => None,
        };
        users::update(&mut conn, caller.user_id, &changes).await?;
        sessions::delete_for_user(&mut conn, caller.user_id, keep).await?;
        self.cache.forget_sessions_of(caller.user_id, keep);
        Ok(())
    }

    /// A new session of `user`: its caller and the secret the session cookie carries;
    /// `None` when the user may not sign in (disabled).
    pub async fn start_session(
        &self,
        pool: &DbPool,
        user: &UserRow,
    ) -> Result<Option<(Caller, String)>, PeopleError> {
        let issued = secret::new_session_secret()
            .map_err(|error| PeopleError::internal("making a session secret", error))?;
        let now = Utc::now();
        let session = SessionRow {
            id: Uuid::new_v4(),
            user_id: user.id,
            secret_sha256: issued.sha256,
            created_at: now,
            expires_at: now + SESSION_LIFETIME,
        };
        sessions::insert(&mut *pool.get().await?, &session).await?;
        self.cache.remember_user(user);
        self.cache.remember_session(&session);
        Ok(self
            .cache
            .caller_of(user.id, Via::Session(session.id))
            .map(|caller| (caller, issued.token)))
    }

    /// Refused while the limiter holds `username` or `address` back.
    fn check_limiter(&self, username: &str, address: Option<IpAddr>) -> Result<(), PeopleError> {
        self.limiter
            .check(username, address, Instant::now())
            .map_err(|wait| PeopleError::TooManyAttempts {
                retry_after_secs: wait.as_secs(),
            })
    }

    /// Whether `password` matches `stored` (the dummy hash when `None`), off the async
    /// threads.
    async fn verify(&self, password: String, stored: Option<String>) -> Result<bool, PeopleError> {
        let verifier = self.verifier.clone();
        blocking("checking a password", move || {
            verifier.verify(&password, stored.as_deref())
        })
        .await
    }
}
