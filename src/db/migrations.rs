//! Migrations embedded in the binary, run at start-up.
//!
//! diesel's migration harness is synchronous, so it runs on a blocking thread through
//! `AsyncConnectionWrapper` (diesel-async's own harness panics inside actix's runtime).

use diesel::migration::{Migration, MigrationSource};
use diesel::pg::Pg;
use diesel::prelude::*;
use diesel::sql_types::Bool;
use diesel_async::async_connection_wrapper::AsyncConnectionWrapper;
use diesel_async::{AsyncPgConnection, RunQueryDsl};
use diesel_migrations::{EmbeddedMigrations, MigrationHarness, embed_migrations};
use serde::Serialize;

use super::DbError;

/// The migrations of `migrations/`, oldest first.
pub const MIGRATIONS: EmbeddedMigrations = embed_migrations!("migrations");

/// The bookkeeping table diesel's harness keeps.
mod bookkeeping {
    diesel::table! {
        __diesel_schema_migrations (version) {
            version -> VarChar,
            run_on -> Timestamp,
        }
    }
}

type HarnessConnection = AsyncConnectionWrapper<AsyncPgConnection>;

/// Applies every pending migration; returns the names of those applied now.
pub async fn run_migrations(database_url: &str) -> Result<Vec<String>, DbError> {
    with_harness(database_url, |conn| {
        let versions = conn
            .run_pending_migrations(MIGRATIONS)
            .map_err(DbError::Migration)?;
        names_of(versions.iter().map(ToString::to_string))
    })
    .await
}

/// Reverts every applied migration, newest first; returns the names reverted.
pub async fn revert_all_migrations(database_url: &str) -> Result<Vec<String>, DbError> {
    with_harness(database_url, |conn| {
        let versions = conn
            .revert_all_migrations(MIGRATIONS)
            .map_err(DbError::Migration)?;
        names_of(versions.iter().map(ToString::to_string))
    })
    .await
}

/// Which of the embedded migrations the database has, by name (oldest first).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct MigrationStatus {
    pub applied: Vec<String>,
    pub pending: Vec<String>,
    /// Versions recorded in the database that this binary does not know (a newer
    /// binary migrated it).
    pub unknown: Vec<String>,
}

/// Compares the embedded migrations with those recorded in the database.
pub async fn migration_status(conn: &mut AsyncPgConnection) -> Result<MigrationStatus, DbError> {
    use bookkeeping::__diesel_schema_migrations::dsl::{__diesel_schema_migrations, version};

    let has_table = diesel::select(diesel::dsl::sql::<Bool>(
        "to_regclass('__diesel_schema_migrations') IS NOT NULL",
    ))
    .get_result::<bool>(conn)
    .await?;
    let mut recorded: Vec<String> = if has_table {
        __diesel_schema_migrations
            .select(version)
            .order(version)
            .load(conn)
            .await?
    } else {
        Vec::new()
    };
    let mut status = MigrationStatus {
        applied: Vec::new(),
        pending: Vec::new(),
        unknown: Vec::new(),
    };
    for migration in embedded()? {
        let name = migration.name();
        let known_version = name.version().to_string();
        match recorded
            .iter()
            .position(|recorded| *recorded == known_version)
        {
            Some(index) => {
                recorded.remove(index);
                status.applied.push(name.to_string());
            }
            None => status.pending.push(name.to_string()),
        }
    }
    status.unknown = recorded;
    Ok(status)
}

fn embedded() -> Result<Vec<Box<dyn Migration<Pg>>>, DbError> {
    MigrationSource::<Pg>::migrations(&MIGRATIONS).map_err(DbError::Migration)
}

/// Names of the embedded migrations with these versions (the version itself when a
/// migration is not embedded).
fn names_of(versions: impl Iterator<Item = String>) -> Result<Vec<String>, DbError> {
    let migrations = embedded()?;
    Ok(versions
        .map(|wanted| {
            migrations
                .iter()
                .find(|migration| migration.name().version().to_string() == wanted)
                .map_or(wanted.clone(), |migration| migration.name().to_string())
        })
        .collect())
}

/// Runs `job` with a synchronous connection on a blocking thread.
async fn with_harness<T: Send + 'static>(
    database_url: &str,
    job: impl FnOnce(&mut HarnessConnection) -> Result<T, DbError> + Send + 'static,
) -> Result<T, DbError> {
    let database_url = database_url.to_owned();
    tokio::task::spawn_blocking(move || {
        let mut conn = HarnessConnection::establish(&database_url).map_err(DbError::Connect)?;
        job(&mut conn)
    })
    .await
    .map_err(|error| DbError::Migration(Box::new(error)))?
}
