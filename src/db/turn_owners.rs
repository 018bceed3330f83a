//! `turn_owners`: the instance that runs each recent chat turn (docs/ARCHITECTURE.md,
//! "Readers on another instance").

use chrono::{DateTime, Utc};
use diesel::prelude::*;
use diesel::sql_query;
use diesel::sql_types::{Array, Text, Timestamptz, Uuid as SqlUuid};
use diesel_async::{AsyncPgConnection, RunQueryDsl};
use uuid::Uuid;

use super::DbError;
use super::schema::turn_owners;

/// A turn, the person who asked it, and the instance running it.
#[derive(Debug, Clone, PartialEq)]
pub struct TurnOwner {
    pub turn_id: Uuid,
    pub owner: Uuid,
    /// Where the instance is reached by the others (`BOR_INSTANCE_URL`).
    pub instance_url: String,
    pub started_at: DateTime<Utc>,
}

/// Writes several rows in one statement; a turn already written is skipped.
pub async fn insert(conn: &mut AsyncPgConnection, rows: &[TurnOwner]) -> Result<usize, DbError> {
    if rows.is_empty() {
        return Ok(0);
    }
    Ok(sql_query(
        "INSERT INTO turn_owners (turn_id, owner, instance_url, started_at)
         SELECT * FROM unnest($1::uuid[], $2::uuid[], $3::text[], $4::timestamptz[])
         ON CONFLICT (turn_id) DO NOTHING",
    )
    .bind::<Array<SqlUuid>, _>(rows.iter().map(|r| r.turn_id).collect::<Vec<_>>())
    .bind::<Array<SqlUuid>, _>(rows.iter().map(|r| r.owner).collect::<Vec<_>>())
    .bind::<Array<Text>, _>(
        rows.iter()
            .map(|r| r.instance_url.as_str())
            .collect::<Vec<_>>(),
    )
    .bind::<Array<Timestamptz>, _>(rows.iter().map(|r| r.started_at).collect::<Vec<_>>())
    .execute(conn)
    .await?)
}

/// The instance running turn `turn_id`, when it is recorded.
pub async fn instance_of(
    conn: &mut AsyncPgConnection,
    turn_id: Uuid,
) -> Result<Option<String>, DbError> {
    Ok(turn_owners::table
        .filter(turn_owners::turn_id.eq(turn_id))
        .select(turn_owners::instance_url)
        .first(conn)
        .await
        .optional()?)
}

/// Removes the rows of turns started before `before`; how many.
pub async fn remove_started_before(
    conn: &mut AsyncPgConnection,
    before: DateTime<Utc>,
) -> Result<usize, DbError> {
    Ok(
        diesel::delete(turn_owners::table.filter(turn_owners::started_at.lt(before)))
            .execute(conn)
            .await?,
    )
}
