//! `turn_feedback`, `feedback_expected` and `eval_runs`: the asker's rating of a turn,
//! the passages an admin says should have been found for it, and each run of the
//! evaluation set those make (docs/PROTOCOL.md, "Feedback").

use chrono::{DateTime, Utc};
use diesel::prelude::*;
use diesel::sql_query;
use diesel::sql_types::{Array, BigInt, Jsonb, Nullable, Text, Timestamptz, Uuid as SqlUuid};
use diesel_async::{AsyncPgConnection, RunQueryDsl};
use serde::Serialize;
use utoipa::ToSchema;
use uuid::Uuid;

use super::DbError;
use super::schema::{eval_runs, query_log};
use super::words::Word;
use crate::feedback::{Feedback, Rating, Reason};

/// A rating as the asker and the admins see it.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct StoredFeedback {
    pub rating: Rating,
    pub reason: Option<Reason>,
    /// `""` when none.
    pub comment: String,
    pub updated_at: DateTime<Utc>,
}

#[derive(QueryableByName)]
struct FeedbackRow {
    #[diesel(sql_type = SqlUuid)]
    turn_id: Uuid,
    #[diesel(sql_type = Text)]
    rating: Word<Rating>,
    #[diesel(sql_type = Nullable<Text>)]
    reason: Option<Word<Reason>>,
    #[diesel(sql_type = Text)]
    comment: String,
    #[diesel(sql_type = Timestamptz)]
    updated_at: DateTime<Utc>,
}

impl FeedbackRow {
    fn stored(self) -> (Uuid, StoredFeedback) {
        (
            self.turn_id,
            StoredFeedback {
                rating: self.rating.0,
                reason: self.reason.map(|word| word.0),
                comment: self.comment,
                updated_at: self.updated_at,
            },
        )
    }
}

/// Who asked the turn: `None` when no row of it is stored; `Some(None)` for a row of no
/// user (from before accounts).
pub async fn asker(
    conn: &mut AsyncPgConnection,
    turn_id: Uuid,
) -> Result<Option<Option<Uuid>>, DbError> {
    Ok(query_log::table
        .filter(query_log::turn_id.eq(turn_id))
        .select(query_log::user_id)
        .first::<Option<Uuid>>(conn)
        .await
        .optional()?)
}

/// Stores the rating of `turn_id` by `user_id`, replacing theirs (reason and comment
/// included).
pub async fn upsert(
    conn: &mut AsyncPgConnection,
    turn_id: Uuid,
    user_id: Uuid,
    feedback: &Feedback,
) -> Result<StoredFeedback, DbError> {
    let row: FeedbackRow = sql_query(
        "INSERT INTO turn_feedback (turn_id, user_id, rating, reason, comment)
         VALUES ($1, $2, $3, $4, $5)
         ON CONFLICT (turn_id) DO UPDATE SET
             rating = excluded.rating, reason = excluded.reason,
             comment = excluded.comment, updated_at = now()
         RETURNING turn_id, rating, reason, comment, updated_at",
    )
    .bind::<SqlUuid, _>(turn_id)
    .bind::<SqlUuid, _>(user_id)
    .bind::<Text, _>(Word(feedback.rating))
    .bind::<Nullable<Text>, _>(feedback.reason.map(Word))
    .bind::<Text, _>(&feedback.comment)
    .get_result(conn)
    .await?;
    Ok(row.stored().1)
}

/// Removes `user_id`'s rating of `turn_id`; false when there was none.
pub async fn delete(
    conn: &mut AsyncPgConnection,
    turn_id: Uuid,
    user_id: Uuid,
) -> Result<bool, DbError> {
    let removed = sql_query("DELETE FROM turn_feedback WHERE turn_id = $1 AND user_id = $2")
        .bind::<SqlUuid, _>(turn_id)
        .bind::<SqlUuid, _>(user_id)
        .execute(conn)
        .await?;
    Ok(removed > 0)
}

/// The ratings of these turns (those that have one).
pub async fn of_turns(
    conn: &mut AsyncPgConnection,
    turn_ids: &[Uuid],
) -> Result<Vec<(Uuid, StoredFeedback)>, DbError> {
    let rows: Vec<FeedbackRow> = sql_query(
        "SELECT turn_id, rating, reason, comment, updated_at FROM turn_feedback
         WHERE turn_id = ANY($1)",
    )
    .bind::<Array<SqlUuid>, _>(turn_ids)
    .load(conn)
    .await?;
    Ok(rows.into_iter().map(FeedbackRow::stored).collect())
}

