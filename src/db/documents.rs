//! `documents`: the texts of the knowledge base, each stored once (by SHA-256).

use chrono::{DateTime, Utc};
use diesel::prelude::*;
use diesel_async::{AsyncPgConnection, RunQueryDsl};
use serde::Serialize;
use sha2::{Digest, Sha256};

use super::DbError;
use super::schema::{chunks, collections, documents};
use bor_formats::PageSource;

#[derive(Debug, Clone, PartialEq, Eq, Queryable, Selectable)]
#[diesel(table_name = documents, check_for_backend(diesel::pg::Pg))]
pub struct Document {
    pub id: i64,
    pub title: String,
    /// Where it came from (a file path or URL); `None` when posted directly.
    pub source: Option<String>,
    pub content: String,
    /// SHA-256 of `content`, lowercase hex.
    pub content_sha256: String,
    pub created_at: DateTime<Utc>,
    /// The kind, as a media type (`text/markdown`, `application/pdf`, …).
    pub content_type: String,
    pub summary: Option<String>,
    /// For a PDF, the byte offset in `content` where each page begins.
    pub page_starts: Vec<i32>,
    pub collection_id: i64,
    /// Where the text of each page came from ([`page_sources_json`]); `[]` for kinds
    /// without pages.
    pub page_sources: serde_json::Value,
    /// The person who added it; `None` when no one signed in did.
    pub added_by: Option<uuid::Uuid>,
    /// How it came in ([`Adder::through`]).
    pub added_through: String,
}

impl Document {
    /// Who or what added it.
    pub fn adder(&self) -> Adder {
        Adder::of_row(self.added_by, &self.added_through)
    }
}

/// Who or what added a document: `documents.added_by` and `documents.added_through`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Adder {
    /// A person signed in: an upload, a URL import, a post through the API.
    Person(uuid::Uuid),
    /// The service token (`BOR_ADMIN_TOKEN`), through the admin API.
    ServiceToken,
    /// A command: `bor import`, `bor eval`.
    #[default]
    CommandLine,
    /// The folder watcher (`bor watch`, `BOR_WATCH`).
    FolderSync,
    /// Not recorded: stored before bor recorded how documents came in.
    Unknown,
}

impl Adder {
    /// The person, when one added it.
    pub fn person(self) -> Option<uuid::Uuid> {
        match self {
            Adder::Person(user) => Some(user),
            _ => None,
        }
    }

    /// How it came in, as `documents.added_through` holds it.
    pub fn through(self) -> &'static str {
        match self {
            Adder::Person(_) => "person",
            Adder::ServiceToken => "service_token",
            Adder::CommandLine => "command_line",
            Adder::FolderSync => "folder_sync",
            Adder::Unknown => "unknown",
        }
    }

    /// From a row's `added_by` and `added_through` (a value not known: `Unknown`).
    pub fn of_row(added_by: Option<uuid::Uuid>, added_through: &str) -> Adder {
        if let Some(user) = added_by {
            return Adder::Person(user);
        }
        match added_through {
            "service_token" => Adder::ServiceToken,
            "command_line" => Adder::CommandLine,
            "folder_sync" => Adder::FolderSync,
            _ => Adder::Unknown,
        }
    }
}

/// A document to insert; its digest is computed from the content.
#[derive(Debug, Clone, PartialEq, Eq, Insertable)]
#[diesel(table_name = documents, check_for_backend(diesel::pg::Pg))]
pub struct NewDocument<'a> {
    title: &'a str,
    source: Option<&'a str>,
    content: &'a str,
    content_sha256: String,
    content_type: &'a str,
    page_starts: Vec<i32>,
    page_sources: serde_json::Value,
    /// `None`: the `default` collection (the column's default).
    collection_id: Option<i64>,
    /// The person who added it; `None` when no one signed in did.
    added_by: Option<uuid::Uuid>,
    /// How it came in ([`Adder::through`]).
    added_through: &'static str,
}

impl<'a> NewDocument<'a> {
    /// A Markdown document.
    pub fn new(title: &'a str, source: Option<&'a str>, content: &'a str) -> NewDocument<'a> {
        Self::of_kind(title, source, content, "text/markdown")
    }

    /// A document of the kind `content_type` (a media type).
    pub fn of_kind(
        title: &'a str,
        source: Option<&'a str>,
        content: &'a str,
        content_type: &'a str,
    ) -> NewDocument<'a> {
        NewDocument {
            title,
            source,
            content,
            content_sha256: content_sha256(content),
            content_type,
            page_starts: Vec::new(),
            page_sources: serde_json::Value::Array(Vec::new()),
            collection_id: None,
            added_by: None,
            added_through: Adder::default().through(),
        }
    }

