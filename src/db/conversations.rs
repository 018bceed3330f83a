//! `conversations` and their search words (docs/PROTOCOL.md, "Conversations"): the
//! queries. A conversation row is written with the first `query_log` row of its turns,
//! in the same transaction (`query_log_store`), so there is no conversation without a
//! turn; what a conversation is beyond its rows is in `crate::conversations`.

use chrono::{DateTime, Utc};
use diesel::dsl::sql;
use diesel::prelude::*;
use diesel::sql_query;
use diesel::sql_types::{Array, Bool, Integer, Nullable, Text, Timestamptz, Uuid as SqlUuid};
use diesel_async::{AsyncPgConnection, RunQueryDsl};
use serde::Serialize;
use utoipa::ToSchema;
use uuid::Uuid;

use super::DbError;
use super::schema::{conversations, query_log};
use super::words::Word;
use bor_actors::record::{TurnPath, TurnStatus};

/// A conversation a batch of rows starts or continues.
#[derive(Debug, Clone, PartialEq)]
pub struct NewConversation {
    pub id: Uuid,
    pub title: String,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
    /// The questions and answers of the batch's rows, for the search document.
    pub text: String,
    /// Whose it is (the person who asked its first turn).
    pub user_id: Option<Uuid>,
}

/// A conversation as the list shows it.
#[derive(Debug, Clone, PartialEq, Serialize, Queryable, ToSchema)]
pub struct ConversationSummary {
    pub id: Uuid,
    pub title: String,
    pub created_at: DateTime<Utc>,
    /// The time of its newest turn.
    pub updated_at: DateTime<Utc>,
    /// How many turns it holds (a turn asked again counts once, whatever its versions).
    pub turns: i64,
    /// Whether its owner pinned it: the chat page lists it above the others.
    pub pinned: bool,
    /// Whether its owner archived it: it leaves the list and is listed with
    /// `archived=true` only; it still opens and continues.
    pub archived: bool,
}

/// Which of the owner's conversations a list holds: the archived ones or the others,
/// and of those the pinned ones, the others, or both (`pinned: None`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ListFilter {
    pub archived: bool,
    pub pinned: Option<bool>,
}

/// What a `PATCH` of a conversation changes; a field left `None` stays as it is.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ConversationChanges<'a> {
    pub title: Option<&'a str>,
    pub pinned: Option<bool>,
    pub archived: Option<bool>,
}

impl ConversationChanges<'_> {
    pub fn is_empty(&self) -> bool {
        self.title.is_none() && self.pinned.is_none() && self.archived.is_none()
    }
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
    #[diesel(deserialize_as = Word<TurnStatus>)]
    pub status: TurnStatus,
    /// `grounded`, `deflected` or `undecided`, as the turn's `done` frame said.
    #[schema(value_type = String, example = "grounded")]
    #[diesel(deserialize_as = Word<TurnPath>)]
    pub path: TurnPath,
    /// As the turn's `done` frame listed them.
    #[schema(value_type = Object)]
    pub sources: serde_json::Value,
    pub created_at: DateTime<Utc>,
    /// The turn this row is a version of (its first version's id); `None` for a first
    /// version. The API shows versions grouped instead.
    #[serde(skip)]
    pub version_of: Option<Uuid>,
}

impl ConversationTurn {
    /// The turn this row is a version of: its first version's id, which all its
    /// versions share.
    pub fn first_version(&self) -> Uuid {
        self.version_of.unwrap_or(self.turn_id)
    }
}

/// A stored turn as a history sends it to the model: without its sources, status and
/// path, which a history never reads.
#[derive(Debug, Clone, PartialEq, Queryable, Selectable)]
#[diesel(table_name = query_log, check_for_backend(diesel::pg::Pg))]
pub struct HistoryRow {
    pub turn_id: Uuid,
    pub question: String,
    pub answer: String,
    pub created_at: DateTime<Utc>,
    pub version_of: Option<Uuid>,
}

