//! `user_identities` and `oidc_logins`: who a person is at an OpenID Connect provider
//! or behind a trusted proxy, the sign-ins under way, and the groups such a sign-in
//! brings (docs/AUTH.md).

use chrono::{DateTime, Utc};
use diesel::prelude::*;
use diesel_async::{AsyncConnection, AsyncPgConnection, RunQueryDsl};
use uuid::Uuid;

use super::DbError;
use super::groups::EVERYONE;
use super::schema::{group_members, groups, oidc_logins, user_identities};

/// The user of `subject` at `issuer`, when they signed in before.
pub async fn user_of(
    conn: &mut AsyncPgConnection,
    issuer: &str,
    subject: &str,
) -> Result<Option<Uuid>, DbError> {
    user_identities::table
        .find((issuer, subject))
        .select(user_identities::user_id)
        .get_result(conn)
        .await
        .optional()
        .map_err(DbError::from)
}

/// Records that `subject` at `issuer` is `user_id`; `false` when another request
/// recorded them first.
pub async fn link(
    conn: &mut AsyncPgConnection,
    issuer: &str,
    subject: &str,
    user_id: Uuid,
) -> Result<bool, DbError> {
    let inserted = diesel::insert_into(user_identities::table)
        .values((
            user_identities::issuer.eq(issuer),
            user_identities::subject.eq(subject),
            user_identities::user_id.eq(user_id),
        ))
        .on_conflict_do_nothing()
        .execute(conn)
        .await?;
    Ok(inserted > 0)
}

/// Makes `user_id` a member of exactly `names` (groups made when absent), leaving
/// [`EVERYONE`] (which holds every user without member rows) out of it, in one
/// transaction.
pub async fn replace_groups(
    conn: &mut AsyncPgConnection,
    user_id: Uuid,
    names: &[String],
) -> Result<(), DbError> {
    let names: Vec<&str> = names
        .iter()
        .map(String::as_str)
        .filter(|name| *name != EVERYONE)
        .collect();
    conn.transaction::<_, DbError, _>(async |conn| {
        let new_groups: Vec<_> = names
            .iter()
            .map(|name| (groups::id.eq(Uuid::new_v4()), groups::name.eq(*name)))
            .collect();
        diesel::insert_into(groups::table)
            .values(&new_groups)
            .on_conflict(groups::name)
            .do_nothing()
            .execute(conn)
            .await?;
        let wanted: Vec<Uuid> = groups::table
            .filter(groups::name.eq_any(&names))
            .select(groups::id)
            .load(conn)
            .await?;
        let everyone = groups::table
            .filter(groups::name.eq(EVERYONE))
            .select(groups::id);
        diesel::delete(
            group_members::table
                .filter(group_members::user_id.eq(user_id))
                .filter(group_members::group_id.ne_all(&wanted))
                .filter(group_members::group_id.ne_all(everyone)),
        )
        .execute(conn)
        .await?;
        let memberships: Vec<_> = wanted
            .iter()
            .map(|group_id| {
                (
                    group_members::group_id.eq(*group_id),
                    group_members::user_id.eq(user_id),
                )
            })
            .collect();
        diesel::insert_into(group_members::table)
            .values(&memberships)
            .on_conflict_do_nothing()
            .execute(conn)
            .await?;
        Ok(())
    })
    .await
}

/// An OpenID Connect sign-in under way (see the migration).
#[derive(Debug, Clone, PartialEq, Queryable, Selectable, Insertable)]
#[diesel(table_name = oidc_logins, check_for_backend(diesel::pg::Pg))]
pub struct OidcLoginRow {
    pub state: String,
    pub browser_sha256: String,
    pub nonce: String,
    pub pkce_verifier: String,
    pub next_path: String,
    pub expires_at: DateTime<Utc>,
}

/// Stores `login`, and removes the expired ones.
pub async fn start_login(
    conn: &mut AsyncPgConnection,
    login: &OidcLoginRow,
) -> Result<(), DbError> {
    diesel::delete(oidc_logins::table.filter(oidc_logins::expires_at.lt(diesel::dsl::now)))
        .execute(conn)
        .await?;
    diesel::insert_into(oidc_logins::table)
        .values(login)
        .execute(conn)
        .await?;
    Ok(())
}

/// Takes (removes and returns) the sign-in of `state`: a state serves once.
pub async fn take_login(
    conn: &mut AsyncPgConnection,
    state: &str,
) -> Result<Option<OidcLoginRow>, DbError> {
    diesel::delete(oidc_logins::table.find(state))
        .returning(OidcLoginRow::as_returning())
        .get_result(conn)
        .await
        .optional()
        .map_err(DbError::from)
}