    /// In the collection `collection_id` (else in `default`).
    pub fn in_collection(mut self, collection_id: i64) -> NewDocument<'a> {
        self.collection_id = Some(collection_id);
        self
    }

    /// Added by `adder` (else by a command).
    pub fn added_by(mut self, adder: Adder) -> NewDocument<'a> {
        self.added_by = adder.person();
        self.added_through = adder.through();
        self
    }

    /// With the byte offsets where the pages of `content` begin.
    pub fn with_pages(mut self, page_starts: &[usize]) -> NewDocument<'a> {
        self.page_starts = page_starts
            .iter()
            .map(|&start| i32::try_from(start).unwrap_or(i32::MAX))
            .collect();
        self
    }

    /// With where the text of each page came from.
    pub fn with_page_sources(mut self, pages: &[PageSource]) -> NewDocument<'a> {
        self.page_sources = page_sources_json(pages);
        self
    }

    /// The digest that identifies this content (lowercase hex).
    pub fn content_sha256(&self) -> &str {
        &self.content_sha256
    }
}

/// `documents.page_sources`: one object per page, `{"page","source":"text"}`,
/// `{"page","source":"ocr","confidence"}` (0 to 100) or
/// `{"page","source":"skipped","reason"}`.
pub fn page_sources_json(pages: &[PageSource]) -> serde_json::Value {
    pages
        .iter()
        .zip(1..)
        .map(|(source, page): (&PageSource, u32)| match source {
            PageSource::Text => serde_json::json!({"page": page, "source": "text"}),
            PageSource::Ocr { confidence } => {
                serde_json::json!({"page": page, "source": "ocr", "confidence": confidence})
            }
            PageSource::Skipped { reason } => {
                serde_json::json!({"page": page, "source": "skipped", "reason": reason})
            }
        })
        .collect()
}

/// The pages of a document that OCR read, from its `page_sources`.
pub fn ocr_pages(page_sources: &serde_json::Value) -> std::collections::HashSet<i32> {
    page_sources
        .as_array()
        .into_iter()
        .flatten()
        .filter(|page| page["source"] == "ocr")
        .filter_map(|page| page["page"].as_i64())
        .filter_map(|page| i32::try_from(page).ok())
        .collect()
}

/// SHA-256 of `content` as lowercase hex, the form `documents.content_sha256` holds.
pub fn content_sha256(content: &str) -> String {
    Sha256::digest(content.as_bytes())
        .iter()
        .map(|byte| format!("{byte:02x}"))
        .collect()
}

/// A document as `GET /api/documents` lists it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, utoipa::ToSchema)]
pub struct DocumentSummary {
    pub id: i64,
    pub title: String,
    pub chunks: i64,
    pub created_at: DateTime<Utc>,
    /// `null` until a summary is written.
    pub summary: Option<String>,
    /// The name of its collection.
    pub collection: String,
}

pub async fn count_documents(conn: &mut AsyncPgConnection) -> Result<i64, DbError> {
    Ok(documents::table.count().get_result(conn).await?)
}

/// Every document of the collections `collection_ids` (`None`: of all) with its number
/// of chunks, oldest first.
pub async fn list_documents(
    conn: &mut AsyncPgConnection,
    collection_ids: Option<&[i64]>,
) -> Result<Vec<DocumentSummary>, DbError> {
    use diesel::dsl::count;
    use diesel::expression::IntoSql;
    use diesel::sql_types::Bool;

    let every = collection_ids.is_none();
    let ids = collection_ids.unwrap_or_default();
    /// A listed document with its collection's id (in the order of the query).
    #[derive(Queryable)]
    struct Listed {
        id: i64,
        title: String,
        chunks: i64,
        created_at: DateTime<Utc>,
        summary: Option<String>,
        collection_id: i64,
    }

    let rows: Vec<Listed> = documents::table
        .left_join(chunks::table)
        .filter(
            every
                .into_sql::<Bool>()
                .or(documents::collection_id.eq_any(ids)),
        )
        .group_by(documents::id)
        .select((
            documents::id,
            documents::title,
            count(chunks::id.nullable()),
            documents::created_at,
            documents::summary,
            documents::collection_id,
        ))
        .order(documents::id)
        .load(conn)
        .await?;
    let names: std::collections::HashMap<i64, String> = collections::table
        .select((collections::id, collections::name))
        .load(conn)
        .await?
        .into_iter()
        .collect();
    Ok(rows
        .into_iter()
        .map(|row| DocumentSummary {
            collection: names.get(&row.collection_id).cloned().unwrap_or_default(),
            id: row.id,
            title: row.title,
            chunks: row.chunks,
            created_at: row.created_at,
            summary: row.summary,
        })
        .collect())
}

