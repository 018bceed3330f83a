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
use crate::username;

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

/// Applies every pending migration, then keys the usernames that need it; returns the
/// names of the migrations applied now. A database that records migrations this binary
/// does not know is left untouched: [`DbError::NewerSchema`].
pub async fn run_migrations(database_url: &str) -> Result<Vec<String>, DbError> {
    with_harness(database_url, |conn| {
        refuse_newer_schema(conn)?;
        let versions: Vec<String> = conn
            .run_pending_migrations(MIGRATIONS)
            .map_err(DbError::Migration)?
            .iter()
            .map(ToString::to_string)
            .collect();
        rekey_usernames(conn)?;
        names_of(versions.into_iter())
    })
    .await
}

/// Fails with [`DbError::NewerSchema`] when the database records a migration that is not
/// embedded in this binary; reads only.
fn refuse_newer_schema(conn: &mut HarnessConnection) -> Result<(), DbError> {
    use bookkeeping::__diesel_schema_migrations::dsl::{__diesel_schema_migrations, version};

    let has_table: bool = diesel::RunQueryDsl::get_result(has_bookkeeping_table(), conn)?;
    if !has_table {
        return Ok(());
    }
    let recorded = diesel::RunQueryDsl::load(
        __diesel_schema_migrations.select(version).order(version),
        conn,
    )?;
    let unknown = status_of(recorded)?.unknown;
    match unknown.last() {
        Some(newest) => Err(DbError::NewerSchema {
            newest: newest.clone(),
            others: unknown.len() - 1,
        }),
        None => Ok(()),
    }
}

/// Whether diesel's bookkeeping table exists (it does once a migration has run).
fn has_bookkeeping_table() -> diesel::dsl::select<diesel::expression::SqlLiteral<Bool>> {
    diesel::select(diesel::dsl::sql::<Bool>(
        "to_regclass('__diesel_schema_migrations') IS NOT NULL",
    ))
}

/// Gives every user whose stored `username_key` is not [`username::key`] of their name
/// that key: the rows the migration that made the column keyed with PostgreSQL's
/// `lower()` (which differs outside ASCII). A key another user holds is left, with a
/// warning: that pair of names was one name before too.
fn rekey_usernames(conn: &mut HarnessConnection) -> Result<(), DbError> {
    use super::schema::users;
    let rows: Vec<(uuid::Uuid, String, String)> = diesel::RunQueryDsl::load(
        users::table.select((users::id, users::username, users::username_key)),
        conn,
    )?;
    for (id, name, stored) in rows {
        let key = username::key(&name);
        if key == stored {
            continue;
        }
        let update = diesel::update(users::table.find(id)).set(users::username_key.eq(&key));
        match diesel::RunQueryDsl::execute(update, conn) {
            Ok(_) => {}
            Err(diesel::result::Error::DatabaseError(
                diesel::result::DatabaseErrorKind::UniqueViolation,
                _,
            )) => {
                tracing::warn!(username = %name, "a username's key is another user's; it keeps the key PostgreSQL's lower() gave it");
            }
            Err(error) => return Err(error.into()),
        }
    }
    Ok(())
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

    let has_table = has_bookkeeping_table().get_result::<bool>(conn).await?;
    let recorded: Vec<String> = if has_table {
        __diesel_schema_migrations
            .select(version)
            .order(version)
            .load(conn)
            .await?
    } else {
        Vec::new()
    };
    status_of(recorded)
}

