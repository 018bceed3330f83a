//! `query_log`: one row per chat turn that ended `done` or `stopped`.

use bor_actors::record::{TurnPath, TurnStatus};
use chrono::{DateTime, Utc};
use diesel::pg::Pg;
use diesel::prelude::*;
use diesel::sql_query;
use diesel::sql_types::{
    Array, BigInt, Bool, Integer, Jsonb, Nullable, Text, Timestamptz, Uuid as SqlUuid,
};
use diesel_async::{AsyncPgConnection, RunQueryDsl};
use uuid::Uuid;

use super::DbError;
use super::schema::query_log;
use super::words::Word;

#[derive(Debug, Clone, PartialEq, Queryable, Selectable)]
#[diesel(table_name = query_log, check_for_backend(Pg))]
pub struct QueryLogEntry {
    pub id: i64,
    pub turn_id: Uuid,
    pub created_at: DateTime<Utc>,
    pub question: String,
    pub answer: String,
    #[diesel(deserialize_as = Word<TurnPath>)]
    pub path: TurnPath,
    #[diesel(deserialize_as = Word<TurnStatus>)]
    pub status: TurnStatus,
    pub chat_model: String,
    pub rounds: i32,
    pub tool_calls: i32,
    pub retries: i32,
    pub scaffold_stripped: i32,
    pub recovered: bool,
    pub sources: serde_json::Value,
    pub first_token_ms: Option<i64>,
    pub elapsed_ms: i64,
    pub conversation_id: Option<Uuid>,
    pub user_id: Option<Uuid>,
    /// What retrieval searched (the question, then the conversation's previous one);
    /// `None` only on rows from before it was recorded.
    pub searched_query: Option<String>,
    pub prompt_tokens: i64,
    pub completion_tokens: i64,
    /// Some of the tokens are bor's estimate: the server reported none.
    pub tokens_estimated: bool,
    /// The API key the turn was asked with.
    pub key_id: Option<Uuid>,
    /// The collections of the documents the turn was given, ascending.
    pub collection_ids: Vec<i64>,
    /// The turn this row is a version of (its first version's `turn_id`); `None` for a
    /// first version.
    pub version_of: Option<Uuid>,
}

/// A row to write. Owned, so that a writer can keep it queued until the database
/// takes it.
#[derive(Debug, Clone, PartialEq)]
pub struct NewQueryLogEntry {
    pub turn_id: Uuid,
    /// When the turn started (the row may be written later, after a database outage).
    pub created_at: DateTime<Utc>,
    /// As sent, trimmed.
    pub question: String,
    pub answer: String,
    pub path: Word<TurnPath>,
    pub status: Word<TurnStatus>,
    pub chat_model: String,
    pub rounds: i32,
    pub tool_calls: i32,
    pub retries: i32,
    pub scaffold_stripped: i32,
    pub recovered: bool,
    /// The `done` frame's `sources` (`n`, `document_id`, `title`, `chunk_id`, `score`,
    /// `heading`, `snippet`, `page`), best first.
    pub sources: serde_json::Value,
    /// Milliseconds to the first visible answer text; `None` when there was none.
    pub first_token_ms: Option<i64>,
    pub elapsed_ms: i64,
    /// The conversation (docs/PROTOCOL.md, "Conversations"); written with the row when
    /// it does not exist yet.
    pub conversation_id: Option<Uuid>,
    pub user_id: Option<Uuid>,
    /// What retrieval searched (the question, then the conversation's previous one);
    /// `None` only on rows from before it was recorded.
    pub searched_query: Option<String>,
    pub prompt_tokens: i64,
    pub completion_tokens: i64,
    pub tokens_estimated: bool,
    pub key_id: Option<Uuid>,
    /// The turn this row is a version of (docs/PROTOCOL.md, "Versions of a turn").
    pub version_of: Option<Uuid>,
}

