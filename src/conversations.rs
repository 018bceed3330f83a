//! Conversations (docs/PROTOCOL.md, "Conversations"): what a conversation is beyond its
//! rows. The history a new turn of it sends the model (its stored turns and those still
//! in the LogActor's queue), its title, the conversations its rows start or continue,
//! how its list is paged, and its export. The queries are in `db::conversations`; the
//! routes in `http::conversations` and `http::chat`.

use std::collections::HashMap;
use std::time::Duration;

use actix::Addr;
use bor_actors::llm::ChatMessage;
use bor_actors::log::{Flush, LogActor, QueuedTurns};
use chrono::{DateTime, Utc};
use serde::Serialize;
use serde_json::Value;
use utoipa::ToSchema;
use uuid::Uuid;

use crate::db::conversations::{
    self as stored, ConversationTurn, ListFilter, NewConversation, PageStart,
};
use crate::db::feedback::StoredFeedback;
use crate::db::query_log::NewQueryLogEntry;
use crate::db::{DbError, DbPool};
use crate::stored_history::StoredHistories;

/// The most earlier turns a turn sees: a stored conversation's last 20 turns with an
/// answer, and at most 20 messages of a history a request brings itself (`history` on
/// `POST /api/chat`, the messages before the question on `/v1`).
pub const HISTORY_LIMIT: usize = 20;

/// The longest title taken from a question, in characters (`…` included).
pub const TITLE_CHARS: usize = 80;

/// A conversation's title from its first question: whitespace collapsed, cut at
/// [`TITLE_CHARS`] characters with `…`.
pub fn title_of(question: &str) -> String {
    bor_actors::record::shortened(question, TITLE_CHARS)
}

/// The conversations the rows start or continue: per conversation, the title and start
/// of its earliest row in the batch, the time of its latest, and the words of them all.
pub fn touched_by(entries: &[NewQueryLogEntry]) -> Vec<NewConversation> {
    let mut touched: Vec<NewConversation> = Vec::new();
    for entry in entries {
        let Some(id) = entry.conversation_id else {
            continue;
        };
        let words = format!("{} {}", entry.question, entry.answer);
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
                conversation.text.push(' ');
                conversation.text.push_str(&words);
            }
            None => touched.push(NewConversation {
                id,
                title: title_of(&entry.question),
                created_at: entry.created_at,
                updated_at: entry.created_at,
                text: words,
                user_id: entry.user_id,
            }),
        }
    }
    touched
}

/// A turn of a conversation's history.
struct HistoryTurn {
    created_at: DateTime<Utc>,
    turn_id: Uuid,
    /// Its first version's id, which every version of the turn shares.
    first_version: Uuid,
    question: String,
    answer: String,
}

/// The history a new turn of the owner's conversation sends the model: its last
/// [`HISTORY_LIMIT`] turns with an answer, each as its chosen (newest) version, stored
/// or still in the LogActor's queue (a turn that just ended), oldest first, as user and
/// assistant messages; without the turn whose first version is `leaving_out` (a turn
/// asked again does not see itself). `None` when the conversation is somebody else's
/// (an id of nobody's is a new conversation: no history).
pub async fn history(
    histories: &StoredHistories,
    log: &Addr<LogActor>,
    owner: Uuid,
    id: Uuid,
    leaving_out: Option<Uuid>,
) -> Result<Option<Vec<ChatMessage>>, DbError> {
    // The queue first, then the stored rows: a row that leaves the queue between the
    // two is stored (and cached) before it leaves, so it is seen in one or the other.
    let queued = log
        .send(QueuedTurns {
            conversation_id: id,
            limit: HISTORY_LIMIT,
        })
        .await
        // A LogActor that does not answer holds no turn this one could see.
        .unwrap_or_default();
    let stored = histories.read(id, leaving_out).await?;
    let stored = match stored.as_deref() {
        Some((whose, _)) if *whose != Some(owner) => return Ok(None),
        Some((_, turns)) => turns.as_slice(),
        None => &[],
    };
    if queued.iter().any(|record| record.user_id != Some(owner)) {
        return Ok(None);
    }
    let mut turns: Vec<HistoryTurn> = stored
        .iter()
        .map(|turn| HistoryTurn {
            created_at: turn.created_at,
            turn_id: turn.turn_id,
            first_version: turn.first_version(),
            question: turn.question.clone(),
            answer: turn.answer.clone(),
        })
        .collect();
    for record in queued {
        let first_version = record.first_version;
        let known = turns.iter().any(|turn| {
            turn.turn_id == record.turn_id
                || (turn.first_version == first_version && turn.created_at > record.created_at)
        });
        if record.has_row
            && !record.answer.is_empty()
            && !known
            && Some(first_version) != leaving_out
        {
            // A newer version replaces the one stored.
            turns.retain(|turn| turn.first_version != first_version);
            turns.push(HistoryTurn {
                created_at: record.created_at,
                turn_id: record.turn_id,
                first_version,
                question: record.question,
                answer: record.answer,
            });
        }
    }
    turns.sort_by_key(|turn| turn.created_at);
    let skip = turns.len().saturating_sub(HISTORY_LIMIT);
    Ok(Some(
        turns
            .into_iter()
            .skip(skip)
            .flat_map(|turn| {
                [
                    ChatMessage::user(turn.question),
                    ChatMessage::assistant(turn.answer),
                ]
            })
            .collect(),
    ))
}