/// Which of the embedded migrations are among the `recorded` versions, and which
/// recorded versions are not embedded (oldest first).
fn status_of(mut recorded: Vec<String>) -> Result<MigrationStatus, DbError> {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::TestDatabase;
    use diesel::sql_types::Text;

    #[derive(QueryableByName)]
    struct TableName {
        #[diesel(sql_type = Text)]
        name: String,
    }

    /// Tables of the public schema other than diesel's bookkeeping, sorted.
    async fn tables(conn: &mut AsyncPgConnection) -> Vec<String> {
        diesel::sql_query(
            "SELECT tablename::text AS name FROM pg_tables
             WHERE schemaname = 'public' AND tablename <> '__diesel_schema_migrations'
             ORDER BY tablename",
        )
        .load::<TableName>(conn)
        .await
        .unwrap()
        .into_iter()
        .map(|table| table.name)
        .collect()
    }

    fn embedded_names() -> Vec<String> {
        embedded()
            .unwrap()
            .iter()
            .map(|migration| migration.name().to_string())
            .collect()
    }

    #[tokio::test]
    async fn usernames_keyed_by_sql_get_bors_key_once_migrations_have_run() {
        let db = TestDatabase::migrated().await;
        let mut conn = db.connect().await;
        // As the migration that made the column keys a row: lower() of the C locale
        // leaves letters outside ASCII as they are.
        diesel::sql_query(
            "INSERT INTO users (id, username, username_key, display_name, role)
             VALUES (gen_random_uuid(), 'ÄRGER', 'Ärger', 'x', 'member'),
                    (gen_random_uuid(), 'bob', 'bob', 'x', 'member')",
        )
        .execute(&mut conn)
        .await
        .unwrap();
        assert_eq!(
            run_migrations(db.url()).await.unwrap(),
            Vec::<String>::new()
        );
        let keys: Vec<String> = crate::db::schema::users::table
            .select(crate::db::schema::users::username_key)
            .order(crate::db::schema::users::username_key)
            .load(&mut conn)
            .await
            .unwrap();
        assert_eq!(keys, ["bob", "ärger"]);
        let found = crate::db::users::find_by_username(&mut conn, "ärger")
            .await
            .unwrap();
        assert_eq!(found.map(|user| user.username).as_deref(), Some("ÄRGER"));
    }

    #[tokio::test]
    async fn migrations_apply_revert_and_apply_again_on_an_empty_database() {
        let db = TestDatabase::empty().await;
        let mut conn = db.connect().await;
        let all = embedded_names();
        assert!(all.len() >= 2, "{all:?}");
        let status = migration_status(&mut conn).await.unwrap();
        assert_eq!(status.applied, Vec::<String>::new());
        assert_eq!(status.pending, all);

        assert_eq!(run_migrations(db.url()).await.unwrap(), all);
        assert_eq!(tables(&mut conn).await, super::super::schema_check::TABLES);
        let status = migration_status(&mut conn).await.unwrap();
        assert_eq!((status.applied, status.pending), (all.clone(), Vec::new()));
        assert_eq!(
            run_migrations(db.url()).await.unwrap(),
            Vec::<String>::new()
        );

        let mut newest_first = all.clone();
        newest_first.reverse();
        assert_eq!(revert_all_migrations(db.url()).await.unwrap(), newest_first);
        assert_eq!(tables(&mut conn).await, Vec::<String>::new());
        let status = migration_status(&mut conn).await.unwrap();
        assert_eq!((status.applied, status.pending), (Vec::new(), all.clone()));

        assert_eq!(run_migrations(db.url()).await.unwrap(), all);
        assert_eq!(tables(&mut conn).await, super::super::schema_check::TABLES);
    }

    #[tokio::test]
    async fn status_lists_pending_and_unknown_migrations() {
        use bookkeeping::__diesel_schema_migrations::dsl::{__diesel_schema_migrations, version};

        let db = TestDatabase::migrated().await;
        let mut conn = db.connect().await;
        let all = embedded_names();
        let newest = embedded()
            .unwrap()
            .last()
            .unwrap()
            .name()
            .version()
            .to_string();
        diesel::delete(__diesel_schema_migrations.filter(version.eq(&newest)))
            .execute(&mut conn)
            .await
            .unwrap();
        diesel::insert_into(__diesel_schema_migrations)
            .values(version.eq("29991231000000"))
            .execute(&mut conn)
            .await
            .unwrap();
        let status = migration_status(&mut conn).await.unwrap();
        assert_eq!(status.applied, all[..all.len() - 1]);
        assert_eq!(status.pending, all[all.len() - 1..]);
        assert_eq!(status.unknown, ["29991231000000"]);
    }

    /// A database a newer bor migrated (it records a migration this binary does not
    /// have) is refused before anything is applied, naming the newest unknown one.
    #[tokio::test]
    async fn a_database_newer_than_the_binary_is_refused_untouched() {
        use bookkeeping::__diesel_schema_migrations::dsl::{__diesel_schema_migrations, version};

        let db = TestDatabase::migrated().await;
        let mut conn = db.connect().await;
        let all = embedded_names();
        let newest = embedded()
            .unwrap()
            .last()
            .unwrap()
            .name()
            .version()
            .to_string();
        // The newest embedded migration pending: a refusal must leave it so.
        revert_newest(db.url()).await;
        diesel::insert_into(__diesel_schema_migrations)
            .values([version.eq("29991231000000"), version.eq("29991230000000")])
            .execute(&mut conn)
            .await
            .unwrap();
        let error = run_migrations(db.url()).await.unwrap_err();
        assert!(matches!(error, DbError::NewerSchema { .. }), "{error:?}");
        assert_eq!(
            error.to_string(),
            "the database has migration 29991231000000 (and 1 more), which this bor does not know: a newer bor migrated it; run that release or a newer one (a downgrade needs the backup taken before the upgrade)"
        );
        let status = migration_status(&mut conn).await.unwrap();
        assert_eq!(status.pending, all[all.len() - 1..], "nothing was applied");
        assert!(!status.applied.iter().any(|name| name.contains(&newest)));
    }

    /// Reverts the newest embedded migration only.
    async fn revert_newest(url: &str) {
        with_harness(url, |conn| {
            conn.revert_last_migration(MIGRATIONS)
                .map_err(DbError::Migration)?;
            Ok(())
        })
        .await
        .unwrap();
    }

    #[tokio::test]
    async fn an_unreachable_database_fails_with_a_connect_error() {
        let url = format!(
            "postgres://postgres@127.0.0.1:{}/bor",
            crate::db::pool::tests::unused_port()
        );
        let error = run_migrations(&url).await.unwrap_err();
        assert!(matches!(error, DbError::Connect(_)), "{error:?}");
        assert!(error.is_unavailable());
    }
}
