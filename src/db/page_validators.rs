//! `page_validators`: the `ETag` and `Last-Modified` a web server sent with the version
//! of a page stored as a document (the document's source is the page's URL).

use diesel::prelude::*;
use diesel_async::{AsyncPgConnection, RunQueryDsl};

use super::DbError;
use super::schema::{documents, page_validators};

/// What identifies a stored version of a page to its server.
#[derive(Debug, Clone, Default, PartialEq, Eq, Queryable)]
pub struct PageValidators {
    pub etag: Option<String>,
    pub last_modified: Option<String>,
}

impl PageValidators {
    pub fn is_empty(&self) -> bool {
        self.etag.is_none() && self.last_modified.is_none()
    }
}

/// The validators stored with the document whose source is `url`.
pub async fn validators_of(
    conn: &mut AsyncPgConnection,
    url: &str,
) -> Result<Option<PageValidators>, DbError> {
    Ok(page_validators::table
        .inner_join(documents::table)
        .filter(documents::source.eq(url))
        .select((page_validators::etag, page_validators::last_modified))
        .order(documents::id.desc())
        .first(conn)
        .await
        .optional()?)
}

/// Stores (or replaces) the validators of the document `document_id`.
pub async fn set_validators(
    conn: &mut AsyncPgConnection,
    document_id: i64,
    validators: &PageValidators,
) -> Result<(), DbError> {
    diesel::insert_into(page_validators::table)
        .values((
            page_validators::document_id.eq(document_id),
            page_validators::etag.eq(&validators.etag),
            page_validators::last_modified.eq(&validators.last_modified),
        ))
        .on_conflict(page_validators::document_id)
        .do_update()
        .set((
            page_validators::etag.eq(&validators.etag),
            page_validators::last_modified.eq(&validators.last_modified),
        ))
        .execute(conn)
        .await?;
    Ok(())
}
