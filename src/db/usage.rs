//! `usage_limits`, and the sums of `query_log` that limits and usage reports read.

use chrono::{DateTime, NaiveDate, Utc};
use diesel::pg::Pg;
use diesel::prelude::*;
use diesel::sql_query;
use diesel::sql_types::{BigInt, Date, Nullable, Text, Timestamptz, Uuid as SqlUuid};
use diesel_async::{AsyncConnection, AsyncPgConnection, RunQueryDsl};
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
    /// The name of the subject of `id` (a user, a group or a key; `None`: everyone):
    /// a username, a group's or a key's name; `everyone`; or the id of a subject that
    /// no longer exists.
    pub fn name_of(&self, id: Option<Uuid>) -> String {
        match id {
            None => "everyone".to_owned(),
            Some(id) => self
                .names
                .get(&id)
                .cloned()
                .unwrap_or_else(|| id.to_string()),
        }
    }
}

/// A subject's id and name, as [`subject_names`] reads them.
#[derive(QueryableByName)]
struct NamedSubject {
    #[diesel(sql_type = SqlUuid)]
    id: Uuid,
    #[diesel(sql_type = Text)]
    name: String,
}

/// The names of the subjects `rows` are set for, in one statement.
pub async fn subject_names(
    conn: &mut AsyncPgConnection,
    rows: &[LimitRow],
) -> Result<SubjectNames, DbError> {
    let ids = |kind: &str| -> Vec<Uuid> {
        rows.iter()
            .filter(|row| row.subject == kind)
            .filter_map(|row| row.subject_id)
            .collect()
    };
    let found: Vec<NamedSubject> = sql_query(
        "SELECT id, username AS name FROM users WHERE id = ANY($1) \
         UNION ALL SELECT id, name FROM groups WHERE id = ANY($2) \
         UNION ALL SELECT id, name FROM api_keys WHERE id = ANY($3)",
    )
    .bind::<diesel::sql_types::Array<SqlUuid>, _>(ids("user"))
    .bind::<diesel::sql_types::Array<SqlUuid>, _>(ids("group"))
    .bind::<diesel::sql_types::Array<SqlUuid>, _>(ids("key"))
    .load(conn)
    .await?;
    let names = found
        .into_iter()
        .map(|subject| (subject.id, subject.name))
        .collect();
    Ok(SubjectNames { names })
}

/// Whose use is counted: a person's (through any way in) or an API key's.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Counted {
    User(Uuid),
    Key(Uuid),
}

impl Counted {
    fn subject(self) -> (&'static str, Uuid) {
        match self {
            Counted::User(id) => ("user", id),
            Counted::Key(id) => ("key", id),
        }
    }
}

/// What a request for turns got: `given` more turns, `taken` of the day in all.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TurnsGiven {
    pub given: u64,
    pub taken: u64,
}

#[derive(QueryableByName)]
struct Taken {
    #[diesel(sql_type = BigInt)]
    taken: i64,
}

/// Takes up to `block(left)` more of `whose` turns of `day` (starting at `day_start`)
/// within `limit`, `left` being what the limit leaves. The day's row is made the first
/// time, counting the turns already written in `query_log` that day.
pub async fn take_turns(
    conn: &mut AsyncPgConnection,
    whose: Counted,
    day: NaiveDate,
    day_start: DateTime<Utc>,
    limit: u64,
    block: impl FnOnce(u64) -> u64 + Send,
) -> Result<TurnsGiven, DbError> {
    let (subject, id) = whose.subject();
    let written_today = match whose {
        Counted::User(_) => {
            "SELECT count(*) FROM query_log WHERE user_id = $2 AND created_at >= $4"
        }
        Counted::Key(_) => "SELECT count(*) FROM query_log WHERE key_id = $2 AND created_at >= $4",
    };
    let make_row = format!(
        "INSERT INTO turns_taken (subject, subject_id, day, taken)
         SELECT $1, $2, $3, ({written_today})
         WHERE NOT EXISTS (SELECT 1 FROM turns_taken WHERE subject = $1 AND subject_id = $2 AND day = $3)
         ON CONFLICT DO NOTHING"
    );
    conn.transaction::<_, DbError, _>(async |conn| {
        sql_query(make_row)
            .bind::<Text, _>(subject)
            .bind::<SqlUuid, _>(id)
            .bind::<Date, _>(day)
            .bind::<Timestamptz, _>(day_start)
            .execute(conn)
            .await?;
        let Taken { taken } = sql_query(
            "SELECT taken FROM turns_taken WHERE subject = $1 AND subject_id = $2 AND day = $3 FOR UPDATE",
        )
        .bind::<Text, _>(subject)
        .bind::<SqlUuid, _>(id)
        .bind::<Date, _>(day)
        .get_result(conn)
        .await?;
        let taken = u64::try_from(taken).unwrap_or(0);
        let given = block(limit.saturating_sub(taken)).min(limit.saturating_sub(taken));
        if given > 0 {
            sql_query(
                "UPDATE turns_taken SET taken = taken + $4 WHERE subject = $1 AND subject_id = $2 AND day = $3",
            )
            .bind::<Text, _>(subject)
            .bind::<SqlUuid, _>(id)
            .bind::<Date, _>(day)
            .bind::<BigInt, _>(i64::try_from(given).unwrap_or(i64::MAX))
            .execute(conn)
            .await?;
        }
        Ok(TurnsGiven {
            given,
            taken: taken + given,
        })
    })
    .await
}