impl HistoryRow {
    /// The turn this row is a version of: its first version's id.
    pub fn first_version(&self) -> Uuid {
        self.version_of.unwrap_or(self.turn_id)
    }
}

/// A conversation's owner (`None` for one without an owner) and its last turns with
/// an answer, oldest first, each as its chosen version.
pub type OwnerAndHistory = (Option<Uuid>, Vec<HistoryRow>);

/// Keeps the rows that are their turn's chosen version, its newest: no newer row of the
/// conversation has the same first version.
///
/// Every version after the first names the first in `version_of`, and the first is the
/// oldest, so only rows naming the same first version can be newer: one probe of the
/// partial index on `version_of`, however long the conversation.
const CHOSEN_VERSION: &str = "NOT EXISTS (SELECT 1 FROM query_log AS newer
     WHERE newer.version_of = coalesce(query_log.version_of, query_log.turn_id)
       AND (newer.created_at, newer.id) > (query_log.created_at, query_log.id))";

/// The text search configuration of the search words: words lowercased, no stemming
/// and no stop words, so a search finds the words a person typed.
const SEARCH_CONFIGURATION: &str = "simple";

/// The most characters of turn text read into one search vector: at most 200 KB of
/// lexemes, far below PostgreSQL's 1 MB limit on one `tsvector`.
const SEARCH_PIECE_CHARS: usize = 50_000;

/// A search part takes a piece's words while both together stay under this many bytes;
/// else the piece starts the next part. Below the 1 MB limit of one `tsvector`, so that
/// no turn's row can ever be refused for the size of its conversation's words.
const SEARCH_PART_BYTES: i32 = 512 * 1024;

/// Writes new conversations and, for existing ones, moves `updated_at` forward (a title
/// once written, or renamed, stays); the new turns' words join the conversation's search
/// parts. One statement for the conversations and one per round of search pieces,
/// whatever the number of conversations (each is listed once: `touched_by` merges a
/// batch's rows by conversation). Rows are locked in the order of their ids, so two
/// writers (two instances) never wait on each other in a circle.
pub async fn upsert(
    conn: &mut AsyncPgConnection,
    conversations: &[NewConversation],
) -> Result<(), DbError> {
    if conversations.is_empty() {
        return Ok(());
    }
    let mut sorted: Vec<&NewConversation> = conversations.iter().collect();
    sorted.sort_by_key(|conversation| conversation.id);
    sql_query(
        "INSERT INTO conversations (id, title, created_at, updated_at, user_id)
         SELECT id, title, created_at, updated_at, user_id
         FROM unnest($1::uuid[], $2::text[], $3::timestamptz[], $4::timestamptz[], $5::uuid[])
             AS c (id, title, created_at, updated_at, user_id)
         ORDER BY id
         ON CONFLICT (id) DO UPDATE SET
             updated_at = GREATEST(conversations.updated_at, excluded.updated_at)",
    )
    .bind::<Array<SqlUuid>, _>(sorted.iter().map(|c| c.id).collect::<Vec<_>>())
    .bind::<Array<Text>, _>(sorted.iter().map(|c| c.title.as_str()).collect::<Vec<_>>())
    .bind::<Array<Timestamptz>, _>(sorted.iter().map(|c| c.created_at).collect::<Vec<_>>())
    .bind::<Array<Timestamptz>, _>(sorted.iter().map(|c| c.updated_at).collect::<Vec<_>>())
    .bind::<Array<Nullable<SqlUuid>>, _>(sorted.iter().map(|c| c.user_id).collect::<Vec<_>>())
    .execute(conn)
    .await?;
    add_search_pieces(conn, sorted.iter().map(|c| (c.id, c.text.as_str()))).await
}

