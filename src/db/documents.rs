//! `documents`: the texts of the knowledge base, each stored once (by SHA-256).

use chrono::{DateTime, Utc};
use diesel::prelude::*;
use diesel_async::{AsyncPgConnection, RunQueryDsl};
use sha2::{Digest, Sha256};

use super::DbError;
use super::schema::documents;

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
}

/// A document to insert; its digest is computed from the content.
#[derive(Debug, Clone, PartialEq, Eq, Insertable)]
#[diesel(table_name = documents, check_for_backend(diesel::pg::Pg))]
pub struct NewDocument<'a> {
    title: &'a str,
    source: Option<&'a str>,
    content: &'a str,
    content_sha256: String,
}

impl<'a> NewDocument<'a> {
    pub fn new(title: &'a str, source: Option<&'a str>, content: &'a str) -> NewDocument<'a> {
        NewDocument {
            title,
            source,
            content,
            content_sha256: content_sha256(content),
        }
    }

    /// The digest that identifies this content (lowercase hex).
    pub fn content_sha256(&self) -> &str {
        &self.content_sha256
    }
}

/// SHA-256 of `content` as lowercase hex, the form `documents.content_sha256` holds.
pub fn content_sha256(content: &str) -> String {
    Sha256::digest(content.as_bytes())
        .iter()
        .map(|byte| format!("{byte:02x}"))
        .collect()
}

pub async fn count_documents(conn: &mut AsyncPgConnection) -> Result<i64, DbError> {
    Ok(documents::table.count().get_result(conn).await?)
}