/// The name of the collection of each of the documents `ids` that is stored.
pub async fn collection_names(
    conn: &mut AsyncPgConnection,
    ids: &[i64],
) -> Result<std::collections::HashMap<i64, String>, DbError> {
    let found: Vec<(i64, String)> = documents::table
        .inner_join(collections::table)
        .filter(documents::id.eq_any(ids))
        .select((documents::id, collections::name))
        .load(conn)
        .await?;
    Ok(found.into_iter().collect())
}

/// Every document's id, title and text, by id; only those of `collections` when given.
pub async fn export_texts(
    conn: &mut AsyncPgConnection,
    collections: Option<&[i64]>,
) -> Result<Vec<(i64, String, String)>, DbError> {
    let mut query = documents::table
        .select((documents::id, documents::title, documents::content))
        .order(documents::id)
        .into_boxed();
    if let Some(collections) = collections {
        query = query.filter(documents::collection_id.eq_any(collections));
    }
    Ok(query.load(conn).await?)
}

/// The document `id`, when it is stored.
pub async fn find_document(
    conn: &mut AsyncPgConnection,
    id: i64,
) -> Result<Option<Document>, DbError> {
    Ok(documents::table
        .find(id)
        .select(Document::as_select())
        .first(conn)
        .await
        .optional()?)
}

/// The oldest document without a summary, `skip` left out.
pub async fn next_without_summary(
    conn: &mut AsyncPgConnection,
    skip: &[i64],
) -> Result<Option<Document>, DbError> {
    Ok(documents::table
        .filter(documents::summary.is_null())
        .filter(documents::id.ne_all(skip))
        .select(Document::as_select())
        .order(documents::id)
        .first(conn)
        .await
        .optional()?)
}

/// Writes a document's summary (nothing when the document is gone meanwhile).
pub async fn set_summary(
    conn: &mut AsyncPgConnection,
    id: i64,
    summary: &str,
) -> Result<(), DbError> {
    diesel::update(documents::table.find(id))
        .set(documents::summary.eq(summary))
        .execute(conn)
        .await?;
    Ok(())
}

/// The documents `ids` (those still stored), by id.
pub async fn documents_by_ids(
    conn: &mut AsyncPgConnection,
    ids: &[i64],
) -> Result<Vec<Document>, DbError> {
    Ok(documents::table
        .filter(documents::id.eq_any(ids))
        .select(Document::as_select())
        .order(documents::id)
        .load(conn)
        .await?)
}

/// The id of the document of the collection holding exactly this content (by its
/// SHA-256).
pub async fn find_by_sha256(
    conn: &mut AsyncPgConnection,
    content_sha256: &str,
    collection_id: i64,
) -> Result<Option<i64>, DbError> {
    Ok(documents::table
        .filter(documents::content_sha256.eq(content_sha256))
        .filter(documents::collection_id.eq(collection_id))
        .select(documents::id)
        .first(conn)
        .await
        .optional()?)
}

/// Ids of the documents of the collection imported from `source`.
pub async fn ids_from_source(
    conn: &mut AsyncPgConnection,
    source: &str,
    collection_id: i64,
) -> Result<Vec<i64>, DbError> {
    Ok(documents::table
        .filter(documents::source.eq(source))
        .filter(documents::collection_id.eq(collection_id))
        .select(documents::id)
        .order(documents::id)
        .load(conn)
        .await?)
}

