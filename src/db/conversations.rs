//! `conversations`: titled sequences of turns (SPEC §10). A conversation row is written
//! with the first `query_log` row of its turns, in the same transaction, so there is no
//! conversation without a turn.

use chrono::{DateTime, Utc};
use diesel::dsl::sql;
use diesel::prelude::*;
use diesel::sql_types::Timestamptz;
use diesel_async::{AsyncPgConnection, RunQueryDsl};
use serde::Serialize;
use utoipa::ToSchema;
use uuid::Uuid;

use super::DbError;
use super::query_log::{NewQueryLogEntry, TurnPath, TurnStatus};
use super::schema::{conversations, query_log};

/// The longest title taken from a question, in characters (`…` included).
pub const TITLE_CHARS: usize = 80;
/// Turns a turn's history holds at most.
pub const HISTORY_TURNS: i64 = 20;

#[derive(Debug, Clone, PartialEq, Insertable)]
#[diesel(table_name = conversations, check_for_backend(diesel::pg::Pg))]
pub struct NewConversation {
    pub id: Uuid,
    pub title: String,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
}

/// A conversation as the list shows it.
#[derive(Debug, Clone, PartialEq, Serialize, Queryable, ToSchema)]
pub struct ConversationSummary {
    pub id: Uuid,
    pub title: String,
    pub created_at: DateTime<Utc>,
    /// The time of its newest turn.
    pub updated_at: DateTime<Utc>,
    /// How many turns it holds.
    pub turns: i64,
}

/// A turn of a conversation.
#[derive(Debug, Clone, PartialEq, Serialize, Queryable, ToSchema)]
pub struct ConversationTurn {
    pub turn_id: Uuid,
    pub question: String,
    pub answer: String,
    /// `done` or `stopped`.
    #[schema(value_type = String, example = "done")]
    pub status: TurnStatus,
    /// `grounded`, `deflected` or `undecided`, as the turn's `done` frame said.
    #[schema(value_type = String, example = "grounded")]
    pub path: TurnPath,
    /// As the turn's `done` frame listed them.
    #[schema(value_type = Object)]
    pub sources: serde_json::Value,
    pub created_at: DateTime<Utc>,
}

/// The conversations the rows start or continue: per conversation, the title and start
/// of its earliest row in the batch and the time of its latest.
pub fn touched_by(entries: &[NewQueryLogEntry]) -> Vec<NewConversation> {
    let mut touched: Vec<NewConversation> = Vec::new();
    for entry in entries {
        let Some(id) = entry.conversation_id else {
            continue;
        };
        match touched
            .iter_mut()
            .find(|conversation| conversation.id == id)
        {
            Some(conversation) => {
                if entry.created_at < conversation.created_at {
                    conversation.created_at = entry.created_at;
                    conversation.title = title_of(&entry.question);
                }
                conversation.updated_at = conversation.updated_at.max(entry.created_at);
            }
            None => touched.push(NewConversation {
                id,
                title: title_of(&entry.question),
                created_at: entry.created_at,
                updated_at: entry.created_at,
            }),
        }
    }
    touched
}

/// A conversation's title from its first question: whitespace collapsed, cut at
/// [`TITLE_CHARS`] characters with `…`.
pub fn title_of(question: &str) -> String {
    bor_actors::record::shortened(question, TITLE_CHARS)
}

/// Writes new conversations and moves the `updated_at` of existing ones forward (a
/// title once written, or renamed, stays).
pub async fn upsert(
    conn: &mut AsyncPgConnection,
    conversations: &[NewConversation],
) -> Result<(), DbError> {
    if conversations.is_empty() {
        return Ok(());
    }
    diesel::insert_into(conversations::table)
        .values(conversations)
        .on_conflict(conversations::id)
        .do_update()
        .set(conversations::updated_at.eq(sql::<Timestamptz>(
            "GREATEST(conversations.updated_at, excluded.updated_at)",
        )))
        .execute(conn)
        .await?;
    Ok(())
}

