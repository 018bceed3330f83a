//! PostgreSQL: connection pool, embedded migrations, and the tables with their queries.
//!
//! Queries are async functions taking `&mut AsyncPgConnection`; get one from
//! [`DbPool::get`]. Every failure is a [`DbError`]; [`DbError::is_unavailable`] tells
//! the HTTP layer when to answer 503 `unavailable`.

pub mod chunks;
pub mod documents;
mod error;
mod migrations;
mod pool;
pub mod query_log;
pub mod schema;
pub mod stats;

pub use error::DbError;
pub use migrations::{
    MIGRATIONS, MigrationStatus, migration_status, revert_all_migrations, run_migrations,
};
pub use pool::{DbConnection, DbPool, PoolTimeouts};

#[cfg(test)]
mod schema_check;
