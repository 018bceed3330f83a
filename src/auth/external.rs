//! The user of an identity from elsewhere (an OpenID Connect provider, a trusted
//! proxy): found by (issuer, subject) in `user_identities`, made at the first sign-in
//! with a free username, their groups replaced by those the sign-in brings and, when
//! the sign-in decides roles, their role set (docs/AUTH.md).

use diesel_async::AsyncConnection;
use uuid::Uuid;

use super::CredentialCache;
use crate::db::identities;
use crate::db::users::{self, NewUser, Role, UserChanges, UserRow};
use crate::db::{DbError, DbPool};

/// The issuer of the identities a trusted proxy's header names.
pub const PROXY_ISSUER: &str = "trusted-proxy";
/// The longest username or display name bor takes from elsewhere, in characters.
const MAX_NAME_CHARS: usize = 128;
/// Usernames tried with a number after a taken one (`alice-2` …) before a random one.
const NUMBERED_TRIES: u32 = 9;

/// Who signs in from elsewhere.
#[derive(Debug, Clone, PartialEq)]
pub struct Identity<'a> {
    pub issuer: &'a str,
    pub subject: &'a str,
    /// The username wanted at the first sign-in (a free variant when it is taken).
    pub username: &'a str,
    pub display_name: &'a str,
    /// Replace the user's groups by these; `None` leaves them.
    pub groups: Option<&'a [String]>,
    /// Make the user an admin (`true`) or a member (`false`); `None` leaves the role.
    pub admin: Option<bool>,
}

/// Why the sign-in from elsewhere did not give a user.
#[derive(Debug, thiserror::Error)]
pub enum ExternalError {
    #[error("this account is disabled in bor")]
    Disabled,
    #[error(transparent)]
    Db(#[from] DbError),
}

/// The user `identity` is (made now when new), brought up to date, and known to the
/// credential cache.
pub async fn sign_in(
    pool: &DbPool,
    cache: &CredentialCache,
    identity: &Identity<'_>,
) -> Result<UserRow, ExternalError> {
    let mut conn = pool.get().await?;
    let existing = match identities::user_of(&mut conn, identity.issuer, identity.subject).await? {
        Some(id) => users::find(&mut conn, id).await?,
        None => None,
    };
    let user = match existing {
        Some(user) => user,
        None => first_sign_in(&mut conn, identity).await?,
    };
    if user.disabled {
        return Err(ExternalError::Disabled);
    }
    let user = bring_up_to_date(&mut conn, user, identity).await?;
    if let Some(groups) = identity.groups {
        identities::replace_groups(&mut conn, user.id, groups).await?;
    }
    cache.remember_user(&user);
    Ok(user)
}

/// Makes the user of a new identity and links it; when another request linked it
/// first, that user.
async fn first_sign_in(
    conn: &mut diesel_async::AsyncPgConnection,
    identity: &Identity<'_>,
) -> Result<UserRow, ExternalError> {
    let display_name = clipped(identity.display_name);
    let role = if identity.admin == Some(true) {
        Role::Admin
    } else {
        Role::Member
    };
    let wanted = clipped(identity.username);
    let mut tries = (1..=NUMBERED_TRIES)
        .map(|number| match number {
            1 => wanted.clone(),
            _ => format!("{wanted}-{number}"),
        })
        .chain(std::iter::once_with(|| {
            format!("{wanted}-{}", &Uuid::new_v4().simple().to_string()[..8])
        }));
    let made = loop {
        let Some(username) = tries.next() else {
            return Err(DbError::Pool("no free username for a new user".to_owned()).into());
        };
        let new = NewUser {
            id: Uuid::new_v4(),
            username: &username,
            display_name: &display_name,
            password_hash: None,
            role: role.as_str(),
        };
        if let Some(row) = users::insert(conn, &new).await? {
            break row;
        }
    };
    if identities::link(conn, identity.issuer, identity.subject, made.id).await? {
        tracing::info!(username = %made.username, issuer = identity.issuer, "a user signed in from elsewhere for the first time");
        return Ok(made);
    }
    users::delete(conn, made.id).await?;
    let linked = identities::user_of(conn, identity.issuer, identity.subject).await?;
    match linked {
        Some(id) => users::find(conn, id)
            .await?
            .ok_or_else(|| DbError::Pool("a linked user vanished".to_owned()).into()),
        None => Err(DbError::Pool("an identity's link vanished".to_owned()).into()),
    }
}

/// Applies the display name and the role the sign-in brings. Demoting the last admin
/// who is not disabled is skipped (with a warning), as the admin API refuses it.
async fn bring_up_to_date(
    conn: &mut diesel_async::AsyncPgConnection,
    user: UserRow,
    identity: &Identity<'_>,
) -> Result<UserRow, ExternalError> {
    let display_name = clipped(identity.display_name);
    let wanted_role = identity
        .admin
        .map(|admin| if admin { Role::Admin } else { Role::Member });
    let role_change = wanted_role.filter(|role| *role != user.role());
    if display_name == user.display_name && role_change.is_none() {
        return Ok(user);
    }
    let id = user.id;
    let updated = conn
        .transaction::<_, DbError, _>(async |conn| {
            let mut changes = UserChanges {
                display_name: (display_name != user.display_name).then_some(display_name),
                ..UserChanges::default()
            };
            if let Some(role) = role_change {
                let admins = users::lock_active_admins(conn).await?;
                let last_admin = role == Role::Member && admins == [id];
                if last_admin {
                    tracing::warn!(username = %user.username, "the provider's groups would demote the last admin; the role stays admin");
                } else {
                    changes.role = Some(role.as_str().to_owned());
                }
            }
            if changes.display_name.is_none() && changes.role.is_none() {
                return Ok(Some(user));
            }
            users::update(conn, id, &changes).await
        })
        .await?;
    updated.ok_or_else(|| DbError::Pool("a user vanished while signing in".to_owned()).into())
}

/// `name` trimmed and cut to [`MAX_NAME_CHARS`].
fn clipped(name: &str) -> String {
    name.trim().chars().take(MAX_NAME_CHARS).collect()
}
