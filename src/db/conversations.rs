//! `conversations`: titled sequences of turns (docs/PROTOCOL.md, "Conversations"). A
//! conversation row is written with the first `query_log` row of its turns, in the same
//! transaction, so there is no conversation without a turn.

use chrono::{DateTime, Utc};
use diesel::dsl::sql;
use diesel::prelude::*;
use diesel::sql_query;
use diesel::sql_types::{Bool, Text, Timestamptz, Uuid as SqlUuid};
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

/// A conversation a batch of rows starts or continues.
#[derive(Debug, Clone, PartialEq)]
pub struct NewConversation {
    pub id: Uuid,
    pub title: String,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
    /// The questions and answers of the batch's rows, for the search document.
    pub text: String,
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
#[derive(Debug, Clone, PartialEq, Serialize, Queryable, Selectable, ToSchema)]
#[diesel(table_name = query_log, check_for_backend(diesel::pg::Pg))]
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
        let words = format!("{} {}", entry.question, entry.answer);
        let known = touched
            .iter_mut()
            .find(|conversation| conversation.id == id);
        match known {
            Some(conversation) => {
                if entry.created_at < conversation.created_at {
                    conversation.created_at = entry.created_at;
                    conversation.title = title_of(&entry.question);
                }
                conversation.updated_at = conversation.updated_at.max(entry.created_at);
                conversation.text.push(' ');
                conversation.text.push_str(&words);
            }
            None => touched.push(NewConversation {
                id,
                title: title_of(&entry.question),
                created_at: entry.created_at,
                updated_at: entry.created_at,
                text: words,
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

/// The text search configuration of the search documents: words lowercased, no
/// stemming and no stop words, so a search finds the words a person typed.
const SEARCH_CONFIGURATION: &str = "simple";

/// Writes new conversations and, for existing ones, moves `updated_at` forward and adds
/// the new turns' words to the search document (a title once written, or renamed,
/// stays).
pub async fn upsert(
    conn: &mut AsyncPgConnection,
    conversations: &[NewConversation],
) -> Result<(), DbError> {
    for conversation in conversations {
        sql_query(format!(
            "INSERT INTO conversations (id, title, created_at, updated_at, search)
             VALUES ($1, $2, $3, $4, to_tsvector('{SEARCH_CONFIGURATION}', $2 || ' ' || $5))
             ON CONFLICT (id) DO UPDATE SET
                 updated_at = GREATEST(conversations.updated_at, excluded.updated_at),
                 search = conversations.search || to_tsvector('{SEARCH_CONFIGURATION}', $5)"
        ))
        .bind::<SqlUuid, _>(conversation.id)
        .bind::<Text, _>(&conversation.title)
        .bind::<Timestamptz, _>(conversation.created_at)
        .bind::<Timestamptz, _>(conversation.updated_at)
        .bind::<Text, _>(&conversation.text)
        .execute(conn)
        .await?;
    }
    Ok(())
}

/// The search of `words`: every word, each as the start of a word of the conversation
/// (so a search box finds while its last word is being typed). Only letters and digits
/// count; `None` when none is left.
fn search_query(words: &[String]) -> Option<String> {
    // Split as the documents are: at every character that is not a letter or a digit.
    let terms: Vec<String> = words
        .iter()
        .flat_map(|word| word.split(|c: char| !c.is_alphanumeric()))
        .filter(|term| !term.is_empty())
        .map(|term| format!("{}:*", term.to_lowercase()))
        .collect();
    (!terms.is_empty()).then(|| terms.join(" & "))
}

/// Where a page of the list starts: after the conversation updated at `updated_at` with
/// this `id` in the list's order (newest first, then by id); without an id, after every
/// conversation updated at that moment.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PageStart {
    pub updated_at: DateTime<Utc>,
    pub id: Option<Uuid>,
}

/// Conversations newest first (ties by id), `limit` of them, after `start` when given,
/// whose title, questions and answers together hold every word of `words`
/// (case-insensitive; a word matches the start of a word).
pub async fn list(
    conn: &mut AsyncPgConnection,
    words: &[String],
    limit: i64,
    start: Option<PageStart>,
) -> Result<Vec<ConversationSummary>, DbError> {
    let mut query = summaries()
        .order((conversations::updated_at.desc(), conversations::id))
        .limit(limit);
    match start {
        None => {}
        Some(PageStart {
            updated_at,
            id: None,
        }) => query = query.filter(conversations::updated_at.lt(updated_at)),
        Some(PageStart {
            updated_at,
            id: Some(id),
        }) => {
            query = query.filter(
                conversations::updated_at
                    .lt(updated_at)
                    .or(conversations::updated_at
                        .eq(updated_at)
                        .and(conversations::id.gt(id))),
            )
        }
    }
    if !words.is_empty() {
        let Some(search) = search_query(words) else {
            // Words without a letter or digit match nothing.
            return Ok(Vec::new());
        };
        query = query.filter(
            sql::<Bool>(&format!(
                "conversations.search @@ to_tsquery('{SEARCH_CONFIGURATION}', "
            ))
            .bind::<Text, _>(search)
            .sql(")"),
        );
    }
    Ok(query.load(conn).await?)
}

/// The conversations with their number of turns: [`ConversationSummary`] rows.
fn summaries<'a>() -> conversations::BoxedQuery<
    'a,
    diesel::pg::Pg,
    (
        SqlUuid,
        Text,
        Timestamptz,
        Timestamptz,
        diesel::sql_types::BigInt,
    ),
> {
    let turns = query_log::table
        .filter(query_log::conversation_id.eq(conversations::id.nullable()))
        .count()
        .single_value()
        .assume_not_null();
    conversations::table
        .select((
            conversations::id,
            conversations::title,
            conversations::created_at,
            conversations::updated_at,
            turns,
        ))
        .into_boxed()
}

/// One conversation's summary.
pub async fn find(
    conn: &mut AsyncPgConnection,
    id: Uuid,
) -> Result<Option<ConversationSummary>, DbError> {
    Ok(summaries()
        .filter(conversations::id.eq(id))
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
        .select(ConversationTurn::as_select())
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
        .select(ConversationTurn::as_select())
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
    // The search document is made again: the old title's words go.
    let renamed = sql_query(format!(
        "UPDATE conversations SET title = $2, search = to_tsvector('{SEARCH_CONFIGURATION}',
             $2 || ' ' || coalesce((SELECT string_agg(q.question || ' ' || q.answer, ' ')
                                    FROM query_log AS q WHERE q.conversation_id = $1), ''))
         WHERE id = $1"
    ))
    .bind::<SqlUuid, _>(id)
    .bind::<Text, _>(title)
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_search_is_every_word_as_a_word_start() {
        let words =
            |text: &str| -> Vec<String> { text.split_whitespace().map(str::to_owned).collect() };
        assert_eq!(
            search_query(&words("Kettle boil")).as_deref(),
            Some("kettle:* & boil:*")
        );
        assert_eq!(
            search_query(&words("100% it's")).as_deref(),
            Some("100:* & it:* & s:*")
        );
        assert_eq!(
            search_query(&words("Ünïcode")).as_deref(),
            Some("ünïcode:*")
        );
        assert_eq!(search_query(&words("& | ! :*")), None);
    }
}