/// The row of a turn, if it has one.
pub async fn find(
    conn: &mut AsyncPgConnection,
    turn_id: Uuid,
) -> Result<Option<QueryLogEntry>, DbError> {
    Ok(query_log::table
        .filter(query_log::turn_id.eq(turn_id))
        .select(QueryLogEntry::as_select())
        .first(conn)
        .await
        .optional()?)
}

/// Names `writer` as the instance whose LogActor writes this transaction's rows: the
/// triggers' announcement of them says so (`bor.writer`), and that instance, whose
/// history cache holds them already, skips it.
pub async fn name_writer(conn: &mut AsyncPgConnection, writer: Uuid) -> Result<(), DbError> {
    sql_query("SELECT set_config('bor.writer', $1, true)")
        .bind::<Text, _>(writer.to_string())
        .execute(conn)
        .await?;
    Ok(())
}

/// Writes the rows of several turns in one statement, in their order; rows whose
/// `turn_id` is already stored are skipped. Returns how many were new. (The
/// conversations they start or continue are written with them, in one transaction, by
/// the LogActor's store.)
///
/// The rows travel as one array per column and are unnested by the server: one
/// statement text whatever the batch size (prepared once per connection), 23 bind
/// values instead of 23 per row. A row's collections are read from its sources'
/// documents as it is written. bench/RESULTS.md ("Writing turns") compares it with
/// multi-row `VALUES` and with `COPY`.
pub async fn insert(
    conn: &mut AsyncPgConnection,
    entries: &[NewQueryLogEntry],
) -> Result<usize, DbError> {
    if entries.is_empty() {
        return Ok(0);
    }
    Ok(sql_query(
        "INSERT INTO query_log (turn_id, created_at, question, answer, path, status,
             chat_model, rounds, tool_calls, retries, scaffold_stripped, recovered, sources,
             first_token_ms, elapsed_ms, conversation_id, user_id, searched_query,
             prompt_tokens, completion_tokens, tokens_estimated, key_id, version_of,
             collection_ids)
         SELECT turn_id, created_at, question, answer, path, status,
             chat_model, rounds, tool_calls, retries, scaffold_stripped, recovered, sources,
             first_token_ms, elapsed_ms, conversation_id, user_id, searched_query,
             prompt_tokens, completion_tokens, tokens_estimated, key_id, version_of,
             ARRAY(SELECT DISTINCT d.collection_id
                   FROM jsonb_array_elements(row.sources) AS s
                   JOIN documents d ON d.id = (s->>'document_id')::int8
                   ORDER BY 1)
         FROM unnest($1::uuid[], $2::timestamptz[], $3::text[], $4::text[], $5::text[],
             $6::text[], $7::text[], $8::int4[], $9::int4[], $10::int4[], $11::int4[],
             $12::bool[], $13::jsonb[], $14::int8[], $15::int8[], $16::uuid[], $17::uuid[],
             $18::text[], $19::int8[], $20::int8[], $21::bool[], $22::uuid[], $23::uuid[])
             WITH ORDINALITY AS row (turn_id, created_at, question, answer, path, status,
             chat_model, rounds, tool_calls, retries, scaffold_stripped, recovered, sources,
             first_token_ms, elapsed_ms, conversation_id, user_id, searched_query,
             prompt_tokens, completion_tokens, tokens_estimated, key_id, version_of, ord)
         ORDER BY ord
         ON CONFLICT (turn_id) DO NOTHING",
    )
    .bind::<Array<SqlUuid>, _>(entries.iter().map(|e| e.turn_id).collect::<Vec<_>>())
    .bind::<Array<Timestamptz>, _>(entries.iter().map(|e| e.created_at).collect::<Vec<_>>())
    .bind::<Array<Text>, _>(
        entries
            .iter()
            .map(|e| e.question.as_str())
            .collect::<Vec<_>>(),
    )
    .bind::<Array<Text>, _>(
        entries
            .iter()
            .map(|e| e.answer.as_str())
            .collect::<Vec<_>>(),
    )
    .bind::<Array<Text>, _>(entries.iter().map(|e| e.path).collect::<Vec<_>>())
    .bind::<Array<Text>, _>(entries.iter().map(|e| e.status).collect::<Vec<_>>())
    .bind::<Array<Text>, _>(
        entries
            .iter()
            .map(|e| e.chat_model.as_str())
            .collect::<Vec<_>>(),
    )
    .bind::<Array<Integer>, _>(entries.iter().map(|e| e.rounds).collect::<Vec<_>>())
    .bind::<Array<Integer>, _>(entries.iter().map(|e| e.tool_calls).collect::<Vec<_>>())
    .bind::<Array<Integer>, _>(entries.iter().map(|e| e.retries).collect::<Vec<_>>())
    .bind::<Array<Integer>, _>(
        entries
            .iter()
            .map(|e| e.scaffold_stripped)
            .collect::<Vec<_>>(),
    )
    .bind::<Array<Bool>, _>(entries.iter().map(|e| e.recovered).collect::<Vec<_>>())
    .bind::<Array<Jsonb>, _>(entries.iter().map(|e| &e.sources).collect::<Vec<_>>())
    .bind::<Array<Nullable<BigInt>>, _>(
        entries.iter().map(|e| e.first_token_ms).collect::<Vec<_>>(),
    )
    .bind::<Array<BigInt>, _>(entries.iter().map(|e| e.elapsed_ms).collect::<Vec<_>>())
    .bind::<Array<Nullable<SqlUuid>>, _>(
        entries
            .iter()
            .map(|e| e.conversation_id)
            .collect::<Vec<_>>(),
    )
    .bind::<Array<Nullable<SqlUuid>>, _>(entries.iter().map(|e| e.user_id).collect::<Vec<_>>())
    .bind::<Array<Nullable<Text>>, _>(
        entries
            .iter()
            .map(|e| e.searched_query.as_deref())
            .collect::<Vec<_>>(),
    )
    .bind::<Array<BigInt>, _>(entries.iter().map(|e| e.prompt_tokens).collect::<Vec<_>>())
    .bind::<Array<BigInt>, _>(
        entries
            .iter()
            .map(|e| e.completion_tokens)
            .collect::<Vec<_>>(),
    )
    .bind::<Array<Bool>, _>(
        entries
            .iter()
            .map(|e| e.tokens_estimated)
            .collect::<Vec<_>>(),
    )
    .bind::<Array<Nullable<SqlUuid>>, _>(entries.iter().map(|e| e.key_id).collect::<Vec<_>>())
    .bind::<Array<Nullable<SqlUuid>>, _>(entries.iter().map(|e| e.version_of).collect::<Vec<_>>())
    .execute(conn)
    .await?)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::TestDatabase;
    use serde_json::json;

    fn entry(turn_id: Uuid) -> NewQueryLogEntry {
        NewQueryLogEntry {
            turn_id,
            ..crate::testing::query_log_entry()
        }
    }

    async fn rows(conn: &mut AsyncPgConnection) -> Vec<QueryLogEntry> {
        query_log::table
            .select(QueryLogEntry::as_select())
            .order(query_log::id)
            .load(conn)
            .await
            .unwrap()
    }

    #[tokio::test]
    async fn a_row_is_stored_as_given() {
        let db = TestDatabase::migrated().await;
        let mut conn = db.pool().get().await.unwrap();
        let written = entry(Uuid::new_v4());
        let stopped = NewQueryLogEntry {
            turn_id: Uuid::new_v4(),
            tokens_estimated: true,
            key_id: Some(Uuid::new_v4()),
            version_of: Some(written.turn_id),
            path: Word(TurnPath::Deflected),
            status: Word(TurnStatus::Stopped),
            sources: json!([]),
            first_token_ms: None,
            ..entry(Uuid::nil())
        };
        assert_eq!(
            insert(&mut conn, std::slice::from_ref(&written))
                .await
                .unwrap(),
            1
        );
        assert_eq!(
            insert(&mut conn, std::slice::from_ref(&stopped))
                .await
                .unwrap(),
            1
        );

        let stored = rows(&mut conn).await;
        assert_eq!(stored.len(), 2);
        for (row, new) in stored.iter().zip([&written, &stopped]) {
            assert_eq!(row.turn_id, new.turn_id);
            assert_eq!(row.question, new.question);
            assert_eq!(row.answer, new.answer);
            assert_eq!((row.path, row.status), (new.path.0, new.status.0));
            assert_eq!(row.chat_model, new.chat_model);
            assert_eq!(
                (
                    row.rounds,
                    row.tool_calls,
                    row.retries,
                    row.scaffold_stripped
                ),
                (
                    new.rounds,
                    new.tool_calls,
                    new.retries,
                    new.scaffold_stripped
                )
            );
            assert_eq!(row.recovered, new.recovered);
            assert_eq!(row.sources, new.sources);
            assert_eq!(
                (
                    row.prompt_tokens,
                    row.completion_tokens,
                    row.tokens_estimated
                ),
                (
                    new.prompt_tokens,
                    new.completion_tokens,
                    new.tokens_estimated
                )
            );
            assert_eq!(row.key_id, new.key_id);
            assert_eq!(row.version_of, new.version_of);
            assert_eq!(row.collection_ids, Vec::<i64>::new(), "no such document");
            assert_eq!(
                (row.first_token_ms, row.elapsed_ms),
                (new.first_token_ms, new.elapsed_ms)
            );
            assert!((Utc::now() - row.created_at).num_minutes().abs() < 10);
        }
    }

    #[tokio::test]
    async fn writing_the_same_turn_again_changes_nothing() {
        let db = TestDatabase::migrated().await;
        let mut conn = db.pool().get().await.unwrap();
        let turn_id = Uuid::new_v4();
        let first = entry(turn_id);
        let retried = NewQueryLogEntry {
            answer: "A different answer".to_owned(),
            ..entry(turn_id)
        };
        assert_eq!(
            insert(&mut conn, std::slice::from_ref(&first))
                .await
                .unwrap(),
            1
        );
        assert_eq!(
            insert(&mut conn, std::slice::from_ref(&retried))
                .await
                .unwrap(),
            0
        );
        assert_eq!(
            insert(&mut conn, &[first.clone(), retried.clone()])
                .await
                .unwrap(),
            0
        );

        let stored = rows(&mut conn).await;
        assert_eq!(stored.len(), 1);
        assert_eq!(stored[0].answer, first.answer);
    }

    #[tokio::test]
    async fn words_stored_for_path_and_status_are_the_spec_words() {
        let db = TestDatabase::migrated().await;
        let mut conn = db.pool().get().await.unwrap();
        let cases = [
            (TurnPath::Grounded, TurnStatus::Done, "grounded", "done"),
            (
                TurnPath::Deflected,
                TurnStatus::Stopped,
                "deflected",
                "stopped",
            ),
            (
                TurnPath::Undecided,
                TurnStatus::Stopped,
                "undecided",
                "stopped",
            ),
        ];
        for (path, status, _, _) in cases {
            let row = NewQueryLogEntry {
                path: Word(path),
                status: Word(status),
                ..entry(Uuid::new_v4())
            };
            insert(&mut conn, &[row]).await.unwrap();
        }
        let stored: Vec<(String, String)> = query_log::table
            .select((
                diesel::dsl::sql::<diesel::sql_types::Text>("path"),
                diesel::dsl::sql::<diesel::sql_types::Text>("status"),
            ))
            .order(query_log::id)
            .load(&mut conn)
            .await
            .unwrap();
        let expected: Vec<(String, String)> = cases
            .iter()
            .map(|(_, _, path, status)| ((*path).to_owned(), (*status).to_owned()))
            .collect();
        assert_eq!(stored, expected);
    }
}