/// What the review queue lists: the ratings with these, newest first.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ReviewFilter {
    pub rating: Option<Rating>,
    pub reason: Option<Reason>,
    /// Turns one of whose sources is in this collection.
    pub collection_id: Option<i64>,
    /// Rated at or after.
    pub since: Option<DateTime<Utc>>,
    pub limit: i64,
}

/// A rated turn as the review queue shows it; `sources` are the row's, each with its
/// document's collection and source added by [`review`].
#[derive(Debug, Clone, PartialEq, QueryableByName)]
pub struct ReviewRow {
    #[diesel(sql_type = SqlUuid)]
    pub turn_id: Uuid,
    #[diesel(sql_type = Text)]
    pub rating: Word<Rating>,
    #[diesel(sql_type = Nullable<Text>)]
    pub reason: Option<Word<Reason>>,
    #[diesel(sql_type = Text)]
    pub comment: String,
    #[diesel(sql_type = Timestamptz)]
    pub rated_at: DateTime<Utc>,
    #[diesel(sql_type = Timestamptz)]
    pub asked_at: DateTime<Utc>,
    #[diesel(sql_type = Text)]
    pub asker: String,
    #[diesel(sql_type = Text)]
    pub question: String,
    #[diesel(sql_type = Nullable<Text>)]
    pub searched_query: Option<String>,
    #[diesel(sql_type = Text)]
    pub answer: String,
    #[diesel(sql_type = Text)]
    pub path: String,
    #[diesel(sql_type = Jsonb)]
    pub sources: serde_json::Value,
    #[diesel(sql_type = Nullable<Array<BigInt>>)]
    pub expected_chunk_ids: Option<Vec<i64>>,
}

/// The rated turns that pass `filter`, newest rating first.
pub async fn review(
    conn: &mut AsyncPgConnection,
    filter: &ReviewFilter,
) -> Result<Vec<ReviewRow>, DbError> {
    Ok(sql_query(
        "SELECT f.turn_id, f.rating, f.reason, f.comment, f.updated_at AS rated_at,
                q.created_at AS asked_at, u.username AS asker, q.question,
                q.searched_query, q.answer, q.path, q.sources,
                e.chunk_ids AS expected_chunk_ids
         FROM turn_feedback f
         JOIN query_log q ON q.turn_id = f.turn_id
         JOIN users u ON u.id = f.user_id
         LEFT JOIN feedback_expected e ON e.turn_id = f.turn_id
         WHERE ($1::text IS NULL OR f.rating = $1)
           AND ($2::text IS NULL OR f.reason = $2)
           AND ($3::bigint IS NULL OR EXISTS (
                 SELECT 1 FROM jsonb_array_elements(q.sources) AS s
                 JOIN documents d ON d.id = (s ->> 'document_id')::bigint
                 WHERE d.collection_id = $3))
           AND ($4::timestamptz IS NULL OR f.updated_at >= $4)
         ORDER BY f.updated_at DESC, f.turn_id
         LIMIT $5",
    )
    .bind::<Nullable<Text>, _>(filter.rating.map(Word))
    .bind::<Nullable<Text>, _>(filter.reason.map(Word))
    .bind::<Nullable<BigInt>, _>(filter.collection_id)
    .bind::<Nullable<Timestamptz>, _>(filter.since)
    .bind::<BigInt, _>(filter.limit)
    .load(conn)
    .await?)
}

/// A stored document's place: its collection's name and its source (`None` when it
/// has none).
#[derive(Debug, Clone, PartialEq, QueryableByName)]
pub struct DocumentPlace {
    #[diesel(sql_type = BigInt)]
    pub document_id: i64,
    #[diesel(sql_type = Text)]
    pub collection: String,
    #[diesel(sql_type = Nullable<Text>)]
    pub source: Option<String>,
}

