//! The OAuth tables (docs/MCP.md, "OAuth"): registered clients, authorization codes,
//! grants (a person's consent to a client) and their access and refresh tokens. Codes,
//! tokens and client secrets are stored as their SHA-256 only.

use chrono::{DateTime, Utc};
use diesel::prelude::*;
use diesel_async::{AsyncPgConnection, RunQueryDsl};
use uuid::Uuid;

use super::DbError;
use super::schema::{
    oauth_access_tokens, oauth_clients, oauth_codes, oauth_grants, oauth_refresh_tokens,
};

#[derive(Debug, Clone, PartialEq, Queryable, Selectable, Insertable)]
#[diesel(table_name = oauth_clients, check_for_backend(diesel::pg::Pg))]
pub struct ClientRow {
    pub id: String,
    pub name: String,
    pub redirect_uris: Vec<String>,
    pub auth_method: String,
    pub secret_sha256: Option<String>,
    pub created_at: DateTime<Utc>,
}

#[derive(Debug, Clone, PartialEq, Queryable, Selectable, Insertable)]
#[diesel(table_name = oauth_codes, check_for_backend(diesel::pg::Pg))]
pub struct CodeRow {
    pub code_sha256: String,
    pub client_id: String,
    pub user_id: Uuid,
    pub redirect_uri: String,
    pub code_challenge: String,
    pub resource: String,
    pub expires_at: DateTime<Utc>,
    /// The grant its exchange made; `None` until it is exchanged.
    pub grant_id: Option<Uuid>,
}

#[derive(Debug, Clone, PartialEq, Queryable, Selectable, Insertable)]
#[diesel(table_name = oauth_grants, check_for_backend(diesel::pg::Pg))]
pub struct GrantRow {
    pub id: Uuid,
    pub user_id: Uuid,
    pub client_id: String,
    pub resource: String,
    pub created_at: DateTime<Utc>,
    pub last_used_at: Option<DateTime<Utc>>,
}

#[derive(Debug, Clone, PartialEq, Queryable, Selectable, Insertable)]
#[diesel(table_name = oauth_access_tokens, check_for_backend(diesel::pg::Pg))]
pub struct AccessTokenRow {
    pub id: Uuid,
    pub grant_id: Uuid,
    pub user_id: Uuid,
    pub token_sha256: String,
    pub resource: String,
    pub expires_at: DateTime<Utc>,
}

#[derive(Debug, Clone, PartialEq, Queryable, Selectable, Insertable)]
#[diesel(table_name = oauth_refresh_tokens, check_for_backend(diesel::pg::Pg))]
pub struct RefreshTokenRow {
    pub token_sha256: String,
    pub grant_id: Uuid,
    pub created_at: DateTime<Utc>,
    pub expires_at: DateTime<Utc>,
    pub rotated_at: Option<DateTime<Utc>>,
}

pub async fn insert_client(conn: &mut AsyncPgConnection, row: &ClientRow) -> Result<(), DbError> {
    diesel::insert_into(oauth_clients::table)
        .values(row)
        .execute(conn)
        .await?;
    Ok(())
}

pub async fn find_client(
    conn: &mut AsyncPgConnection,
    id: &str,
) -> Result<Option<ClientRow>, DbError> {
    oauth_clients::table
        .find(id)
        .select(ClientRow::as_select())
        .get_result(conn)
        .await
        .optional()
        .map_err(DbError::from)
}

/// Stores a code, and forgets the codes that expired unused.
pub async fn insert_code(conn: &mut AsyncPgConnection, row: &CodeRow) -> Result<(), DbError> {
    diesel::delete(oauth_codes::table.filter(oauth_codes::expires_at.lt(diesel::dsl::now)))
        .execute(conn)
        .await?;
    diesel::insert_into(oauth_codes::table)
        .values(row)
        .execute(conn)
        .await?;
    Ok(())
}

/// The code that hashes to `code_sha256`.
pub async fn find_code(
    conn: &mut AsyncPgConnection,
    code_sha256: &str,
) -> Result<Option<CodeRow>, DbError> {
    oauth_codes::table
        .find(code_sha256)
        .select(CodeRow::as_select())
        .get_result(conn)
        .await
        .optional()
        .map_err(DbError::from)
}

/// Forgets a code (one that failed its checks is not tried again).
pub async fn delete_code(conn: &mut AsyncPgConnection, code_sha256: &str) -> Result<(), DbError> {
    diesel::delete(oauth_codes::table.find(code_sha256))
        .execute(conn)
        .await?;
    Ok(())
}

/// Marks the code as exchanged for `grant_id`, unless it already was: whether this
/// call is the one that exchanged it (of two at the same moment, one is).
pub async fn claim_code(
    conn: &mut AsyncPgConnection,
    code_sha256: &str,
    grant_id: Uuid,
) -> Result<bool, DbError> {
    let claimed = diesel::update(
        oauth_codes::table
            .find(code_sha256)
            .filter(oauth_codes::grant_id.is_null()),
    )
    .set(oauth_codes::grant_id.eq(grant_id))
    .execute(conn)
    .await?;
    Ok(claimed == 1)
}

pub async fn insert_grant(conn: &mut AsyncPgConnection, row: &GrantRow) -> Result<(), DbError> {
    diesel::insert_into(oauth_grants::table)
        .values(row)
        .execute(conn)
        .await?;
    Ok(())
}

