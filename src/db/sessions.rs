//! `sessions`: who is signed in where. A row holds the SHA-256 of the cookie's secret,
//! never the secret.

use chrono::{DateTime, Utc};
use diesel::prelude::*;
use diesel_async::{AsyncPgConnection, RunQueryDsl};
use uuid::Uuid;

use super::DbError;
use super::schema::sessions;

#[derive(Debug, Clone, PartialEq, Queryable, Selectable, Insertable)]
#[diesel(table_name = sessions, check_for_backend(diesel::pg::Pg))]
pub struct SessionRow {
    pub id: Uuid,
    pub user_id: Uuid,
    pub secret_sha256: String,
    pub created_at: DateTime<Utc>,
    pub expires_at: DateTime<Utc>,
}

pub async fn insert(conn: &mut AsyncPgConnection, session: &SessionRow) -> Result<(), DbError> {
    diesel::insert_into(sessions::table)
        .values(session)
        .execute(conn)
        .await?;
    Ok(())
}

pub async fn find(conn: &mut AsyncPgConnection, id: Uuid) -> Result<Option<SessionRow>, DbError> {
    sessions::table
        .find(id)
        .select(SessionRow::as_select())
        .get_result(conn)
        .await
        .optional()
        .map_err(DbError::from)
}

/// The session whose secret hashes to `secret_sha256`.
pub async fn find_by_hash(
    conn: &mut AsyncPgConnection,
    secret_sha256: &str,
) -> Result<Option<SessionRow>, DbError> {
    sessions::table
        .filter(sessions::secret_sha256.eq(secret_sha256))
        .select(SessionRow::as_select())
        .get_result(conn)
        .await
        .optional()
        .map_err(DbError::from)
}

/// The sessions that have not expired (what an instance holds in memory).
pub async fn unexpired(conn: &mut AsyncPgConnection) -> Result<Vec<SessionRow>, DbError> {
    sessions::table
        .filter(sessions::expires_at.gt(diesel::dsl::now))
        .select(SessionRow::as_select())
        .load(conn)
        .await
        .map_err(DbError::from)
}

pub async fn delete(conn: &mut AsyncPgConnection, id: Uuid) -> Result<(), DbError> {
    diesel::delete(sessions::table.find(id))
        .execute(conn)
        .await?;
    Ok(())
}

/// Ends every session of `user_id` but `keep` (none when `None`).
pub async fn delete_for_user(
    conn: &mut AsyncPgConnection,
    user_id: Uuid,
    keep: Option<Uuid>,
) -> Result<(), DbError> {
    let of_user = sessions::table.filter(sessions::user_id.eq(user_id));
    match keep {
        Some(keep) => {
            diesel::delete(of_user.filter(sessions::id.ne(keep)))
                .execute(conn)
                .await?
        }
        None => diesel::delete(of_user).execute(conn).await?,
    };
    Ok(())
}

/// Forgets sessions that expired (they are refused anyway; this keeps the table small).
pub async fn delete_expired(conn: &mut AsyncPgConnection) -> Result<usize, DbError> {
    diesel::delete(sessions::table.filter(sessions::expires_at.le(diesel::dsl::now)))
        .execute(conn)
        .await
        .map_err(DbError::from)
}
