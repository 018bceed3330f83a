//! PostgreSQL: connection pool, embedded migrations, and the tables with their queries.
//!
//! Queries are async functions taking `&mut AsyncPgConnection`; get one from
//! [`DbPool::get`]. Every failure is a [`DbError`]; [`DbError::is_unavailable`] tells
//! the HTTP layer when to answer 503 `unavailable`.

pub mod api_keys;
pub mod audit;
pub mod chunks;
pub mod collections;
pub mod conversations;
pub mod document_list;
pub mod documents;
mod error;
pub mod feedback;
pub mod grants;
pub mod groups;
pub mod identities;
mod migrations;
pub mod oauth;
pub mod page_validators;
mod pool;
pub mod query_log;
pub mod schema;
pub mod sessions;
pub mod stats;
pub mod turn_owners;
pub mod usage;
pub mod users;
pub mod watched_files;
pub mod words;

pub use error::DbError;
pub use migrations::{
    MIGRATIONS, MigrationStatus, migration_status, revert_all_migrations, run_migrations,
};
pub use pool::{DbConnection, DbPool, PoolTimeouts};

/// PostgreSQL's text cannot hold U+0000: bor removes it from every text it stores
/// (docs/LIMITS.md). Allocates nothing when there is none.
pub fn storable_text(text: &str) -> std::borrow::Cow<'_, str> {
    if text.contains('\0') {
        std::borrow::Cow::Owned(text.replace('\0', ""))
    } else {
        std::borrow::Cow::Borrowed(text)
    }
}

#[cfg(test)]
mod schema_check;

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::storable_text;

    proptest! {
        #[test]
        fn stored_text_is_the_text_without_u0000(text in "(?s)[\\x00a-zé\\n]{0,64}") {
            let stored = storable_text(&text);
            prop_assert!(!stored.contains('\0'));
            prop_assert_eq!(stored.as_ref(), text.replace('\0', ""));
        }
    }
}