pub async fn find_grant(
    conn: &mut AsyncPgConnection,
    id: Uuid,
) -> Result<Option<GrantRow>, DbError> {
    oauth_grants::table
        .find(id)
        .select(GrantRow::as_select())
        .get_result(conn)
        .await
        .optional()
        .map_err(DbError::from)
}

/// The grants of `user_id` with their client's name, newest first.
pub async fn grants_of_user(
    conn: &mut AsyncPgConnection,
    user_id: Uuid,
) -> Result<Vec<(GrantRow, String)>, DbError> {
    oauth_grants::table
        .inner_join(oauth_clients::table)
        .filter(oauth_grants::user_id.eq(user_id))
        .select((GrantRow::as_select(), oauth_clients::name))
        .order((oauth_grants::created_at.desc(), oauth_grants::id))
        .load(conn)
        .await
        .map_err(DbError::from)
}

/// Revokes grant `id` with every token it led to; whether there was one.
pub async fn delete_grant(conn: &mut AsyncPgConnection, id: Uuid) -> Result<bool, DbError> {
    let deleted = diesel::delete(oauth_grants::table.find(id))
        .execute(conn)
        .await?;
    Ok(deleted > 0)
}

/// Revokes every grant of `user_id` (with their tokens).
pub async fn delete_grants_of_user(
    conn: &mut AsyncPgConnection,
    user_id: Uuid,
) -> Result<(), DbError> {
    diesel::delete(oauth_grants::table.filter(oauth_grants::user_id.eq(user_id)))
        .execute(conn)
        .await?;
    Ok(())
}

/// Records that a token of grant `id` was used now.
pub async fn touch_grant(conn: &mut AsyncPgConnection, id: Uuid) -> Result<(), DbError> {
    diesel::update(oauth_grants::table.find(id))
        .set(oauth_grants::last_used_at.eq(diesel::dsl::now))
        .execute(conn)
        .await?;
    Ok(())
}

/// Stores a new pair of tokens of a grant, and forgets the grant's expired access tokens.
pub async fn insert_tokens(
    conn: &mut AsyncPgConnection,
    access: &AccessTokenRow,
    refresh: &RefreshTokenRow,
) -> Result<(), DbError> {
    diesel::delete(
        oauth_access_tokens::table
            .filter(oauth_access_tokens::grant_id.eq(access.grant_id))
            .filter(oauth_access_tokens::expires_at.lt(diesel::dsl::now)),
    )
    .execute(conn)
    .await?;
    diesel::insert_into(oauth_access_tokens::table)
        .values(access)
        .execute(conn)
        .await?;
    diesel::insert_into(oauth_refresh_tokens::table)
        .values(refresh)
        .execute(conn)
        .await?;
    Ok(())
}

pub async fn find_access_token(
    conn: &mut AsyncPgConnection,
    id: Uuid,
) -> Result<Option<AccessTokenRow>, DbError> {
    oauth_access_tokens::table
        .find(id)
        .select(AccessTokenRow::as_select())
        .get_result(conn)
        .await
        .optional()
        .map_err(DbError::from)
}

pub async fn find_access_token_by_hash(
    conn: &mut AsyncPgConnection,
    token_sha256: &str,
) -> Result<Option<AccessTokenRow>, DbError> {
    oauth_access_tokens::table
        .filter(oauth_access_tokens::token_sha256.eq(token_sha256))
        .select(AccessTokenRow::as_select())
        .get_result(conn)
        .await
        .optional()
        .map_err(DbError::from)
}

/// Every access token not yet expired (what an instance holds in memory).
pub async fn unexpired_access_tokens(
    conn: &mut AsyncPgConnection,
) -> Result<Vec<AccessTokenRow>, DbError> {
    oauth_access_tokens::table
        .filter(oauth_access_tokens::expires_at.gt(diesel::dsl::now))
        .select(AccessTokenRow::as_select())
        .load(conn)
        .await
        .map_err(DbError::from)
}

/// Revokes the access token that hashes to `token_sha256`; the revoked row.
pub async fn delete_access_token_by_hash(
    conn: &mut AsyncPgConnection,
    token_sha256: &str,
) -> Result<Option<AccessTokenRow>, DbError> {
    diesel::delete(
        oauth_access_tokens::table.filter(oauth_access_tokens::token_sha256.eq(token_sha256)),
    )
    .returning(AccessTokenRow::as_returning())
    .get_result(conn)
    .await
    .optional()
    .map_err(DbError::from)
}

pub async fn find_refresh_token(
    conn: &mut AsyncPgConnection,
    token_sha256: &str,
) -> Result<Option<RefreshTokenRow>, DbError> {
    oauth_refresh_tokens::table
        .find(token_sha256)
        .select(RefreshTokenRow::as_select())
        .get_result(conn)
        .await
        .optional()
        .map_err(DbError::from)
}

/// Marks the refresh token as exchanged, unless it already was: the row when this call
/// is the one that rotated it, `None` otherwise (unknown, or rotated before).
pub async fn rotate_refresh_token(
    conn: &mut AsyncPgConnection,
    token_sha256: &str,
) -> Result<Option<RefreshTokenRow>, DbError> {
    diesel::update(
        oauth_refresh_tokens::table
            .find(token_sha256)
            .filter(oauth_refresh_tokens::rotated_at.is_null()),
    )
    .set(oauth_refresh_tokens::rotated_at.eq(diesel::dsl::now))
    .returning(RefreshTokenRow::as_returning())
    .get_result(conn)
    .await
    .optional()
    .map_err(DbError::from)
}