/// Adds each conversation's text to its search words, in pieces. Round n adds the n-th
/// piece of every conversation that has one: a conversation's pieces join its parts in
/// order, and most batches need one round.
async fn add_search_pieces<'a>(
    conn: &mut AsyncPgConnection,
    texts: impl Iterator<Item = (Uuid, &'a str)>,
) -> Result<(), DbError> {
    let pieces: Vec<(Uuid, Vec<&str>)> = texts
        .map(|(id, text)| (id, search_pieces(text, SEARCH_PIECE_CHARS)))
        .collect();
    let rounds = pieces.iter().map(|(_, p)| p.len()).max().unwrap_or(0);
    for round in 0..rounds {
        let (ids, texts): (Vec<Uuid>, Vec<&str>) = pieces
            .iter()
            .filter_map(|(id, p)| p.get(round).map(|piece| (*id, *piece)))
            .unzip();
        add_search_words(conn, &ids, &texts).await?;
    }
    Ok(())
}

/// Adds the words of each piece to its conversation's last search part, or starts a
/// new part when the last one would grow past [`SEARCH_PART_BYTES`]; at most one piece
/// per conversation. Each conversation's last part is found by its own probe of the
/// primary key (the lateral `LIMIT 1`), whatever the planner believes of the table:
/// a join left to it scanned every part of every conversation, once per batch, while
/// the table was too new to have statistics. The conversations' rows are locked by the upsert before it, so
/// writers of one conversation take turns.
async fn add_search_words(
    conn: &mut AsyncPgConnection,
    conversation_ids: &[Uuid],
    pieces: &[&str],
) -> Result<(), DbError> {
    // `pg_column_size` of a computed value is its full size in memory (a stored one may
    // be compressed), hence `strip` (a copy) around the stored part.
    sql_query(format!(
        "WITH piece AS (
             SELECT p.conversation_id, strip(to_tsvector('{SEARCH_CONFIGURATION}', p.text)) AS words
             FROM unnest($1::uuid[], $2::text[]) AS p (conversation_id, text)),
         last AS (
             SELECT piece.conversation_id, s.part, s.words
             FROM piece CROSS JOIN LATERAL (
                 SELECT part, words FROM conversation_search
                 WHERE conversation_search.conversation_id = piece.conversation_id
                 ORDER BY part DESC LIMIT 1) AS s),
         appended AS (
             UPDATE conversation_search AS s SET words = s.words || piece.words
             FROM piece JOIN last USING (conversation_id)
             WHERE s.conversation_id = piece.conversation_id AND s.part = last.part
               AND length(piece.words) > 0
               AND pg_column_size(strip(last.words)) + pg_column_size(piece.words) < $3
             RETURNING s.conversation_id)
         INSERT INTO conversation_search (conversation_id, part, words)
         SELECT piece.conversation_id, coalesce(last.part, -1) + 1, piece.words
         FROM piece LEFT JOIN last USING (conversation_id)
         WHERE length(piece.words) > 0
           AND NOT EXISTS (SELECT 1 FROM appended WHERE appended.conversation_id = piece.conversation_id)"
    ))
    .bind::<Array<SqlUuid>, _>(conversation_ids)
    .bind::<Array<Text>, _>(pieces)
    .bind::<Integer, _>(SEARCH_PART_BYTES)
    .execute(conn)
    .await?;
    Ok(())
}

/// `text` in pieces of at most `max_chars` characters, each cut after the last
/// whitespace that fits (a word longer than a piece is cut where the piece ends).
fn search_pieces(text: &str, max_chars: usize) -> Vec<&str> {
    let mut pieces = Vec::new();
    let mut rest = text;
    while !rest.is_empty() {
        let limit = bor_actors::text::prefix_chars(rest, max_chars).len();
        if limit == rest.len() {
            pieces.push(rest);
            break;
        }
        let cut = rest[..limit]
            .rfind(char::is_whitespace)
            .map(|at| at + rest[at..].chars().next().map_or(1, char::len_utf8))
            .unwrap_or(limit);
        pieces.push(&rest[..cut]);
        rest = &rest[cut..];
    }
    pieces
}

