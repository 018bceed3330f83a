//! The LogActor's store: `query_log` rows in PostgreSQL, written with the
//! conversations they start or continue in one transaction, so that there is no
//! conversation without a turn and no turn without its conversation.

use bor_actors::error_chain;
use bor_actors::log::{QueryLogStore, WriteError};
use bor_actors::record::{self, TurnRecord};
use diesel_async::{AsyncConnection, AsyncPgConnection};
use futures_util::future::BoxFuture;

use std::sync::Arc;

use uuid::Uuid;

use crate::conversations;
use crate::db::query_log::{self, NewQueryLogEntry};
use crate::db::words::Word;
use crate::db::{DbError, DbPool, storable_text};
use crate::history_cache::HistoryCache;

pub struct PgQueryLogStore {
    pool: DbPool,
    /// The histories this instance caches, advanced by every batch written.
    histories: Arc<HistoryCache>,
}

impl PgQueryLogStore {
    pub fn new(pool: DbPool, histories: Arc<HistoryCache>) -> Self {
        Self { pool, histories }
    }
}

impl QueryLogStore for PgQueryLogStore {
    fn insert(&self, records: Vec<TurnRecord>) -> BoxFuture<'static, Result<(), WriteError>> {
        let pool = self.pool.clone();
        let histories = Arc::clone(&self.histories);
        Box::pin(async move {
            let entries: Vec<NewQueryLogEntry> = records.iter().filter_map(entry).collect();
            let mut conn = pool.get().await.map_err(write_error)?;
            match write_turns(&mut conn, &entries, Some(histories.writer())).await {
                Ok(_) => {
                    // Before the rows leave the LogActor's queue (when this returns).
                    histories.advance(&entries);
                    Ok(())
                }
                Err(error) => {
                    // The commit may have gone through with its answer lost: its
                    // announcement names this instance, which skips it.
                    histories.let_go(&entries);
                    Err(write_error(error))
                }
            }
        })
    }
}

/// Writes the rows of several turns and the conversations they start or continue, in
/// one transaction; rows whose `turn_id` is already stored are skipped. Returns how
/// many rows were new. A conversation that gets a new version of a turn has its search
/// words made again from its chosen versions (the version replaces its turn's words).
/// `writer`: the instance whose history cache already holds the rows, named in their
/// announcement so that it skips it (`bor.writer`, docs/LIMITS.md).
pub async fn write_turns(
    conn: &mut AsyncPgConnection,
    entries: &[NewQueryLogEntry],
    writer: Option<Uuid>,
) -> Result<usize, DbError> {
    let mut touched = conversations::touched_by(entries);
    let mut versioned: Vec<uuid::Uuid> = entries
        .iter()
        .filter(|entry| entry.version_of.is_some())
        .filter_map(|entry| entry.conversation_id)
        .collect();
    versioned.sort();
    versioned.dedup();
    for conversation in &mut touched {
        if versioned.binary_search(&conversation.id).is_ok() {
            // Its words are made again below, from the rows as they then are.
            conversation.text.clear();
        }
    }
    conn.transaction::<_, DbError, _>(async |conn| {
        if let Some(writer) = writer {
            query_log::name_writer(conn, writer).await?;
        }
        crate::db::conversations::upsert(conn, &touched).await?;
        let written = query_log::insert(conn, entries).await?;
        crate::db::conversations::rebuild_search_words(conn, &versioned).await?;
        Ok(written)
    })
    .await
}

fn write_error(error: DbError) -> WriteError {
    let text = error_chain(&error);
    if error.is_unavailable() {
        WriteError::Unavailable(text)
    } else {
        WriteError::Refused(text)
    }
}

/// The row of a turn that gets one (`done` or `stopped`).
fn entry(record: &TurnRecord) -> Option<NewQueryLogEntry> {
    let status = record.outcome.row_status()?;
    let count = |n: u32| i32::try_from(n).unwrap_or(i32::MAX);
    let millis = |n: u64| i64::try_from(n).unwrap_or(i64::MAX);
    let tokens = millis;
    Some(NewQueryLogEntry {
        turn_id: record.turn_id,
        created_at: record.created_at,
        question: storable_text(&record.question).into_owned(),
        answer: storable_text(&record.answer).into_owned(),
        path: Word(record.path),
        status: Word(status),
        chat_model: storable_text(&record.chat_model).into_owned(),
        rounds: count(record.rounds),
        tool_calls: count(record.tool_calls),
        retries: count(record.retries),
        scaffold_stripped: i32::try_from(record.scaffold_stripped).unwrap_or(i32::MAX),
        recovered: record.recovered,
        sources: sources_as_sent(&record.sources),
        first_token_ms: record.first_token_ms.map(millis),
        elapsed_ms: millis(record.elapsed_ms),
        conversation_id: record.conversation_id,
        user_id: record.user_id,
        searched_query: Some(storable_text(&record.query).into_owned()),
        prompt_tokens: tokens(record.usage.prompt_tokens),
        completion_tokens: tokens(record.usage.completion_tokens),
        tokens_estimated: record.usage.estimated,
        key_id: record.key_id,
        version_of: record.version_of,
    })
}

