//! The user of an identity from elsewhere (an OpenID Connect provider, a trusted
//! proxy): found by (issuer, subject) in `user_identities`, made at the first sign-in
//! with a free username that fits the username rule, their groups replaced by those the
//! sign-in brings (the ones that fit the group name rule) and, when the sign-in decides
//! roles, their role set (docs/AUTH.md).

use uuid::Uuid;

use super::CredentialCache;
use super::people::{self, PeopleError};
use crate::db::users::{self, NewUser, Role, UserChanges, UserRow};
use crate::db::{DbError, DbPool};
use crate::db::{groups, identities};
use crate::username;

/// The issuer of the identities a trusted proxy's header names.
pub const PROXY_ISSUER: &str = "trusted-proxy";
/// The longest display name bor takes from elsewhere, in characters (longer: cut).
/// Usernames tried with a number after a taken one (`alice-2` …) before a random one.
const NUMBERED_TRIES: u32 = 9;

/// Who signs in from elsewhere.
#[derive(Debug, Clone, PartialEq)]
pub struct Identity<'a> {
    pub issuer: &'a str,
    pub subject: &'a str,
    /// The usernames wanted at the first sign-in, by preference: the first that fits
    /// the username rule (a free variant of it when it is taken).
    pub usernames: &'a [&'a str],
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
    /// None of the names offered fits the username rule (the first of them).
    #[error("the name {0:?} is not a username bor takes ({rule})", rule = username::RULE)]
    UnfitName(String),
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
        identities::replace_groups(&mut conn, user.id, &fitting_groups(groups)).await?;
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
    let wanted = wanted_username(identity)?;
    let display_name = display_name(identity.display_name, wanted);
    let role = if identity.admin == Some(true) {
        Role::Admin
    } else {
        Role::Member
    };
    let mut tries = (1..=NUMBERED_TRIES)
        .map(|number| match number {
            1 => wanted.to_owned(),
            _ => numbered(wanted, &number.to_string()),
        })
        .chain(std::iter::once_with(|| {
            numbered(wanted, &Uuid::new_v4().simple().to_string()[..8])
        }));
    let made = loop {
        let Some(username) = tries.next() else {
            return Err(DbError::Pool("no free username for a new user".to_owned()).into());
        };
        let new = NewUser::new(&username, &display_name, None, role);
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
/// who is not disabled is skipped (with a warning): the people's guard refuses it.
async fn bring_up_to_date(
    conn: &mut diesel_async::AsyncPgConnection,
    user: UserRow,
    identity: &Identity<'_>,
) -> Result<UserRow, ExternalError> {
    let display_name = display_name(identity.display_name, &user.username);
    let wanted_role = identity
        .admin
        .map(|admin| if admin { Role::Admin } else { Role::Member });
    let role_change = wanted_role.filter(|role| *role != user.role());
    if display_name == user.display_name && role_change.is_none() {
        return Ok(user);
    }
    let mut changes = UserChanges {
        display_name: (display_name != user.display_name).then_some(display_name),
        role: role_change.map(|role| role.as_str().to_owned()),
        ..UserChanges::default()
    };
    let updated = match people::update_user(conn, None, user.id, &changes).await {
        Err(PeopleError::LastAdmin) => {
            tracing::warn!(username = %user.username, "the provider's groups would demote the last admin; the role stays admin");
            changes.role = None;
            if changes.display_name.is_none() {
                return Ok(user);
            }
            people::update_user(conn, None, user.id, &changes).await
        }
        updated => updated,
    };
    match updated {
        Ok(row) => Ok(row),
        Err(PeopleError::Db(error)) => Err(error.into()),
        Err(error) => {
            Err(DbError::Pool(format!("a user could not be brought up to date: {error}")).into())
        }
    }
}

/// The first of the names offered that fits the username rule (trimmed); each one
/// passed over is logged, and when none fits the sign-in is refused.
fn wanted_username<'a>(identity: &Identity<'a>) -> Result<&'a str, ExternalError> {
    for offered in identity.usernames {
        let name = offered.trim();
        if username::fits(name) {
            return Ok(name);
        }
        tracing::warn!(name = ?offered, issuer = identity.issuer, "a name from elsewhere does not fit the username rule and is not taken as a username");
    }
    let first = identity.usernames.first().copied().unwrap_or_default();
    Err(ExternalError::UnfitName(first.to_owned()))
}

/// `wanted` with `-suffix`, cut so that the whole fits the username rule's length.
fn numbered(wanted: &str, suffix: &str) -> String {
    let room = username::MAX_USERNAME_CHARS - suffix.chars().count() - 1;
    let stem: String = wanted.chars().take(room).collect();
    format!("{stem}-{suffix}")
}

/// The display name `offered` maps to: without control or bidirectional formatting
/// characters (a right-to-left override), whitespace collapsed, cut to
/// [`username::MAX_DISPLAY_NAME_CHARS`]; the username when nothing is left.
fn display_name(offered: &str, username: &str) -> String {
    let kept: String = offered
        .chars()
        .filter(|c| !c.is_control() && !is_bidi_control(*c))
        .collect();
    let mapped: String = kept
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .chars()
        .take(username::MAX_DISPLAY_NAME_CHARS)
        .collect();
    if mapped != offered {
        tracing::info!(name = ?offered, shown = %mapped, "a display name from elsewhere was mapped to fit");
    }
    if mapped.is_empty() {
        username.to_owned()
    } else {
        mapped
    }
}

/// The characters that reorder text around them (embeddings, overrides, isolates,
/// marks).
fn is_bidi_control(c: char) -> bool {
    matches!(c, '\u{200E}' | '\u{200F}' | '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}' | '\u{061C}')
}

/// The group names that fit the group name rule, exactly as they came; the others are
/// logged and left out.
fn fitting_groups(groups: &[String]) -> Vec<String> {
    groups
        .iter()
        .filter(|name| {
            let fits = groups::name_fits(name);
            if !fits {
                tracing::warn!(group = ?name, "a group name from elsewhere does not fit the group name rule and is left out");
            }
            fits
        })
        .cloned()
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn display_names_lose_what_reorders_or_controls_text() {
        assert_eq!(display_name("Ann \u{202E}Smith", "ann"), "Ann Smith");
        assert_eq!(display_name(" \u{0}\u{202E} ", "ann"), "ann");
        assert_eq!(display_name(&"x".repeat(200), "ann").chars().count(), 64);
        assert_eq!(display_name("<b>Ann</b>", "ann"), "<b>Ann</b>");
    }

    #[test]
    fn a_numbered_username_still_fits() {
        let long = "a".repeat(64);
        let made = numbered(&long, "12345678");
        assert!(username::fits(&made), "{made}");
        assert!(made.ends_with("-12345678"));
        assert_eq!(numbered("ann", "2"), "ann-2");
    }
}