/// How long a new version waits for the rows still queued in the LogActor to be
/// written, so that the turn it names and the turns after it are seen.
const ROW_WAIT: Duration = Duration::from_secs(5);

/// The turn a new version is made of: its conversation and its first version's id.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct VersionTarget {
    pub conversation_id: Uuid,
    pub first_version: Uuid,
}

/// What a turn named to be asked again is (docs/PROTOCOL.md, "Versions of a turn").
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum VersionOf {
    /// The owner's, the last of its conversation: a new version may be made of it.
    Turn(VersionTarget),
    /// A turn of the owner's conversation with a turn after it.
    NotLast,
    /// No row of the owner's has that id (another's, a `/v1` turn's, none).
    Absent,
}

/// The owner's turn `turn_id` (any version's id) as a new version would ask it again.
/// The LogActor's queue is written first (bounded by [`ROW_WAIT`]): a turn that just
/// ended, and any turn after it, are then rows.
pub async fn version_target(
    pool: &DbPool,
    log: &Addr<LogActor>,
    owner: Uuid,
    turn_id: Uuid,
) -> Result<VersionOf, DbError> {
    // A timeout or a gone actor leaves the rows as the database has them.
    let _ = tokio::time::timeout(ROW_WAIT, log.send(Flush)).await;
    let mut conn = pool.get().await?;
    let Some(row) = crate::db::query_log::find(&mut conn, turn_id).await? else {
        return Ok(VersionOf::Absent);
    };
    let Some(conversation_id) = row.conversation_id.filter(|_| row.user_id == Some(owner)) else {
        return Ok(VersionOf::Absent);
    };
    let first_version = row.version_of.unwrap_or(row.turn_id);
    if stored::last_turn(&mut conn, conversation_id).await? != Some(first_version) {
        return Ok(VersionOf::NotLast);
    }
    Ok(VersionOf::Turn(VersionTarget {
        conversation_id,
        first_version,
    }))
}

/// Conversations a page lists unless asked otherwise, and at most.
pub const DEFAULT_PAGE: i64 = 50;
pub const MAX_PAGE: i64 = 200;

/// A page of the list, as asked for: the search words, the page size, where it starts.
#[derive(Debug, Clone, PartialEq)]
pub struct Listing {
    pub words: Vec<String>,
    pub limit: i64,
    pub start: Option<PageStart>,
}

/// The filter of the query's `archived` and `pinned` (`true` or `false`; `archived`
/// absent is `false`, `pinned` absent keeps both).
pub fn list_filter(archived: Option<&str>, pinned: Option<&str>) -> Result<ListFilter, String> {
    let flag = |name: &str, raw: &str| match raw.trim() {
        "true" => Ok(true),
        "false" => Ok(false),
        _ => Err(format!("`{name}` must be true or false")),
    };
    Ok(ListFilter {
        archived: archived
            .map(|raw| flag("archived", raw))
            .transpose()?
            .unwrap_or(false),
        pinned: pinned.map(|raw| flag("pinned", raw)).transpose()?,
    })
}

