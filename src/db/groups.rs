//! `groups` and `group_members`: named sets of users, for the collections' grants.

use diesel::prelude::*;
use diesel_async::{AsyncPgConnection, RunQueryDsl};
use uuid::Uuid;

use super::DbError;
use super::schema::{group_members, groups};

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