/// The documents of the collection whose source lies inside `folder` (an absolute path
/// without a trailing separator): `(id, source)`, by id. Matched by the prefix `folder/`, so a sibling
/// folder whose name starts the same (`notes-old` beside `notes`) is never included.
pub async fn sources_inside(
    conn: &mut AsyncPgConnection,
    folder: &str,
    collection_id: i64,
) -> Result<Vec<(i64, String)>, DbError> {
    let prefix = format!("{folder}/");
    let pattern = format!("{}%", escape_like(&prefix));
    let found: Vec<(i64, Option<String>)> = documents::table
        .filter(documents::source.like(pattern).escape('\\'))
        .filter(documents::collection_id.eq(collection_id))
        .select((documents::id, documents::source))
        .order(documents::id)
        .load(conn)
        .await?;
    Ok(found
        .into_iter()
        .filter_map(|(id, source)| Some((id, source?)))
        .filter(|(_, source)| source.starts_with(&prefix))
        .collect())
}

/// `text` with the characters `LIKE` reads as wildcards (and the escape) escaped by `\`.
pub(super) fn escape_like(text: &str) -> String {
    let mut escaped = String::with_capacity(text.len());
    for character in text.chars() {
        if matches!(character, '%' | '_' | '\\') {
            escaped.push('\\');
        }
        escaped.push(character);
    }
    escaped
}

/// Records that the document `id` now comes from `source` (its file was moved).
pub async fn set_source(
    conn: &mut AsyncPgConnection,
    id: i64,
    source: &str,
) -> Result<(), DbError> {
    diesel::update(documents::table.find(id))
        .set(documents::source.eq(source))
        .execute(conn)
        .await?;
    Ok(())
}

pub async fn insert_document(
    conn: &mut AsyncPgConnection,
    document: &NewDocument<'_>,
) -> Result<i64, DbError> {
    Ok(diesel::insert_into(documents::table)
        .values(document)
        .returning(documents::id)
        .get_result(conn)
        .await?)
}