/// Gives back `turns` taken and not used.
pub async fn give_back_turns(
    conn: &mut AsyncPgConnection,
    whose: Counted,
    day: NaiveDate,
    turns: u64,
) -> Result<(), DbError> {
    let (subject, id) = whose.subject();
    sql_query(
        "UPDATE turns_taken SET taken = GREATEST(taken - $4, 0) WHERE subject = $1 AND subject_id = $2 AND day = $3",
    )
    .bind::<Text, _>(subject)
    .bind::<SqlUuid, _>(id)
    .bind::<Date, _>(day)
    .bind::<BigInt, _>(i64::try_from(turns).unwrap_or(i64::MAX))
    .execute(conn)
    .await?;
    Ok(())
}

/// The turns taken of `whose` day, if its row was made.
pub async fn turns_taken(
    conn: &mut AsyncPgConnection,
    whose: Counted,
    day: NaiveDate,
) -> Result<Option<u64>, DbError> {
    let (subject, id) = whose.subject();
    let row: Option<Taken> = sql_query(
        "SELECT taken FROM turns_taken WHERE subject = $1 AND subject_id = $2 AND day = $3",
    )
    .bind::<Text, _>(subject)
    .bind::<SqlUuid, _>(id)
    .bind::<Date, _>(day)
    .get_result(conn)
    .await
    .optional()?;
    Ok(row.map(|row| u64::try_from(row.taken).unwrap_or(0)))
}

/// Forgets the turns taken on days before `day`.
pub async fn forget_turns_before(
    conn: &mut AsyncPgConnection,
    day: NaiveDate,
) -> Result<(), DbError> {
    sql_query("DELETE FROM turns_taken WHERE day < $1")
        .bind::<Date, _>(day)
        .execute(conn)
        .await?;
    Ok(())
}

/// Sends one notification on `channel` for each payload, in order.
pub async fn notify(
    pool: &super::DbPool,
    channel: &str,
    payloads: &[String],
) -> Result<(), DbError> {
    sql_query("SELECT pg_notify($1, payload) FROM unnest($2::text[]) WITH ORDINALITY AS p (payload, ord) ORDER BY ord")
        .bind::<Text, _>(channel)
        .bind::<diesel::sql_types::Array<Text>, _>(payloads)
        .execute(&mut *pool.get().await?)
        .await?;
    Ok(())
}

/// One line of a usage report: a day's use by one user, key, collection or model.
#[derive(Debug, Clone, PartialEq, Eq, QueryableByName)]
pub struct UsageLine {
    /// `user`, `key`, `collection` or `model`.
    #[diesel(sql_type = Text)]
    pub dimension: String,
    /// The user's or key's UUID, the collection's id, or the model's name.
    #[diesel(sql_type = Text)]
    pub id: String,
    /// `YYYY-MM-DD`, UTC.
    #[diesel(sql_type = Text)]
    pub day: String,
    #[diesel(sql_type = BigInt)]
    pub turns: i64,
    #[diesel(sql_type = BigInt)]
    pub prompt_tokens: i64,
    #[diesel(sql_type = BigInt)]
    pub completion_tokens: i64,
    /// Tokens of the turns whose counts are (in part) bor's estimate.
    #[diesel(sql_type = BigInt)]
    pub estimated_tokens: i64,
    #[diesel(sql_type = BigInt)]
    pub grounded: i64,
    #[diesel(sql_type = BigInt)]
    pub deflected: i64,
}

