//! The admin page's document list: every document, newest first, searched by title or
//! source, filtered by collection, kind, who added it and when, a page at a time.

use std::collections::{HashMap, HashSet};

use chrono::{DateTime, Utc};
use diesel::dsl::count_star;
use diesel::pg::Pg;
use diesel::prelude::*;
use diesel_async::{AsyncPgConnection, RunQueryDsl};
use uuid::Uuid;

use super::DbError;
use super::documents::Adder;
use super::schema::{chunks, collections, documents, users, watched_files};

/// Who added the documents wanted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AddedBy {
    /// The person with this id (by upload, URL import or the API).
    Person(Uuid),
    /// No one signed in: folder sync, `bor import` or the service token.
    NoOne,
}

/// Which documents, and which page of them.
#[derive(Debug, Clone, Default)]
pub struct DocumentFilter {
    /// Words found in the title or the source (case does not matter).
    pub text: Option<String>,
    /// Only these collections' documents.
    pub collection_id: Option<i64>,
    /// Only this kind (a media type such as `application/pdf`).
    pub content_type: Option<String>,
    pub added_by: Option<AddedBy>,
    /// Added at or after.
    pub since: Option<DateTime<Utc>>,
    /// Added before.
    pub until: Option<DateTime<Utc>>,
    /// Documents with a smaller id only (the previous page's last).
    pub before: Option<i64>,
}

/// One document of the list.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ListedDocument {
    pub id: i64,
    pub title: String,
    pub source: Option<String>,
    pub content_type: String,
    pub created_at: DateTime<Utc>,
    pub collection: String,
    pub chunks: i64,
    /// The person who added it, when one did and is still there:
    /// `(id, username, display name)`.
    pub added_by: Option<(Uuid, String, String)>,
    /// Added by a person who has been deleted since.
    pub added_by_deleted: bool,
    /// Its source is a file the folder watcher keeps in step.
    pub synced: bool,
    /// Who or what added it, as recorded.
    pub adder: Adder,
}

/// A document's row, as the query reads it: id, title, source, content type, added at,
/// collection id, added by, added through.
type Row = (
    i64,
    String,
    Option<String>,
    String,
    DateTime<Utc>,
    i64,
    Option<Uuid>,
    String,
);

/// A page of the list and how many documents match in all.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DocumentPage {
    pub documents: Vec<ListedDocument>,
    pub total: i64,
    /// Older documents match beyond this page.
    pub more: bool,
}

/// `text` as an `ILIKE` pattern that matches it anywhere, its `%`, `_` and `\` taken
/// literally.
fn contains_pattern(text: &str) -> String {
    let mut pattern = String::with_capacity(text.len() + 2);
    pattern.push('%');
    for character in text.chars() {
        if matches!(character, '%' | '_' | '\\') {
            pattern.push('\\');
        }
        pattern.push(character);
    }
    pattern.push('%');
    pattern
}

/// The documents `filter` lets through (every filter but the page's start).
fn matching(filter: &DocumentFilter) -> documents::BoxedQuery<'static, Pg> {
    let mut query = documents::table.into_boxed();
    // Each word of the text, in any order, in the title or the source.
    for word in filter
        .text
        .as_deref()
        .unwrap_or_default()
        .split_whitespace()
    {
        let pattern = contains_pattern(word);
        query = query.filter(
            documents::title
                .ilike(pattern.clone())
                .or(documents::source.ilike(pattern).assume_not_null()),
        );
    }
    if let Some(collection_id) = filter.collection_id {
        query = query.filter(documents::collection_id.eq(collection_id));
    }
    if let Some(content_type) = &filter.content_type {
        query = query.filter(documents::content_type.eq(content_type.clone()));
    }
    match filter.added_by {
        Some(AddedBy::Person(user)) => query = query.filter(documents::added_by.eq(user)),
        Some(AddedBy::NoOne) => query = query.filter(documents::added_by.is_null()),
        None => {}
    }
    if let Some(since) = filter.since {
        query = query.filter(documents::created_at.ge(since));
    }
    if let Some(until) = filter.until {
        query = query.filter(documents::created_at.lt(until));
    }
    query
}

/// Up to `limit` documents that `filter` lets through, newest first, and how many
/// match in all.
pub async fn page(
    conn: &mut AsyncPgConnection,
    filter: &DocumentFilter,
    limit: i64,
) -> Result<DocumentPage, DbError> {
    let total: i64 = matching(filter).count().get_result(conn).await?;
    let mut rows = matching(filter);
    if let Some(before) = filter.before {
        rows = rows.filter(documents::id.lt(before));
    }
    let mut rows: Vec<Row> = rows
        .select((
            documents::id,
            documents::title,
            documents::source,
            documents::content_type,
            documents::created_at,
            documents::collection_id,
            documents::added_by,
            documents::added_through,
        ))
        .order(documents::id.desc())
        .limit(limit.saturating_add(1))
        .load(conn)
        .await?;
    let more = rows.len() as i64 > limit;
    rows.truncate(usize::try_from(limit).unwrap_or(usize::MAX));
    let ids: Vec<i64> = rows.iter().map(|row| row.0).collect();
    let chunk_counts: HashMap<i64, i64> = chunks::table
        .filter(chunks::document_id.eq_any(&ids))
        .group_by(chunks::document_id)
        .select((chunks::document_id, count_star()))
        .load(conn)
        .await?
        .into_iter()
        .collect();
    let collection_ids: Vec<i64> = rows.iter().map(|row| row.5).collect();
    let collection_names: HashMap<i64, String> = collections::table
        .filter(collections::id.eq_any(&collection_ids))
        .select((collections::id, collections::name))
        .load(conn)
        .await?
        .into_iter()
        .collect();
    let person_ids: Vec<Uuid> = rows.iter().filter_map(|row| row.6).collect();
    let people: HashMap<Uuid, (String, String)> = users::table
        .filter(users::id.eq_any(&person_ids))
        .select((users::id, users::username, users::display_name))
        .load::<(Uuid, String, String)>(conn)
        .await?
        .into_iter()
        .map(|(id, username, display_name)| (id, (username, display_name)))
        .collect();
    let sources: Vec<&str> = rows.iter().filter_map(|row| row.2.as_deref()).collect();
    let synced: HashSet<String> = watched_files::table
        .filter(watched_files::path.eq_any(&sources))
        .select(watched_files::path)
        .load(conn)
        .await?
        .into_iter()
        .collect();
    let documents = rows
        .into_iter()
        .map(
            |(
                id,
                title,
                source,
                content_type,
                created_at,
                collection_id,
                added_by,
                added_through,
            )| {
                let person = added_by.and_then(|user| {
                    people.get(&user).map(|(username, display_name)| {
                        (user, username.clone(), display_name.clone())
                    })
                });
                ListedDocument {
                    id,
                    synced: source
                        .as_ref()
                        .is_some_and(|source| synced.contains(source)),
                    title,
                    source,
                    content_type,
                    created_at,
                    collection: collection_names
                        .get(&collection_id)
                        .cloned()
                        .unwrap_or_default(),
                    chunks: chunk_counts.get(&id).copied().unwrap_or(0),
                    added_by_deleted: added_by.is_some() && person.is_none(),
                    added_by: person,
                    adder: Adder::of_row(added_by, &added_through),
                }
            },
        )
        .collect();
    Ok(DocumentPage {
        documents,
        total,
        more,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_searched_text_matches_itself_only() {
        assert_eq!(contains_pattern("kettle"), "%kettle%");
        assert_eq!(contains_pattern("100%_a\\b"), "%100\\%\\_a\\\\b%");
    }
}