/// Conversations newest first, `limit` of them, older than `before` when given, each of
/// whose title, questions or answers hold every word of `words` (case-insensitive).
pub async fn list(
    conn: &mut AsyncPgConnection,
    words: &[String],
    limit: i64,
    before: Option<DateTime<Utc>>,
) -> Result<Vec<ConversationSummary>, DbError> {
    let turns = query_log::table
        .filter(query_log::conversation_id.eq(conversations::id.nullable()))
        .count()
        .single_value()
        .assume_not_null();
    let mut query = conversations::table
        .select((
            conversations::id,
            conversations::title,
            conversations::created_at,
            conversations::updated_at,
            turns,
        ))
        .order((conversations::updated_at.desc(), conversations::id))
        .limit(limit)
        .into_boxed();
    if let Some(before) = before {
        query = query.filter(conversations::updated_at.lt(before));
    }
    for word in words {
        let pattern = format!("%{}%", escape_like(word));
        let in_turns = diesel::dsl::exists(
            query_log::table
                .filter(query_log::conversation_id.eq(conversations::id.nullable()))
                .filter(
                    query_log::question
                        .ilike(pattern.clone())
                        .or(query_log::answer.ilike(pattern.clone())),
                ),
        );
        query = query.filter(conversations::title.ilike(pattern).or(in_turns));
    }
    Ok(query.load(conn).await?)
}

/// `%`, `_` and `\` match themselves in a `LIKE` pattern.
fn escape_like(word: &str) -> String {
    let mut escaped = String::with_capacity(word.len());
    for character in word.chars() {
        if matches!(character, '%' | '_' | '\\') {
            escaped.push('\\');
        }
        escaped.push(character);
    }
    escaped
}

/// One conversation's summary.
pub async fn find(
    conn: &mut AsyncPgConnection,
    id: Uuid,
) -> Result<Option<ConversationSummary>, DbError> {
    let turns = query_log::table
        .filter(query_log::conversation_id.eq(conversations::id.nullable()))
        .count()
        .single_value()
        .assume_not_null();
    Ok(conversations::table
        .find(id)
        .select((
            conversations::id,
            conversations::title,
            conversations::created_at,
            conversations::updated_at,
            turns,
        ))
        .first(conn)
        .await
        .optional()?)
}

/// The conversation's turns, oldest first.
pub async fn turns(
    conn: &mut AsyncPgConnection,
    id: Uuid,
) -> Result<Vec<ConversationTurn>, DbError> {
    Ok(query_log::table
        .filter(query_log::conversation_id.eq(id))
        .select((
            query_log::turn_id,
            query_log::question,
            query_log::answer,
            query_log::status,
            query_log::path,
            query_log::sources,
            query_log::created_at,
        ))
        .order((query_log::created_at, query_log::id))
        .load(conn)
        .await?)
}

/// The last [`HISTORY_TURNS`] turns with an answer, oldest first: the history a new
/// turn of the conversation sends the model.
pub async fn history(
    conn: &mut AsyncPgConnection,
    id: Uuid,
) -> Result<Vec<ConversationTurn>, DbError> {
    let mut newest: Vec<ConversationTurn> = query_log::table
        .filter(query_log::conversation_id.eq(id))
        .filter(query_log::answer.ne(""))
        .select((
            query_log::turn_id,
            query_log::question,
            query_log::answer,
            query_log::status,
            query_log::path,
            query_log::sources,
            query_log::created_at,
        ))
        .order((query_log::created_at.desc(), query_log::id.desc()))
        .limit(HISTORY_TURNS)
        .load(conn)
        .await?;
    newest.reverse();
    Ok(newest)
}

/// Renames a conversation; `None` when there is none.
pub async fn rename(
    conn: &mut AsyncPgConnection,
    id: Uuid,
    title: &str,
) -> Result<Option<ConversationSummary>, DbError> {
    let renamed = diesel::update(conversations::table.find(id))
        .set(conversations::title.eq(title))
        .execute(conn)
        .await?;
    if renamed == 0 {
        return Ok(None);
    }
    find(conn, id).await
}

/// Deletes a conversation and its turns' rows; false when there was none.
pub async fn delete(conn: &mut AsyncPgConnection, id: Uuid) -> Result<bool, DbError> {
    Ok(diesel::delete(conversations::table.find(id))
        .execute(conn)
        .await?
        > 0)
}
