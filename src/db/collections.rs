//! `collections`: every document belongs to exactly one; a search may be limited to
//! some of them. `default` is made by the migration and holds the documents imported
//! without a collection.

use chrono::{DateTime, Utc};
use diesel::prelude::*;
use diesel_async::{AsyncPgConnection, RunQueryDsl};

use super::DbError;
use super::schema::{chunks, collections, documents};

/// The collection of documents imported without one.
pub const DEFAULT_COLLECTION: &str = "default";
/// The longest collection name, in characters.
pub const NAME_MAX_CHARS: usize = 64;
/// What a collection name may be, as the refusal of another says it.
pub const NAME_RULE: &str =
    "a collection name is 1 to 64 characters, each a lowercase letter a-z, a digit, '_' or '-'";

#[derive(Debug, Clone, PartialEq, Eq, Queryable, Selectable)]
#[diesel(table_name = collections, check_for_backend(diesel::pg::Pg))]
pub struct Collection {
    pub id: i64,
    pub name: String,
    pub description: String,
    pub created_at: DateTime<Utc>,
}

/// A collection with the counts of what it holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CollectionSummary {
    pub collection: Collection,
    pub documents: i64,
    pub chunks: i64,
}

/// True when `name` follows [`NAME_RULE`] (the table's check says the same).
pub fn is_valid_name(name: &str) -> bool {
    (1..=NAME_MAX_CHARS).contains(&name.len())
        && name
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_' || b == b'-')
}

/// Every collection, by name.
pub async fn all(conn: &mut AsyncPgConnection) -> Result<Vec<Collection>, DbError> {
    Ok(collections::table
        .select(Collection::as_select())
        .order(collections::name)
        .load(conn)
        .await?)
}

/// Every collection with its counts of documents and chunks, by name.
pub async fn summaries(conn: &mut AsyncPgConnection) -> Result<Vec<CollectionSummary>, DbError> {
    let collections = all(conn).await?;
    let documents: Vec<(i64, i64)> = documents::table
        .group_by(documents::collection_id)
        .select((documents::collection_id, diesel::dsl::count_star()))
        .load(conn)
        .await?;
    let chunks: Vec<(i64, i64)> = chunks::table
        .inner_join(documents::table)
        .group_by(documents::collection_id)
        .select((documents::collection_id, diesel::dsl::count_star()))
        .load(conn)
        .await?;
    let count_of = |counts: &[(i64, i64)], id: i64| {
        counts
            .iter()
            .find(|(collection, _)| *collection == id)
            .map_or(0, |(_, count)| *count)
    };
    Ok(collections
        .into_iter()
        .map(|collection| CollectionSummary {
            documents: count_of(&documents, collection.id),
            chunks: count_of(&chunks, collection.id),
            collection,
        })
        .collect())
}

pub async fn by_name(
    conn: &mut AsyncPgConnection,
    name: &str,
) -> Result<Option<Collection>, DbError> {
    Ok(collections::table
        .filter(collections::name.eq(name))
        .select(Collection::as_select())
        .first(conn)
        .await
        .optional()?)
}

/// The collections named `names` that exist.
pub async fn by_names(
    conn: &mut AsyncPgConnection,
    names: &[String],
) -> Result<Vec<Collection>, DbError> {
    Ok(collections::table
        .filter(collections::name.eq_any(names))
        .select(Collection::as_select())
        .order(collections::name)
        .load(conn)
        .await?)
}

/// Makes a collection; `None` when one of that name exists.
pub async fn create(
    conn: &mut AsyncPgConnection,
    name: &str,
    description: &str,
) -> Result<Option<Collection>, DbError> {
    Ok(diesel::insert_into(collections::table)
        .values((
            collections::name.eq(name),
            collections::description.eq(description),
        ))
        .on_conflict(collections::name)
        .do_nothing()
        .returning(Collection::as_returning())
        .get_result(conn)
        .await
        .optional()?)
}

/// The collection `name`, made (without a description) when absent.
pub async fn get_or_create(
    conn: &mut AsyncPgConnection,
    name: &str,
) -> Result<Collection, DbError> {
    // Looked up first: an insert that finds the row would still fire the access
    // triggers, and every instance would read the grants again.
    if let Some(found) = by_name(conn, name).await? {
        return Ok(found);
    }
    if let Some(made) = create(conn, name, "").await? {
        return Ok(made);
    }
    // Made by someone else between the two statements.
    by_name(conn, name)
        .await?
        .ok_or(DbError::Query(diesel::result::Error::NotFound))
}