/// The search of `words`: every word, each as the start of a word of the conversation
/// (so a search box finds while its last word is being typed), one prefix query each.
/// Only letters and digits count; empty when none is left.
fn search_terms(words: &[String]) -> Vec<String> {
    // Split as the documents are: at every character that is not a letter or a digit.
    words
        .iter()
        .flat_map(|word| word.split(|c: char| !c.is_alphanumeric()))
        .filter(|term| !term.is_empty())
        .map(|term| format!("{}:*", term.to_lowercase()))
        .collect()
}

/// Where a page of the list starts: after the conversation updated at `updated_at` with
/// this `id` in the list's order (newest first, then by id); without an id, after every
/// conversation updated at that moment.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PageStart {
    pub updated_at: DateTime<Utc>,
    pub id: Option<Uuid>,
}

/// The owner's conversations that `filter` keeps, newest first (ties by id), `limit` of
/// them, after `start` when given, whose title, questions and answers together hold
/// every word of `words` (case-insensitive; a word matches the start of a word).
pub async fn list(
    conn: &mut AsyncPgConnection,
    owner: Uuid,
    filter: ListFilter,
    words: &[String],
    limit: i64,
    start: Option<PageStart>,
) -> Result<Vec<ConversationSummary>, DbError> {
    let mut query = summaries()
        .filter(conversations::user_id.eq(owner))
        .filter(conversations::archived_at.is_not_null().eq(filter.archived))
        .order((conversations::updated_at.desc(), conversations::id))
        .limit(limit);
    if let Some(pinned) = filter.pinned {
        query = query.filter(conversations::pinned_at.is_not_null().eq(pinned));
    }
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
        let terms = search_terms(words);
        if terms.is_empty() {
            // Words without a letter or digit match nothing.
            return Ok(Vec::new());
        }
        // Each word in the title or in some part of the turns' words: the words of one
        // search may be spread over several parts.
        for term in terms {
            query = query.filter(
                sql::<Bool>(&format!(
                    "(conversations.title_words @@ to_tsquery('{SEARCH_CONFIGURATION}', "
                ))
                .bind::<Text, _>(term.clone())
                .sql(&format!(
                    ") OR conversations.id IN (SELECT s.conversation_id FROM conversation_search \
                     AS s WHERE s.words @@ to_tsquery('{SEARCH_CONFIGURATION}', "
                ))
                .bind::<Text, _>(term)
                .sql(")))"),
            );
        }
    }
    Ok(query.load(conn).await?)
}

/// The SQL types of a [`ConversationSummary`] row.
type SummaryRow = (
    SqlUuid,
    Text,
    Timestamptz,
    Timestamptz,
    diesel::sql_types::BigInt,
    Bool,
    Bool,
);

/// The conversations with their number of turns: [`ConversationSummary`] rows.
fn summaries<'a>() -> conversations::BoxedQuery<'a, diesel::pg::Pg, SummaryRow> {
    // Each turn once: its first version (every other version names it).
    let turns = query_log::table
        .filter(query_log::conversation_id.eq(conversations::id.nullable()))
        .filter(query_log::version_of.is_null())
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
            conversations::pinned_at.is_not_null(),
            conversations::archived_at.is_not_null(),
        ))
        .into_boxed()
}

/// One of the owner's conversations, as the list shows it.
pub async fn find(
    conn: &mut AsyncPgConnection,
    owner: Uuid,
    id: Uuid,
) -> Result<Option<ConversationSummary>, DbError> {
    Ok(summaries()
        .filter(conversations::id.eq(id))
        .filter(conversations::user_id.eq(owner))
        .first(conn)
        .await
        .optional()?)
}

/// The conversation's rows, every version of every turn, oldest first.
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

