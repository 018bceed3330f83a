//! `usage_limits`, and the sums of `query_log` that limits and usage reports read.

use chrono::{DateTime, Utc};
use diesel::pg::Pg;
use diesel::prelude::*;
use diesel::sql_query;
use diesel::sql_types::{BigInt, Nullable, Text, Timestamptz, Uuid as SqlUuid};
use diesel_async::{AsyncPgConnection, RunQueryDsl};
use uuid::Uuid;

use super::DbError;
use super::schema::usage_limits;

/// One limit as stored.
#[derive(Debug, Clone, PartialEq, Eq, Queryable, Selectable, QueryableByName)]
#[diesel(table_name = usage_limits, check_for_backend(Pg))]
pub struct LimitRow {
    pub id: i64,
    /// `user`, `group`, `key` or `everyone`.
    pub subject: String,
    /// The user's, group's or key's id; `None` for everyone.
    pub subject_id: Option<Uuid>,
    pub turns_per_day: Option<i64>,
    pub tokens_per_day: Option<i64>,
    pub tokens_per_month: Option<i64>,
    pub created_at: DateTime<Utc>,
}

/// A limit to set: it replaces the subject's limit, if it has one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewLimit {
    pub subject: &'static str,
    pub subject_id: Option<Uuid>,
    pub turns_per_day: Option<i64>,
    pub tokens_per_day: Option<i64>,
    pub tokens_per_month: Option<i64>,
}

pub async fn all(conn: &mut AsyncPgConnection) -> Result<Vec<LimitRow>, DbError> {
    Ok(usage_limits::table
        .select(LimitRow::as_select())
        .order(usage_limits::id)
        .load(conn)
        .await?)
}

/// Sets the subject's limit (a new row, or its row changed, keeping its id).
pub async fn set(conn: &mut AsyncPgConnection, limit: &NewLimit) -> Result<LimitRow, DbError> {
    Ok(sql_query(
        "INSERT INTO usage_limits (subject, subject_id, turns_per_day, tokens_per_day, tokens_per_month)
         VALUES ($1, $2, $3, $4, $5)
         ON CONFLICT (subject, subject_id) DO UPDATE SET
             turns_per_day = EXCLUDED.turns_per_day,
             tokens_per_day = EXCLUDED.tokens_per_day,
             tokens_per_month = EXCLUDED.tokens_per_month,
             created_at = now()
         RETURNING id, subject, subject_id, turns_per_day, tokens_per_day, tokens_per_month, created_at",
    )
    .bind::<Text, _>(limit.subject)
    .bind::<Nullable<SqlUuid>, _>(limit.subject_id)
    .bind::<Nullable<BigInt>, _>(limit.turns_per_day)
    .bind::<Nullable<BigInt>, _>(limit.tokens_per_day)
    .bind::<Nullable<BigInt>, _>(limit.tokens_per_month)
    .get_result(conn)
    .await?)
}

/// Removes a limit; answers it, or `None` when there is no such limit.
pub async fn delete(conn: &mut AsyncPgConnection, id: i64) -> Result<Option<LimitRow>, DbError> {
    Ok(diesel::delete(usage_limits::table.find(id))
        .returning(LimitRow::as_returning())
        .get_result(conn)
        .await
        .optional()?)
}

/// Turns and tokens of one person or key since two instants (the day's and the
/// month's starts, the day's not before the month's).
#[derive(Debug, Clone, PartialEq, Eq, QueryableByName)]
pub struct UsageSince {
    #[diesel(sql_type = Nullable<SqlUuid>)]
    pub user_id: Option<Uuid>,
    #[diesel(sql_type = Nullable<SqlUuid>)]
    pub key_id: Option<Uuid>,
    #[diesel(sql_type = BigInt)]
    pub turns_today: i64,
    #[diesel(sql_type = BigInt)]
    pub tokens_today: i64,
    #[diesel(sql_type = BigInt)]
    pub tokens_this_month: i64,
}

/// The turns of the day and the tokens of the day and of the month, per person and key,
/// from the rows written.
pub async fn usage_since(
    conn: &mut AsyncPgConnection,
    day_start: DateTime<Utc>,
    month_start: DateTime<Utc>,
) -> Result<Vec<UsageSince>, DbError> {
    Ok(sql_query(
        "SELECT user_id, key_id,
             count(*) FILTER (WHERE created_at >= $1) AS turns_today,
             COALESCE(sum(prompt_tokens + completion_tokens) FILTER (WHERE created_at >= $1), 0)::int8 AS tokens_today,
             COALESCE(sum(prompt_tokens + completion_tokens), 0)::int8 AS tokens_this_month
         FROM query_log
         WHERE created_at >= $2 AND (user_id IS NOT NULL OR key_id IS NOT NULL)
         GROUP BY user_id, key_id",
    )
    .bind::<Timestamptz, _>(day_start)
    .bind::<Timestamptz, _>(month_start)
    .load(conn)
    .await?)
}

/// Every (group, member) pair.
pub async fn memberships(conn: &mut AsyncPgConnection) -> Result<Vec<(Uuid, Uuid)>, DbError> {
    use super::schema::group_members;
    Ok(group_members::table
        .select((group_members::group_id, group_members::user_id))
        .load(conn)
        .await?)
}

/// The names of the users, groups and keys some limits are set for.
#[derive(Debug, Default)]
pub struct SubjectNames {
    names: std::collections::HashMap<Uuid, String>,
}

impl SubjectNames {
    /// The subject's name: a username, a group's or a key's name; `everyone`; or the
    /// id of a subject that no longer exists.
    pub fn name_of(&self, subject: crate::usage::Subject) -> String {
        match subject.id() {
            None => "everyone".to_owned(),
            Some(id) => self
                .names
                .get(&id)
                .cloned()
                .unwrap_or_else(|| id.to_string()),
        }
    }
}

pub async fn subject_names(
    conn: &mut AsyncPgConnection,
    rows: &[LimitRow],
) -> Result<SubjectNames, DbError> {
    use super::schema::{api_keys, groups, users};
    let ids = |kind: &str| -> Vec<Uuid> {
        rows.iter()
            .filter(|row| row.subject == kind)
            .filter_map(|row| row.subject_id)
            .collect()
    };
    let mut names = std::collections::HashMap::new();
    let found: Vec<(Uuid, String)> = users::table
        .filter(users::id.eq_any(ids("user")))
        .select((users::id, users::username))
        .load(conn)
        .await?;
    names.extend(found);
    let found: Vec<(Uuid, String)> = groups::table
        .filter(groups::id.eq_any(ids("group")))
        .select((groups::id, groups::name))
        .load(conn)
        .await?;
    names.extend(found);
    let found: Vec<(Uuid, String)> = api_keys::table
        .filter(api_keys::id.eq_any(ids("key")))
        .select((api_keys::id, api_keys::name))
        .load(conn)
        .await?;
    names.extend(found);
    Ok(SubjectNames { names })
}

/// Sends a notification on `channel`.
pub async fn notify(pool: &super::DbPool, channel: &str, payload: &str) -> Result<(), DbError> {
    sql_query("SELECT pg_notify($1, $2)")
        .bind::<Text, _>(channel)
        .bind::<Text, _>(payload)
        .execute(&mut *pool.get().await?)
        .await?;
    Ok(())
}