/// The collection `collection_id`, or `None`: the id of `default`, made again when it
/// was deleted.
pub async fn resolve(
    conn: &mut AsyncPgConnection,
    collection_id: Option<i64>,
) -> Result<i64, DbError> {
    if let Some(id) = collection_id {
        return Ok(id);
    }
    Ok(get_or_create(conn, DEFAULT_COLLECTION).await?.id)
}

/// Sets the description of `name`; `None` when there is no such collection.
pub async fn set_description(
    conn: &mut AsyncPgConnection,
    name: &str,
    description: &str,
) -> Result<Option<Collection>, DbError> {
    Ok(
        diesel::update(collections::table.filter(collections::name.eq(name)))
            .set(collections::description.eq(description))
            .returning(Collection::as_returning())
            .get_result(conn)
            .await
            .optional()?,
    )
}

/// Deletes `name` with its documents and their chunks, in one statement (the foreign
/// keys cascade); the ids of the deleted documents, `None` when there is no such
/// collection.
pub async fn delete(conn: &mut AsyncPgConnection, name: &str) -> Result<Option<Vec<i64>>, DbError> {
    let Some(collection) = by_name(conn, name).await? else {
        return Ok(None);
    };
    let document_ids: Vec<i64> = documents::table
        .filter(documents::collection_id.eq(collection.id))
        .select(documents::id)
        .load(conn)
        .await?;
    let deleted = diesel::delete(collections::table.find(collection.id))
        .execute(conn)
        .await?;
    Ok((deleted > 0).then_some(document_ids))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::db::chunks::count_chunks;
    use crate::db::documents::{NewDocument, count_documents, insert_document, tests as docs};
    use crate::testing::TestDatabase;

    #[test]
    fn names_are_lowercase_letters_digits_underscores_and_dashes() {
        for good in ["default", "hr", "a", "team_2-docs", &"x".repeat(64)] {
            assert!(is_valid_name(good), "{good}");
        }
        for bad in [
            "",
            "HR",
            "with space",
            "é",
            "a/b",
            "dot.ted",
            &"x".repeat(65),
        ] {
            assert!(!is_valid_name(bad), "{bad}");
        }
    }

    #[tokio::test]
    async fn the_table_refuses_the_names_the_rule_refuses() {
        let db = TestDatabase::migrated().await;
        let mut conn = db.pool().get().await.unwrap();
        assert!(create(&mut conn, "Bad Name", "").await.is_err());
        assert!(create(&mut conn, &"x".repeat(65), "").await.is_err());
        assert!(
            create(&mut conn, &"x".repeat(64), "")
                .await
                .unwrap()
                .is_some()
        );
    }

    #[tokio::test]
    async fn documents_go_to_default_and_a_deleted_collection_takes_its_own() {
        let db = TestDatabase::migrated().await;
        let mut conn = db.pool().get().await.unwrap();
        let default = by_name(&mut conn, DEFAULT_COLLECTION)
            .await
            .unwrap()
            .unwrap();
        let kept = docs::insert_document(&mut conn, &NewDocument::new("Kept", None, "k")).await;
        assert_eq!(kept.collection_id, default.id);
        docs::insert_chunks(&mut conn, kept.id, &["kept"]).await;

        let hr = create(&mut conn, "hr", "People").await.unwrap().unwrap();
        assert!(create(&mut conn, "hr", "again").await.unwrap().is_none());
        assert_eq!(get_or_create(&mut conn, "hr").await.unwrap(), hr);
        let gone = NewDocument::new("Gone", None, "g").in_collection(hr.id);
        let gone = insert_document(&mut conn, &gone).await.unwrap();
        docs::insert_chunks(&mut conn, gone, &["gone one", "gone two"]).await;

        let listed = summaries(&mut conn).await.unwrap();
        let counts: Vec<(&str, i64, i64)> = listed
            .iter()
            .map(|s| (s.collection.name.as_str(), s.documents, s.chunks))
            .collect();
        assert_eq!(counts, [("default", 1, 1), ("hr", 1, 2)]);

        let changed = set_description(&mut conn, "hr", "Human resources")
            .await
            .unwrap();
        assert_eq!(changed.unwrap().description, "Human resources");
        assert_eq!(delete(&mut conn, "hr").await.unwrap(), Some(vec![gone]));
        assert_eq!(delete(&mut conn, "hr").await.unwrap(), None);
        assert_eq!(count_documents(&mut conn).await.unwrap(), 1);
        assert_eq!(count_chunks(&mut conn).await.unwrap(), 1);
    }
}