/// Rows a history reads at a time beyond the turns it is asked for, newest first: a
/// few older versions fit in the first page.
const HISTORY_PAGE_SPARE_ROWS: usize = 4;

/// The conversation's owner and its last `limit` turns with an answer, oldest first,
/// each as its chosen version, leaving out the turn whose first version is
/// `leaving_out` (the turn asked again); `None` when there is no such conversation.
/// The owner comes with the first page of rows, so the history of a conversation a
/// turn continues costs one round trip.
pub async fn owner_and_history(
    conn: &mut AsyncPgConnection,
    id: Uuid,
    limit: usize,
    leaving_out: Option<Uuid>,
) -> Result<Option<OwnerAndHistory>, DbError> {
    let mut reader = HistoryReader::new(id, limit, leaving_out);
    let first: Vec<(Option<Uuid>, HistoryRow, i64)> = query_log::table
        .inner_join(conversations::table)
        .filter(conversations::id.eq(id))
        .select((
            conversations::user_id,
            HistoryRow::as_select(),
            query_log::id,
        ))
        .order((query_log::created_at.desc(), query_log::id.desc()))
        .limit(reader.page_rows())
        .load(conn)
        .await?;
    let [(whose, _, _), ..] = *first.as_slice() else {
        // No row: no such conversation, or (should one ever be left without its
        // turns) one whose owner must still be known.
        return Ok(owner(conn, id).await?.map(|whose| (whose, Vec::new())));
    };
    if reader.take(first.into_iter().map(|(_, turn, row_id)| (turn, row_id))) {
        reader.read_on(conn).await?;
    }
    Ok(Some((whose, reader.turns())))
}

/// Reads a history newest first, a page of rows at a time down the conversation's
/// index: a row is its turn's chosen version when no newer row has its first version,
/// and versions of a turn are rows of its conversation, so the rows already read tell.
/// Whatever the conversation's length and the table's statistics, a history costs a
/// page or two.
struct HistoryReader {
    id: Uuid,
    limit: usize,
    leaving_out: Option<Uuid>,
    /// The chosen versions found, newest first.
    newest: Vec<HistoryRow>,
    /// The first versions met.
    seen: std::collections::HashSet<Uuid>,
    /// The last row read, where the next page starts.
    after: Option<(DateTime<Utc>, i64)>,
}

impl HistoryReader {
    fn new(id: Uuid, limit: usize, leaving_out: Option<Uuid>) -> Self {
        Self {
            id,
            limit,
            leaving_out,
            newest: Vec::new(),
            seen: std::collections::HashSet::new(),
            after: None,
        }
    }

    fn page_rows(&self) -> i64 {
        i64::try_from(self.limit.saturating_add(HISTORY_PAGE_SPARE_ROWS)).unwrap_or(i64::MAX)
    }

    /// Takes a page of rows; whether more are to be read (the page was full and turns
    /// are still missing).
    fn take(&mut self, rows: impl ExactSizeIterator<Item = (HistoryRow, i64)>) -> bool {
        let full = i64::try_from(rows.len()).is_ok_and(|n| n == self.page_rows());
        for (turn, row_id) in rows {
            self.after = Some((turn.created_at, row_id));
            let first_version = turn.first_version();
            // An older version of a turn already met is not its chosen one.
            if self.seen.insert(first_version)
                && Some(first_version) != self.leaving_out
                && !turn.answer.is_empty()
                && self.newest.len() < self.limit
            {
                self.newest.push(turn);
            }
        }
        full && self.newest.len() < self.limit
    }

    /// Reads pages after the last row read until the history is complete.
    async fn read_on(&mut self, conn: &mut AsyncPgConnection) -> Result<(), DbError> {
        loop {
            let mut page = query_log::table
                .filter(query_log::conversation_id.eq(self.id))
                .select((HistoryRow::as_select(), query_log::id))
                .order((query_log::created_at.desc(), query_log::id.desc()))
                .limit(self.page_rows())
                .into_boxed();
            if let Some((created_at, row_id)) = self.after {
                page = page.filter(
                    query_log::created_at
                        .lt(created_at)
                        .or(query_log::created_at
                            .eq(created_at)
                            .and(query_log::id.lt(row_id))),
                );
            }
            let rows: Vec<(HistoryRow, i64)> = page.load(conn).await?;
            if !self.take(rows.into_iter()) {
                return Ok(());
            }
        }
    }