/// The use in `[since, until)` per day and per user, key, collection (a turn counts in
/// each collection it drew on) and model; of one person only when `user` is given.
pub async fn report(
    conn: &mut AsyncPgConnection,
    since: DateTime<Utc>,
    until: DateTime<Utc>,
    user: Option<Uuid>,
) -> Result<Vec<UsageLine>, DbError> {
    const SUMS: &str = "count(*)::int8 AS turns,
        COALESCE(sum(prompt_tokens), 0)::int8 AS prompt_tokens,
        COALESCE(sum(completion_tokens), 0)::int8 AS completion_tokens,
        COALESCE(sum(prompt_tokens + completion_tokens) FILTER (WHERE tokens_estimated), 0)::int8 AS estimated_tokens,
        count(*) FILTER (WHERE path = 'grounded')::int8 AS grounded,
        count(*) FILTER (WHERE path = 'deflected')::int8 AS deflected";
    let query = format!(
        "WITH turns AS (
             SELECT to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD') AS day, user_id, key_id,
                 chat_model, collection_ids, prompt_tokens, completion_tokens, tokens_estimated, path
             FROM query_log
             WHERE created_at >= $1 AND created_at < $2 AND ($3::uuid IS NULL OR user_id = $3))
         SELECT 'user' AS dimension, user_id::text AS id, day, {SUMS}
             FROM turns WHERE user_id IS NOT NULL GROUP BY day, user_id
         UNION ALL
         SELECT 'key', key_id::text, day, {SUMS}
             FROM turns WHERE key_id IS NOT NULL GROUP BY day, key_id
         UNION ALL
         SELECT 'collection', collection::text, day, {SUMS}
             FROM turns, unnest(collection_ids) AS collection GROUP BY day, collection
         UNION ALL
         SELECT 'model', chat_model, day, {SUMS}
             FROM turns GROUP BY day, chat_model
         ORDER BY day, dimension, id"
    );
    Ok(sql_query(query)
        .bind::<Timestamptz, _>(since)
        .bind::<Timestamptz, _>(until)
        .bind::<Nullable<SqlUuid>, _>(user)
        .load(conn)
        .await?)
}

/// The names of the users, keys and collections a report names, by their id as text.
pub async fn report_names(
    conn: &mut AsyncPgConnection,
    lines: &[UsageLine],
) -> Result<std::collections::HashMap<(String, String), String>, DbError> {
    use super::schema::{api_keys, collections, users};
    let ids = |dimension: &str| -> Vec<Uuid> {
        lines
            .iter()
            .filter(|line| line.dimension == dimension)
            .filter_map(|line| line.id.parse().ok())
            .collect()
    };
    let mut names = std::collections::HashMap::new();
    let found: Vec<(Uuid, String)> = users::table
        .filter(users::id.eq_any(ids("user")))
        .select((users::id, users::username))
        .load(conn)
        .await?;
    names.extend(
        found
            .into_iter()
            .map(|(id, n)| (("user".to_owned(), id.to_string()), n)),
    );
    let found: Vec<(Uuid, String)> = api_keys::table
        .filter(api_keys::id.eq_any(ids("key")))
        .select((api_keys::id, api_keys::name))
        .load(conn)
        .await?;
    names.extend(
        found
            .into_iter()
            .map(|(id, n)| (("key".to_owned(), id.to_string()), n)),
    );
    let collection_ids: Vec<i64> = lines
        .iter()
        .filter(|line| line.dimension == "collection")
        .filter_map(|line| line.id.parse().ok())
        .collect();
    let found: Vec<(i64, String)> = collections::table
        .filter(collections::id.eq_any(collection_ids))
        .select((collections::id, collections::name))
        .load(conn)
        .await?;
    names.extend(
        found
            .into_iter()
            .map(|(id, n)| (("collection".to_owned(), id.to_string()), n)),
    );
    Ok(names)
}