/// Deletes a document and (by cascade) its chunks; false when there was none.
pub async fn delete_document(conn: &mut AsyncPgConnection, id: i64) -> Result<bool, DbError> {
    let deleted = diesel::delete(documents::table.find(id))
        .execute(conn)
        .await?;
    Ok(deleted > 0)
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;
    use crate::db::chunks::{Chunk, NewChunk, count_chunks};
    use crate::db::schema::chunks;
    use crate::testing::TestDatabase;

    #[test]
    fn digest_is_lowercase_hex_sha256() {
        assert_eq!(
            content_sha256("abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
        let document = NewDocument::new("Title", None, "abc");
        assert_eq!(document.content_sha256(), content_sha256("abc"));
    }

    pub(in crate::db) async fn insert_document(
        conn: &mut AsyncPgConnection,
        new: &NewDocument<'_>,
    ) -> Document {
        diesel::insert_into(documents::table)
            .values(new)
            .returning(Document::as_returning())
            .get_result(conn)
            .await
            .unwrap()
    }

    pub(in crate::db) async fn insert_chunks(
        conn: &mut AsyncPgConnection,
        document_id: i64,
        texts: &[&str],
    ) {
        let embedding = [0.25_f32, -0.5, 1.0];
        let rows: Vec<NewChunk<'_>> = texts
            .iter()
            .zip(0..)
            .map(|(text, ord)| NewChunk {
                document_id,
                ord,
                text,
                heading: "",
                page: None,
                embedding: &embedding,
                embedder: None,
            })
            .collect();
        diesel::insert_into(chunks::table)
            .values(&rows)
            .execute(conn)
            .await
            .unwrap();
    }

    #[tokio::test]
    async fn documents_and_chunks_round_trip_and_are_counted() {
        let db = TestDatabase::migrated().await;
        let mut conn = db.pool().get().await.unwrap();
        assert_eq!(count_documents(&mut conn).await.unwrap(), 0);
        assert_eq!(count_chunks(&mut conn).await.unwrap(), 0);

        let content = "Cats sleep most of the day.\n\nDogs prefer walks.";
        let stored = insert_document(
            &mut conn,
            &NewDocument::new("Pets", Some("notes/pets.md"), content),
        )
        .await;
        assert_eq!(stored.title, "Pets");
        assert_eq!(stored.source.as_deref(), Some("notes/pets.md"));
        assert_eq!(stored.content, content);
        assert_eq!(stored.content_sha256, content_sha256(content));
        insert_chunks(
            &mut conn,
            stored.id,
            &["Cats sleep most of the day.", "Dogs prefer walks."],
        )
        .await;
        insert_document(&mut conn, &NewDocument::new("Empty", None, "x")).await;

        assert_eq!(count_documents(&mut conn).await.unwrap(), 2);
        assert_eq!(count_chunks(&mut conn).await.unwrap(), 2);
        let chunks: Vec<Chunk> = chunks::table
            .select(Chunk::as_select())
            .order(chunks::ord)
            .load(&mut conn)
            .await
            .unwrap();
        assert_eq!(chunks.len(), 2);
        assert_eq!((chunks[0].document_id, chunks[0].ord), (stored.id, 0));
        assert_eq!(chunks[1].text, "Dogs prefer walks.");
        assert_eq!(chunks[1].embedding, [0.25, -0.5, 1.0]);
    }

    #[tokio::test]
    async fn the_same_content_cannot_be_stored_twice_in_a_collection() {
        let db = TestDatabase::migrated().await;
        let mut conn = db.pool().get().await.unwrap();
        let first = insert_document(&mut conn, &NewDocument::new("First", None, "same text")).await;
        let other = crate::db::collections::create(&mut conn, "other", "")
            .await
            .unwrap()
            .unwrap();
        let copy = NewDocument::new("Copy", None, "same text").in_collection(other.id);
        let copy = insert_document(&mut conn, &copy).await;
        assert_ne!(
            first.collection_id, copy.collection_id,
            "another collection may hold it"
        );
        let error = diesel::insert_into(documents::table)
            .values(&NewDocument::new("Second", None, "same text"))
            .execute(&mut conn)
            .await
            .unwrap_err();
        assert!(
            matches!(
                error,
                diesel::result::Error::DatabaseError(
                    diesel::result::DatabaseErrorKind::UniqueViolation,
                    _
                )
            ),
            "{error:?}"
        );
    }

    async fn ids_collection(conn: &mut AsyncPgConnection, id: i64) -> i64 {
        find_document(conn, id)
            .await
            .unwrap()
            .unwrap()
            .collection_id
    }

    #[tokio::test]
    async fn sources_inside_a_folder_are_matched_exactly() {
        let db = TestDatabase::migrated().await;
        let mut conn = db.pool().get().await.unwrap();
        let mut ids = Vec::new();
        for (content, source) in [
            ("a", Some("/data/notes/a.md")),
            ("b", Some("/data/notes/sub/b.md")),
            ("c", Some("/data/notes-old/c.md")),
            ("d", Some("/data/notes")),
            ("e", Some("/data/n%tes/e.md")),
            ("f", Some("/data/n_tes/f.md")),
            ("g", None),
        ] {
            ids.push(
                insert_document(&mut conn, &NewDocument::new(content, source, content))
                    .await
                    .id,
            );
        }
        let default = ids_collection(&mut conn, ids[0]).await;
        let inside = sources_inside(&mut conn, "/data/notes", default)
            .await
            .unwrap();
        assert_eq!(
            inside,
            [
                (ids[0], "/data/notes/a.md".to_owned()),
                (ids[1], "/data/notes/sub/b.md".to_owned())
            ]
        );
        let wildcard = sources_inside(&mut conn, "/data/n%tes", default)
            .await
            .unwrap();
        assert_eq!(wildcard, [(ids[4], "/data/n%tes/e.md".to_owned())]);
        let underscore = sources_inside(&mut conn, "/data/n_tes", default)
            .await
            .unwrap();
        assert_eq!(underscore, [(ids[5], "/data/n_tes/f.md".to_owned())]);
        let elsewhere = crate::db::collections::create(&mut conn, "elsewhere", "")
            .await
            .unwrap()
            .unwrap();
        assert_eq!(
            sources_inside(&mut conn, "/data/notes", elsewhere.id)
                .await
                .unwrap(),
            [],
            "another collection's files are not these"
        );
    }

    #[tokio::test]
    async fn deleting_a_document_deletes_its_chunks() {
        let db = TestDatabase::migrated().await;
        let mut conn = db.pool().get().await.unwrap();
        let kept = insert_document(&mut conn, &NewDocument::new("Kept", None, "kept")).await;
        let gone = insert_document(&mut conn, &NewDocument::new("Gone", None, "gone")).await;
        insert_chunks(&mut conn, kept.id, &["kept"]).await;
        insert_chunks(&mut conn, gone.id, &["gone one", "gone two"]).await;
        diesel::delete(documents::table.find(gone.id))
            .execute(&mut conn)
            .await
            .unwrap();
        assert_eq!(count_chunks(&mut conn).await.unwrap(), 1);
        assert_eq!(count_documents(&mut conn).await.unwrap(), 1);
    }
}