/// The collection and source of each of these documents that still exists.
pub async fn places(
    conn: &mut AsyncPgConnection,
    document_ids: &[i64],
) -> Result<Vec<DocumentPlace>, DbError> {
    Ok(sql_query(
        "SELECT d.id AS document_id, c.name AS collection, d.source
         FROM documents d JOIN collections c ON c.id = d.collection_id
         WHERE d.id = ANY($1)",
    )
    .bind::<Array<BigInt>, _>(document_ids)
    .load(conn)
    .await?)
}

/// Ratings counted per collection of a turn's sources (a turn counts once in each of
/// its sources' collections; `None`: turns without sources, the deflected ones).
#[derive(Debug, Clone, PartialEq, Serialize, QueryableByName, ToSchema)]
pub struct CollectionRatings {
    #[diesel(sql_type = Nullable<Text>)]
    pub collection: Option<String>,
    #[diesel(sql_type = BigInt)]
    pub up: i64,
    #[diesel(sql_type = BigInt)]
    pub down: i64,
}

pub async fn ratings_by_collection(
    conn: &mut AsyncPgConnection,
) -> Result<Vec<CollectionRatings>, DbError> {
    Ok(sql_query(
        "SELECT c.name AS collection,
                count(*) FILTER (WHERE f.rating = 'up') AS up,
                count(*) FILTER (WHERE f.rating = 'down') AS down
         FROM turn_feedback f
         JOIN query_log q ON q.turn_id = f.turn_id
         LEFT JOIN LATERAL (
             SELECT DISTINCT d.collection_id FROM jsonb_array_elements(q.sources) AS s
             JOIN documents d ON d.id = (s ->> 'document_id')::bigint
         ) AS dc ON true
         LEFT JOIN collections c ON c.id = dc.collection_id
         GROUP BY c.name
         ORDER BY c.name NULLS LAST",
    )
    .load(conn)
    .await?)
}

/// The rated turn an admin names passages for: its asker, and whether it is rated.
#[derive(Debug, Clone, PartialEq, QueryableByName)]
pub struct RatedTurn {
    #[diesel(sql_type = SqlUuid)]
    pub asker: Uuid,
    #[diesel(sql_type = Text)]
    pub asker_role: String,
    #[diesel(sql_type = Text)]
    pub query: String,
}

/// The rated turn `turn_id` (`None` when it has no rating): its asker, their role and
/// what retrieval searched for it.
pub async fn rated_turn(
    conn: &mut AsyncPgConnection,
    turn_id: Uuid,
) -> Result<Option<RatedTurn>, DbError> {
    Ok(sql_query(
        "SELECT f.user_id AS asker, u.role AS asker_role,
                COALESCE(q.searched_query, q.question) AS query
         FROM turn_feedback f
         JOIN query_log q ON q.turn_id = f.turn_id
         JOIN users u ON u.id = f.user_id
         WHERE f.turn_id = $1",
    )
    .bind::<SqlUuid, _>(turn_id)
    .get_result(conn)
    .await
    .optional()?)
}

/// A chunk's document and collection.
#[derive(Debug, Clone, Copy, PartialEq, QueryableByName)]
pub struct ChunkPlace {
    #[diesel(sql_type = BigInt)]
    pub chunk_id: i64,
    #[diesel(sql_type = BigInt)]
    pub document_id: i64,
    #[diesel(sql_type = BigInt)]
    pub collection_id: i64,
}

/// The document and collection of each of these chunks that exists.
pub async fn chunk_places(
    conn: &mut AsyncPgConnection,
    chunk_ids: &[i64],
) -> Result<Vec<ChunkPlace>, DbError> {
    Ok(sql_query(
        "SELECT c.id AS chunk_id, c.document_id, d.collection_id
         FROM chunks c JOIN documents d ON d.id = c.document_id
         WHERE c.id = ANY($1)",
    )
    .bind::<Array<BigInt>, _>(chunk_ids)
    .load(conn)
    .await?)
}