    /// The history, oldest first.
    fn turns(mut self) -> Vec<HistoryRow> {
        self.newest.reverse();
        self.newest
    }
}

/// The first version of the conversation's last turn (the one whose rows are newest);
/// `None` for a conversation without rows.
pub async fn last_turn(conn: &mut AsyncPgConnection, id: Uuid) -> Result<Option<Uuid>, DbError> {
    let newest: Option<(Uuid, Option<Uuid>)> = query_log::table
        .filter(query_log::conversation_id.eq(id))
        .select((query_log::turn_id, query_log::version_of))
        .order((query_log::created_at.desc(), query_log::id.desc()))
        .first(conn)
        .await
        .optional()?;
    Ok(newest.map(|(turn_id, version_of)| version_of.unwrap_or(turn_id)))
}

/// Replaces the search words of `conversation_ids` with the words of their chosen
/// versions' questions and answers (a version asked again replaces its turn's words):
/// one query for the texts, one statement to clear them, then the rounds of
/// [`upsert`]. Called in the transaction that wrote the new versions, after `upsert`
/// locked the conversations' rows.
pub async fn rebuild_search_words(
    conn: &mut AsyncPgConnection,
    conversation_ids: &[Uuid],
) -> Result<(), DbError> {
    if conversation_ids.is_empty() {
        return Ok(());
    }
    let rows: Vec<(Option<Uuid>, String, String)> = query_log::table
        .filter(query_log::conversation_id.eq_any(conversation_ids))
        .filter(sql::<Bool>(CHOSEN_VERSION))
        .select((
            query_log::conversation_id,
            query_log::question,
            query_log::answer,
        ))
        .order((
            query_log::conversation_id,
            query_log::created_at,
            query_log::id,
        ))
        .load(conn)
        .await?;
    let mut texts: Vec<(Uuid, String)> = Vec::new();
    for (conversation_id, question, answer) in rows {
        let Some(conversation_id) = conversation_id else {
            continue;
        };
        let words = format!("{question} {answer}");
        match texts.last_mut() {
            Some((id, text)) if *id == conversation_id => {
                text.push(' ');
                text.push_str(&words);
            }
            _ => texts.push((conversation_id, words)),
        }
    }
    // The conversations' rows are locked by `upsert` before it, in the same transaction.
    sql_query("DELETE FROM conversation_search WHERE conversation_id = ANY($1)")
        .bind::<Array<SqlUuid>, _>(conversation_ids)
        .execute(conn)
        .await?;
    add_search_pieces(conn, texts.iter().map(|(id, text)| (*id, text.as_str()))).await
}

/// Whose the conversation is: `None` when there is none (`Some(None)` for one written
/// before accounts and not given to anyone yet).
pub async fn owner(
    conn: &mut AsyncPgConnection,
    id: Uuid,
) -> Result<Option<Option<Uuid>>, DbError> {
    Ok(conversations::table
        .find(id)
        .select(conversations::user_id)
        .first(conn)
        .await
        .optional()?)
}

/// The columns a change writes: a field left `None` is not written.
#[derive(AsChangeset)]
#[diesel(table_name = conversations)]
struct ChangedColumns<'a> {
    title: Option<&'a str>,
    pinned_at: Option<Option<DateTime<Utc>>>,
    archived_at: Option<Option<DateTime<Utc>>>,
}