/// The sources as the `done` frame writes them. Through text, so that an f32 score
/// keeps its shortest decimal form (0.50000006) instead of its widened f64 value
/// (0.5000000596046448), and the row holds the very list the client saw (but for
/// U+0000 in a title, which `jsonb` refuses as text does).
fn sources_as_sent(sources: &[record::Source]) -> serde_json::Value {
    let storable: Vec<record::Source> = sources
        .iter()
        .map(|source| record::Source {
            title: storable_text(&source.title).into_owned(),
            ..source.clone()
        })
        .collect();
    serde_json::to_string(&storable)
        .ok()
        .and_then(|text| serde_json::from_str(&text).ok())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::{TestDatabase, query_log_rows};
    use uuid::Uuid;

    /// A member, `ann`, whose conversations the rows are.
    async fn member(conn: &mut AsyncPgConnection) -> crate::db::users::UserRow {
        let (owner, _) = crate::auth::people::create_user(
            conn,
            "ann",
            None,
            crate::db::users::Role::Member,
            None,
        )
        .await
        .unwrap();
        owner
    }

    /// Ten answers of about 99,000 characters, each of words no other answer holds, in
    /// one conversation: more words than one `tsvector` can hold (1 MB).
    #[tokio::test]
    async fn every_turn_of_a_conversation_is_kept_whatever_the_size_of_its_words() {
        let db = TestDatabase::migrated().await;
        let mut conn = db.pool().get().await.unwrap();
        let owner = member(&mut conn).await;
        let conversation = Uuid::new_v4();
        for turn in 0..10 {
            let mut answer = String::new();
            for i in 0.. {
                if answer.len() >= 99_000 {
                    break;
                }
                answer.push_str(&format!("a{turn}b{i} "));
            }
            let row = NewQueryLogEntry {
                answer,
                conversation_id: Some(conversation),
                user_id: Some(owner.id),
                ..crate::testing::query_log_entry()
            };
            assert_eq!(write_turns(&mut conn, &[row], None).await.unwrap(), 1);
        }
        assert_eq!(query_log_rows(&db.pool()).await.len(), 10);
        for words in [["a0b1", "a9b9000"], ["a5b77", "handbook"]] {
            let words = words.map(str::to_owned);
            let found = crate::db::conversations::list(
                &mut conn,
                owner.id,
                Default::default(),
                &words,
                10,
                None,
            )
            .await
            .unwrap();
            assert_eq!(found.len(), 1, "{words:?}");
            assert_eq!((found[0].id, found[0].turns), (conversation, 10));
        }
    }

    /// A version in the batch of its turn's first row, then another in a later batch
    /// beside a turn of another conversation: the versioned conversation's words are
    /// those of its turns' newest versions, each turn counted once; the other's words
    /// are added.
    #[tokio::test]
    async fn a_new_version_replaces_its_turns_words() {
        let db = TestDatabase::migrated().await;
        let mut conn = db.pool().get().await.unwrap();
        let owner = member(&mut conn).await;
        let (versioned, other) = (Uuid::new_v4(), Uuid::new_v4());
        let row = |conversation, question: &str, version_of| NewQueryLogEntry {
            question: question.to_owned(),
            answer: format!("about {question}"),
            conversation_id: Some(conversation),
            user_id: Some(owner.id),
            version_of,
            ..crate::testing::query_log_entry()
        };
        // The first turn gives the title (whose words stay); the second is asked again.
        let opening = row(versioned, "hello", None);
        let first = row(versioned, "kettle", None);
        let again = Some(first.turn_id);
        let batch = [opening, first, row(versioned, "descale", again)];
        assert_eq!(write_turns(&mut conn, &batch, None).await.unwrap(), 3);
        let found = async |conn: &mut crate::db::DbConnection, word: &str| {
            crate::db::conversations::list(
                conn,
                owner.id,
                Default::default(),
                &[word.to_owned()],
                10,
                None,
            )
            .await
            .unwrap()
            .iter()
            .map(|c| (c.id, c.turns))
            .collect::<Vec<_>>()
        };
        assert_eq!(found(&mut conn, "kettle").await, []);
        assert_eq!(found(&mut conn, "descale").await, [(versioned, 2)]);

        let later = [row(versioned, "filter", again), row(other, "otter", None)];
        assert_eq!(write_turns(&mut conn, &later, None).await.unwrap(), 2);
        assert_eq!(found(&mut conn, "descale").await, []);
        assert_eq!(found(&mut conn, "filter").await, [(versioned, 2)]);
        assert_eq!(found(&mut conn, "otter").await, [(other, 1)]);
        let (_, history) =
            crate::db::conversations::owner_and_history(&mut conn, versioned, 20, None)
                .await
                .unwrap()
                .unwrap();
        let questions: Vec<&str> = history.iter().map(|turn| turn.question.as_str()).collect();
        assert_eq!(questions, ["hello", "filter"], "the newest version only");
        let (_, without) =
            crate::db::conversations::owner_and_history(&mut conn, versioned, 20, again)
                .await
                .unwrap()
                .unwrap();
        assert_eq!(without.len(), 1, "the turn asked again is left out");
    }

    /// Thirty turns, the last asked again a hundred times (more rows than a page of the
    /// history's reading), one turn without an answer: the history is the newest
    /// version of the last turn and the turns before it that have an answer.
    #[tokio::test]
    async fn a_history_reads_past_pages_of_older_versions() {
        let db = TestDatabase::migrated().await;
        let mut conn = db.pool().get().await.unwrap();
        let owner = member(&mut conn).await;
        let conversation = Uuid::new_v4();
        let start = chrono::Utc::now() - chrono::Duration::hours(1);
        let row = |n: i64, question: String, answer: &str, version_of| NewQueryLogEntry {
            created_at: start + chrono::Duration::seconds(n),
            question,
            answer: answer.to_owned(),
            conversation_id: Some(conversation),
            user_id: Some(owner.id),
            version_of,
            ..crate::testing::query_log_entry()
        };
        let mut rows: Vec<NewQueryLogEntry> = (0..30)
            .map(|n| {
                row(
                    n,
                    format!("q{n}"),
                    if n == 25 { "" } else { "an answer" },
                    None,
                )
            })
            .collect();
        let last = Some(rows[29].turn_id);
        rows.extend((1..=100).map(|v| row(29 + v, format!("q29 v{v}"), "again", last)));
        assert_eq!(write_turns(&mut conn, &rows, None).await.unwrap(), 130);

        let questions = async |conn: &mut crate::db::DbConnection, leaving_out| {
            crate::db::conversations::owner_and_history(conn, conversation, 20, leaving_out)
                .await
                .unwrap()
                .map(|(_, turns)| turns)
                .unwrap_or_default()
                .into_iter()
                .map(|turn| turn.question)
                .collect::<Vec<_>>()
        };
        let mut expected: Vec<String> = (9..29)
            .filter(|n| *n != 25)
            .map(|n| format!("q{n}"))
            .collect();
        expected.push("q29 v100".to_owned());
        assert_eq!(questions(&mut conn, None).await, expected);
        let expected: Vec<String> = (8..29)
            .filter(|n| *n != 25)
            .map(|n| format!("q{n}"))
            .collect();
        assert_eq!(
            questions(&mut conn, last).await,
            expected,
            "the turn asked again left out"
        );
    }

    /// One batch: three long answers of one conversation (several search pieces, so
    /// several rounds) beside forty new conversations of one short turn each.
    #[tokio::test]
    async fn one_batch_of_many_conversations_and_long_turns_is_searchable_whole() {
        let db = TestDatabase::migrated().await;
        let mut conn = db.pool().get().await.unwrap();
        let owner = member(&mut conn).await;
        let long = Uuid::new_v4();
        let mut rows: Vec<NewQueryLogEntry> = (0..3)
            .map(|turn| {
                let words: Vec<String> = (0..6_000).map(|i| format!("t{turn}w{i}")).collect();
                NewQueryLogEntry {
                    answer: words.join(" "),
                    conversation_id: Some(long),
                    user_id: Some(owner.id),
                    ..crate::testing::query_log_entry()
                }
            })
            .collect();
        let short: Vec<Uuid> = (0..40).map(|_| Uuid::new_v4()).collect();
        for (n, id) in short.iter().enumerate() {
            rows.push(NewQueryLogEntry {
                answer: format!("short answer number{n}"),
                conversation_id: Some(*id),
                user_id: Some(owner.id),
                ..crate::testing::query_log_entry()
            });
        }
        assert_eq!(write_turns(&mut conn, &rows, None).await.unwrap(), 43);
        assert_eq!(
            write_turns(&mut conn, &rows, None).await.unwrap(),
            0,
            "none twice"
        );

        let found = async |conn: &mut crate::db::DbConnection, words: &[&str]| {
            let words: Vec<String> = words.iter().map(|w| (*w).to_owned()).collect();
            crate::db::conversations::list(conn, owner.id, Default::default(), &words, 100, None)
                .await
                .unwrap()
        };
        for words in [["t0w0", "t2w5999"], ["t1w3000", "handbook"]] {
            let hits = found(&mut conn, &words).await;
            assert_eq!(hits.len(), 1, "{words:?}");
            assert_eq!((hits[0].id, hits[0].turns), (long, 3));
        }
        assert_eq!(found(&mut conn, &["number39"]).await.len(), 1);
        assert_eq!(found(&mut conn, &["short"]).await.len(), 40);
        assert_eq!(found(&mut conn, &["handbook"]).await.len(), 41);
    }
}