impl Listing {
    /// The page from the query's texts (`q`, `limit`, `before`, `before_id`); a text that
    /// does not parse is refused with what it must be.
    pub fn parse(
        q: Option<&str>,
        limit: Option<&str>,
        before: Option<&str>,
        before_id: Option<&str>,
    ) -> Result<Self, String> {
        let limit = match limit {
            None => DEFAULT_PAGE,
            Some(raw) => raw
                .trim()
                .parse::<i64>()
                .ok()
                .filter(|limit| (1..=MAX_PAGE).contains(limit))
                .ok_or_else(|| format!("`limit` must be an integer from 1 to {MAX_PAGE}"))?,
        };
        let start = match (before, before_id) {
            (None, None) => None,
            (None, Some(_)) => return Err("`before_id` goes with `before`".to_owned()),
            (Some(raw), id) => Some(PageStart {
                updated_at: DateTime::parse_from_rfc3339(raw.trim())
                    .map_err(|_| "`before` must be an RFC 3339 time".to_owned())?
                    .with_timezone(&Utc),
                id: id
                    .map(|id| Uuid::parse_str(id.trim()))
                    .transpose()
                    .map_err(|_| "`before_id` must be a UUID".to_owned())?,
            }),
        };
        let words = q
            .unwrap_or_default()
            .split_whitespace()
            .map(str::to_owned)
            .collect();
        Ok(Self {
            words,
            limit,
            start,
        })
    }
}

/// One conversation with its turns, oldest first.
#[derive(Debug, Serialize, ToSchema)]
pub struct Conversation {
    pub id: Uuid,
    pub title: String,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
    /// As in the list: pinned by its owner.
    pub pinned: bool,
    /// As in the list: archived by its owner (it opens and continues all the same).
    pub archived: bool,
    pub turns: Vec<LoadedTurn>,
}

/// A turn of a loaded conversation as its chosen (newest) version, with the owner's
/// rating of that version and every version of the turn.
#[derive(Debug, Serialize, ToSchema)]
pub struct LoadedTurn {
    #[serde(flatten)]
    pub chosen: TurnVersion,
    /// Every version of the turn, oldest first, the chosen one (the last) included: one
    /// for a turn never asked again (docs/PROTOCOL.md, "Versions of a turn").
    pub versions: Vec<TurnVersion>,
}

/// One version of a turn: its row, with the owner's rating of it.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct TurnVersion {
    #[serde(flatten)]
    pub turn: ConversationTurn,
    /// The owner's rating (docs/PROTOCOL.md, "Feedback"); `null`: none.
    pub feedback: Option<StoredFeedback>,
}

impl std::ops::Deref for LoadedTurn {
    type Target = ConversationTurn;

    fn deref(&self) -> &ConversationTurn {
        &self.chosen.turn
    }
}

/// The rows of a conversation, oldest first, as its turns: the versions of each turn
/// together, in the place of its first version, the newest chosen.
fn grouped_versions(rows: Vec<TurnVersion>) -> Vec<LoadedTurn> {
    let mut turns: Vec<Vec<TurnVersion>> = Vec::new();
    let mut place: HashMap<Uuid, usize> = HashMap::new();
    for row in rows {
        let first_version = row.turn.first_version();
        match place.get(&first_version) {
            Some(&at) => turns[at].push(row),
            None => {
                place.insert(first_version, turns.len());
                turns.push(vec![row]);
            }
        }
    }
    turns
        .into_iter()
        .filter_map(|versions| {
            let chosen = versions.last()?.clone();
            Some(LoadedTurn { chosen, versions })
        })
        .collect()
}

/// The owner's conversation with its turns; `None` when they have none of that id.
pub async fn load(pool: &DbPool, owner: Uuid, id: Uuid) -> Result<Option<Conversation>, DbError> {
    let mut conn = pool.get().await?;
    let Some(summary) = stored::find(&mut conn, owner, id).await? else {
        return Ok(None);
    };
    let rows = stored::turns(&mut conn, id).await?;
    let turn_ids: Vec<Uuid> = rows.iter().map(|turn| turn.turn_id).collect();
    let mut ratings: HashMap<Uuid, StoredFeedback> =
        crate::db::feedback::of_turns(&mut conn, &turn_ids)
            .await?
            .into_iter()
            .collect();
    let rows = rows
        .into_iter()
        .map(|turn| TurnVersion {
            feedback: ratings.remove(&turn.turn_id),
            turn,
        })
        .collect();
    let turns = grouped_versions(rows);
    Ok(Some(Conversation {
        id: summary.id,
        title: summary.title,
        created_at: summary.created_at,
        updated_at: summary.updated_at,
        pinned: summary.pinned,
        archived: summary.archived,
        turns,
    }))
}