/// Names the passages that should have been found for `turn_id` (and their
/// documents); an empty list takes the turn out of the evaluation set.
pub async fn set_expected(
    conn: &mut AsyncPgConnection,
    turn_id: Uuid,
    chunks: &[ChunkPlace],
    marked_by: Option<Uuid>,
) -> Result<(), DbError> {
    if chunks.is_empty() {
        sql_query("DELETE FROM feedback_expected WHERE turn_id = $1")
            .bind::<SqlUuid, _>(turn_id)
            .execute(conn)
            .await?;
        return Ok(());
    }
    let mut documents: Vec<i64> = chunks.iter().map(|chunk| chunk.document_id).collect();
    documents.sort_unstable();
    documents.dedup();
    sql_query(
        "INSERT INTO feedback_expected (turn_id, chunk_ids, document_ids, marked_by)
         VALUES ($1, $2, $3, $4)
         ON CONFLICT (turn_id) DO UPDATE SET chunk_ids = excluded.chunk_ids,
             document_ids = excluded.document_ids, marked_by = excluded.marked_by,
             marked_at = now()",
    )
    .bind::<SqlUuid, _>(turn_id)
    .bind::<Array<BigInt>, _>(
        chunks
            .iter()
            .map(|chunk| chunk.chunk_id)
            .collect::<Vec<_>>(),
    )
    .bind::<Array<BigInt>, _>(documents)
    .bind::<Nullable<SqlUuid>, _>(marked_by)
    .execute(conn)
    .await?;
    Ok(())
}

/// One query of the evaluation set: what the turn searched, as whom, and what should
/// have been found.
#[derive(Debug, Clone, PartialEq, QueryableByName)]
pub struct ExpectedTurn {
    #[diesel(sql_type = SqlUuid)]
    pub turn_id: Uuid,
    #[diesel(sql_type = Text)]
    pub query: String,
    #[diesel(sql_type = SqlUuid)]
    pub asker: Uuid,
    #[diesel(sql_type = Text)]
    pub asker_role: String,
    #[diesel(sql_type = Array<BigInt>)]
    pub chunk_ids: Vec<i64>,
    #[diesel(sql_type = Array<BigInt>)]
    pub document_ids: Vec<i64>,
    /// The collections of the named passages' documents, by name.
    #[diesel(sql_type = Array<Text>)]
    pub collections: Vec<String>,
}

/// The instance's evaluation set, oldest turn first.
pub async fn evaluation_set(conn: &mut AsyncPgConnection) -> Result<Vec<ExpectedTurn>, DbError> {
    Ok(sql_query(
        "SELECT e.turn_id, COALESCE(q.searched_query, q.question) AS query,
                u.id AS asker, u.role AS asker_role, e.chunk_ids, e.document_ids,
                ARRAY(SELECT DISTINCT c.name FROM documents d
                      JOIN collections c ON c.id = d.collection_id
                      WHERE d.id = ANY(e.document_ids) ORDER BY c.name) AS collections
         FROM feedback_expected e
         JOIN query_log q ON q.turn_id = e.turn_id
         JOIN users u ON u.id = q.user_id
         ORDER BY q.created_at, e.turn_id",
    )
    .load(conn)
    .await?)
}

/// A run of the evaluation set as stored.
#[derive(Debug, Clone, PartialEq, Queryable, Selectable, Serialize, ToSchema)]
#[diesel(table_name = eval_runs, check_for_backend(diesel::pg::Pg))]
pub struct EvalRun {
    pub id: i64,
    pub created_at: DateTime<Utc>,
    /// The settings retrieval ran with.
    pub settings: serde_json::Value,
    pub queries: i32,
    /// The measures, by ranking: of the whole set, and `by_collection`
    /// ([`crate::eval::feedback::RunMeasures`]).
    pub measures: serde_json::Value,
}

/// Keeps a run; answers it as stored.
pub async fn insert_run(
    conn: &mut AsyncPgConnection,
    settings: &serde_json::Value,
    queries: i32,
    measures: &serde_json::Value,
) -> Result<EvalRun, DbError> {
    Ok(diesel::insert_into(eval_runs::table)
        .values((
            eval_runs::settings.eq(settings),
            eval_runs::queries.eq(queries),
            eval_runs::measures.eq(measures),
        ))
        .returning(EvalRun::as_returning())
        .get_result(conn)
        .await?)
}

/// The newest `limit` runs, newest first.
pub async fn runs(conn: &mut AsyncPgConnection, limit: i64) -> Result<Vec<EvalRun>, DbError> {
    Ok(eval_runs::table
        .select(EvalRun::as_select())
        .order(eval_runs::id.desc())
        .limit(limit)
        .load(conn)
        .await?)
}
