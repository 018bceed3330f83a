//! `api_keys`: keys for scripts and OpenAI clients. A row holds the SHA-256 of the
//! key and its first characters (to tell keys apart), never the key.

use chrono::{DateTime, Utc};
use diesel::prelude::*;
use diesel_async::{AsyncPgConnection, RunQueryDsl};
use serde::Serialize;
use utoipa::ToSchema;
use uuid::Uuid;

use super::DbError;
use super::schema::api_keys;

#[derive(Debug, Clone, PartialEq, Queryable, Selectable)]
#[diesel(table_name = api_keys, check_for_backend(diesel::pg::Pg))]
pub struct ApiKeyRow {
    pub id: Uuid,
    pub user_id: Uuid,
    pub name: String,
    pub prefix: String,
    pub key_sha256: String,
    pub created_at: DateTime<Utc>,
    pub last_used_at: Option<DateTime<Utc>>,
    pub expires_at: Option<DateTime<Utc>>,
}

/// A key as its owner's list (and an admin's) shows it.
#[derive(Debug, Clone, PartialEq, Serialize, Queryable, Selectable, ToSchema)]
#[diesel(table_name = api_keys, check_for_backend(diesel::pg::Pg))]
pub struct ApiKeySummary {
    pub id: Uuid,
    pub name: String,
    /// The key's first characters.
    pub prefix: String,
    pub created_at: DateTime<Utc>,
    /// `null` until the key is used (recorded at most once a minute).
    pub last_used_at: Option<DateTime<Utc>>,
    /// When the key stops working; `null`: never.
    pub expires_at: Option<DateTime<Utc>>,
}

#[derive(Debug, Clone, Insertable)]
#[diesel(table_name = api_keys)]
pub struct NewApiKey<'a> {
    pub id: Uuid,
    pub user_id: Uuid,
    pub name: &'a str,
    pub prefix: &'a str,
    pub key_sha256: &'a str,
    pub expires_at: Option<DateTime<Utc>>,
}

pub async fn insert(conn: &mut AsyncPgConnection, key: &NewApiKey<'_>) -> Result<(), DbError> {
    diesel::insert_into(api_keys::table)
        .values(key)
        .execute(conn)
        .await?;
    Ok(())
}

pub async fn find(conn: &mut AsyncPgConnection, id: Uuid) -> Result<Option<ApiKeyRow>, DbError> {
    api_keys::table
        .find(id)
        .select(ApiKeyRow::as_select())
        .get_result(conn)
        .await
        .optional()
        .map_err(DbError::from)
}

/// The key that hashes to `key_sha256`.
pub async fn find_by_hash(
    conn: &mut AsyncPgConnection,
    key_sha256: &str,
) -> Result<Option<ApiKeyRow>, DbError> {
    api_keys::table
        .filter(api_keys::key_sha256.eq(key_sha256))
        .select(ApiKeyRow::as_select())
        .get_result(conn)
        .await
        .optional()
        .map_err(DbError::from)
}

/// Every key (what an instance holds in memory).
pub async fn all(conn: &mut AsyncPgConnection) -> Result<Vec<ApiKeyRow>, DbError> {
    api_keys::table
        .select(ApiKeyRow::as_select())
        .load(conn)
        .await
        .map_err(DbError::from)
}

/// The keys of `user_id`, newest first.
pub async fn of_user(
    conn: &mut AsyncPgConnection,
    user_id: Uuid,
) -> Result<Vec<ApiKeySummary>, DbError> {
    api_keys::table
        .filter(api_keys::user_id.eq(user_id))
        .select(ApiKeySummary::as_select())
        .order((api_keys::created_at.desc(), api_keys::id))
        .load(conn)
        .await
        .map_err(DbError::from)
}

/// Revokes key `id` of `user_id`; whether there was one (another person's key is
/// as absent as a missing one).
pub async fn delete_of_user(
    conn: &mut AsyncPgConnection,
    id: Uuid,
    user_id: Uuid,
) -> Result<bool, DbError> {
    let deleted = diesel::delete(
        api_keys::table
            .find(id)
            .filter(api_keys::user_id.eq(user_id)),
    )
    .execute(conn)
    .await?;
    Ok(deleted > 0)
}

/// Revokes every key of `user_id`.
pub async fn delete_for_user(conn: &mut AsyncPgConnection, user_id: Uuid) -> Result<(), DbError> {
    diesel::delete(api_keys::table.filter(api_keys::user_id.eq(user_id)))
        .execute(conn)
        .await?;
    Ok(())
}

/// Records that key `id` was used now.
pub async fn touch(conn: &mut AsyncPgConnection, id: Uuid) -> Result<(), DbError> {
    diesel::update(api_keys::table.find(id))
        .set(api_keys::last_used_at.eq(diesel::dsl::now))
        .execute(conn)
        .await?;
    Ok(())
}