/// The conversation as Markdown: its title as a heading, each question and answer, each
/// answer's sources.
pub fn markdown(conversation: &Conversation) -> String {
    let mut text = format!("# {}\n", one_line(&conversation.title));
    for turn in &conversation.turns {
        text.push_str(&format!("\n## {}\n\n", one_line(&turn.question)));
        // A question of several lines is quoted whole under its one-line heading.
        if turn.question.contains('\n') {
            text.push_str(&format!("> {}\n\n", turn.question.replace('\n', "\n> ")));
        }
        text.push_str(turn.answer.trim());
        text.push('\n');
        let sources: Vec<String> = turn
            .sources
            .as_array()
            .map(|sources| sources.iter().map(source_line).collect())
            .unwrap_or_default();
        if !sources.is_empty() {
            text.push_str("\nSources:\n\n");
            for line in sources {
                text.push_str(&line);
                text.push('\n');
            }
        }
    }
    text
}

fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

fn source_line(source: &Value) -> String {
    let n = source.get("n").and_then(Value::as_u64);
    let title = source.get("title").and_then(Value::as_str).unwrap_or("");
    let heading = source.get("heading").and_then(Value::as_str).unwrap_or("");
    let page = source.get("page").and_then(Value::as_u64);
    let mut line = match n {
        Some(n) => format!("- [{n}] {}", one_line(title)),
        None => format!("- {}", one_line(title)),
    };
    if !heading.is_empty() {
        line.push_str(&format!(" — {}", one_line(heading)));
    }
    if let Some(page) = page {
        line.push_str(&format!(", page {page}"));
    }
    line
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_listing_is_parsed_from_its_texts() {
        let listing = Listing::parse(Some(" kettle  boil "), None, None, None).unwrap();
        assert_eq!(listing.words, ["kettle", "boil"]);
        assert_eq!((listing.limit, listing.start), (DEFAULT_PAGE, None));
        let id = Uuid::new_v4().to_string();
        let paged =
            Listing::parse(None, Some("7"), Some("2026-01-02T03:04:05Z"), Some(&id)).unwrap();
        assert_eq!(paged.limit, 7);
        let start = paged.start.unwrap();
        assert_eq!(start.id.map(|id| id.to_string()), Some(id));
        assert_eq!(start.updated_at.to_rfc3339(), "2026-01-02T03:04:05+00:00");
        for (limit, before, before_id) in [
            (Some("0"), None, None),
            (Some("201"), None, None),
            (Some("x"), None, None),
            (None, Some("yesterday"), None),
            (None, None, Some("a")),
            (None, Some("2026-01-02T03:04:05Z"), Some("not-a-uuid")),
        ] {
            assert!(
                Listing::parse(None, limit, before, before_id).is_err(),
                "{limit:?} {before:?} {before_id:?}"
            );
        }
    }

    #[test]
    fn a_list_filter_is_parsed_from_archived_and_pinned() {
        assert_eq!(list_filter(None, None), Ok(ListFilter::default()));
        assert_eq!(
            list_filter(Some("true"), Some("false")),
            Ok(ListFilter {
                archived: true,
                pinned: Some(false)
            })
        );
        assert_eq!(
            list_filter(Some("false"), Some(" true ")).map(|filter| filter.pinned),
            Ok(Some(true))
        );
        for (archived, pinned) in [(Some("yes"), None), (None, Some("1")), (Some(""), None)] {
            assert!(
                list_filter(archived, pinned).is_err(),
                "{archived:?} {pinned:?}"
            );
        }
    }

    #[test]
    fn rows_start_or_continue_their_conversations_once_each() {
        let at = |seconds: i64| DateTime::from_timestamp(1_700_000_000 + seconds, 0).unwrap();
        let conversation = Uuid::new_v4();
        let entry = |question: &str, seconds: i64, conversation_id| NewQueryLogEntry {
            created_at: at(seconds),
            question: question.to_owned(),
            answer: format!("answer to {question}"),
            conversation_id,
            ..crate::testing::query_log_entry()
        };
        let touched = touched_by(&[
            entry("second", 20, Some(conversation)),
            entry("alone", 5, None),
            entry("first   question", 10, Some(conversation)),
        ]);
        assert_eq!(touched.len(), 1);
        let one = &touched[0];
        assert_eq!(one.id, conversation);
        assert_eq!(one.title, "first question", "the earliest row's question");
        assert_eq!((one.created_at, one.updated_at), (at(10), at(20)));
        assert!(one.text.contains("answer to second") && one.text.contains("first"));
    }
}