/// Renames, pins or unpins, archives or unarchives one of the owner's conversations;
/// `None` when they have none of that id. Pinning or archiving one that is already so
/// keeps the time it was first done. `changes` must change something.
pub async fn change(
    conn: &mut AsyncPgConnection,
    owner: Uuid,
    id: Uuid,
    changes: ConversationChanges<'_>,
) -> Result<Option<ConversationSummary>, DbError> {
    let Some(current) = find(conn, owner, id).await? else {
        return Ok(None);
    };
    let now = Utc::now();
    // A flag already as asked is not written again, so its time stays the first one.
    let time_of = |asked: Option<bool>, already: bool| match asked {
        Some(wanted) if wanted != already => Some(wanted.then_some(now)),
        _ => None,
    };
    let columns = ChangedColumns {
        title: changes.title,
        pinned_at: time_of(changes.pinned, current.pinned),
        archived_at: time_of(changes.archived, current.archived),
    };
    if columns.title.is_none() && columns.pinned_at.is_none() && columns.archived_at.is_none() {
        return Ok(Some(current));
    }
    // The title's words follow it (a generated column); the turns' words stay.
    let changed = diesel::update(
        conversations::table
            .filter(conversations::id.eq(id))
            .filter(conversations::user_id.eq(owner)),
    )
    .set(columns)
    .execute(conn)
    .await?;
    if changed == 0 {
        return Ok(None);
    }
    find(conn, owner, id).await
}

/// Deletes one of the owner's conversations and its turns' rows; false when they had
/// none of that id.
pub async fn delete(conn: &mut AsyncPgConnection, owner: Uuid, id: Uuid) -> Result<bool, DbError> {
    Ok(diesel::delete(
        conversations::table
            .filter(conversations::id.eq(id))
            .filter(conversations::user_id.eq(owner)),
    )
    .execute(conn)
    .await?
        > 0)
}

/// Gives the conversations and rows written before accounts (of no user) to the first
/// admin made; returns how many conversations moved (none while there is no admin).
pub async fn give_unowned_to_first_admin(conn: &mut AsyncPgConnection) -> Result<usize, DbError> {
    const FIRST_ADMIN: &str =
        "(SELECT id FROM users WHERE role = 'admin' ORDER BY created_at, id LIMIT 1)";
    let moved = sql_query(format!(
        "UPDATE conversations SET user_id = {FIRST_ADMIN}
         WHERE user_id IS NULL AND {FIRST_ADMIN} IS NOT NULL"
    ))
    .execute(conn)
    .await?;
    sql_query(format!(
        "UPDATE query_log SET user_id = {FIRST_ADMIN}
         WHERE user_id IS NULL AND {FIRST_ADMIN} IS NOT NULL"
    ))
    .execute(conn)
    .await?;
    Ok(moved)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_search_is_every_word_as_a_word_start() {
        let words =
            |text: &str| -> Vec<String> { text.split_whitespace().map(str::to_owned).collect() };
        assert_eq!(search_terms(&words("Kettle boil")), ["kettle:*", "boil:*"]);
        assert_eq!(search_terms(&words("100% it's")), ["100:*", "it:*", "s:*"]);
        assert_eq!(search_terms(&words("Ünïcode")), ["ünïcode:*"]);
        assert!(search_terms(&words("& | ! :*")).is_empty());
    }

    #[test]
    fn turn_text_is_read_in_pieces_cut_between_words() {
        assert!(search_pieces("", 5).is_empty());
        assert_eq!(search_pieces("short", 5), ["short"]);
        assert_eq!(search_pieces("one two three", 8), ["one two ", "three"]);
        assert_eq!(
            search_pieces("abcdefghij", 4),
            ["abcd", "efgh", "ij"],
            "a word longer than a piece is cut"
        );
        let text = "ü ".repeat(10);
        let pieces = search_pieces(&text, 3);
        assert!(pieces.iter().all(|piece| piece.chars().count() <= 3));
        assert_eq!(pieces.concat(), text, "nothing lost or repeated");
    }
}
