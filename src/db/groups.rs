//! `groups` and `group_members`: named sets of users, for the collections' grants. The
//! group [`EVERYONE`] is built in: it holds every user without member rows.

use chrono::{DateTime, Utc};
use diesel::prelude::*;
use diesel_async::{AsyncConnection, AsyncPgConnection, RunQueryDsl};
use uuid::Uuid;

use super::DbError;
use super::schema::{group_members, groups, users};

/// The built-in group of every user (made by the grants migration).
pub const EVERYONE: &str = "everyone";
/// Longest group name, in characters.
pub const MAX_NAME_CHARS: usize = 64;
/// The group name rule, as refusals say it.
pub const NAME_RULE: &str =
    "a group name has 1 to 64 characters, not blank, without control characters";

/// Whether `name` fits the group name rule, however it arrives (an admin, an identity
/// provider's claim, a trusted proxy's header): 1 to [`MAX_NAME_CHARS`] characters,
/// not blank, without control characters.
pub fn name_fits(name: &str) -> bool {
    !name.trim().is_empty()
        && name.chars().count() <= MAX_NAME_CHARS
        && !name.chars().any(char::is_control)
}

#[derive(Debug, Clone, PartialEq, Eq, Queryable, Selectable)]
#[diesel(table_name = groups, check_for_backend(diesel::pg::Pg))]
pub struct GroupRow {
    pub id: Uuid,
    pub name: String,
    pub created_at: DateTime<Utc>,
}

/// Every membership as (user id, group name), by group name.
pub async fn memberships(conn: &mut AsyncPgConnection) -> Result<Vec<(Uuid, String)>, DbError> {
    group_members::table
        .inner_join(groups::table)
        .select((group_members::user_id, groups::name))
        .order(groups::name)
        .load(conn)
        .await
        .map_err(DbError::from)
}

/// Every membership as (group id, user id).
pub async fn member_ids(conn: &mut AsyncPgConnection) -> Result<Vec<(Uuid, Uuid)>, DbError> {
    Ok(group_members::table
        .select((group_members::group_id, group_members::user_id))
        .load(conn)
        .await?)
}

/// Every membership as (group id, username), by username.
pub async fn member_names(conn: &mut AsyncPgConnection) -> Result<Vec<(Uuid, String)>, DbError> {
    Ok(group_members::table
        .inner_join(users::table)
        .select((group_members::group_id, users::username))
        .order(users::username)
        .load(conn)
        .await?)
}

/// Every group, by name.
pub async fn all(conn: &mut AsyncPgConnection) -> Result<Vec<GroupRow>, DbError> {
    Ok(groups::table
        .select(GroupRow::as_select())
        .order(groups::name)
        .load(conn)
        .await?)
}

pub async fn by_name(
    conn: &mut AsyncPgConnection,
    name: &str,
) -> Result<Option<GroupRow>, DbError> {
    Ok(groups::table
        .filter(groups::name.eq(name))
        .select(GroupRow::as_select())
        .first(conn)
        .await
        .optional()?)
}

/// Makes a group; `None` when one of that name exists.
pub async fn create(conn: &mut AsyncPgConnection, name: &str) -> Result<Option<GroupRow>, DbError> {
    Ok(diesel::insert_into(groups::table)
        .values((groups::id.eq(Uuid::new_v4()), groups::name.eq(name)))
        .on_conflict(groups::name)
        .do_nothing()
        .returning(GroupRow::as_returning())
        .get_result(conn)
        .await
        .optional()?)
}

/// Deletes a group with its memberships and grants; false when there was none.
pub async fn delete(conn: &mut AsyncPgConnection, name: &str) -> Result<bool, DbError> {
    let deleted = diesel::delete(groups::table.filter(groups::name.eq(name)))
        .execute(conn)
        .await?;
    Ok(deleted > 0)
}

/// Makes `users` the members of the group, and only them, in one transaction.
pub async fn set_members(
    conn: &mut AsyncPgConnection,
    group_id: Uuid,
    users: &[Uuid],
) -> Result<(), DbError> {
    let rows: Vec<_> = users
        .iter()
        .map(|user| {
            (
                group_members::group_id.eq(group_id),
                group_members::user_id.eq(*user),
            )
        })
        .collect();
    conn.transaction::<_, DbError, _>(async |conn| {
        diesel::delete(group_members::table.filter(group_members::group_id.eq(group_id)))
            .execute(conn)
            .await?;
        if !rows.is_empty() {
            diesel::insert_into(group_members::table)
                .values(rows)
                .on_conflict_do_nothing()
                .execute(conn)
                .await?;
        }
        Ok(())
    })
    .await
}
