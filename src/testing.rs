//! Test support: every test gets its own PostgreSQL database, dropped afterwards.
//!
//! Migrated databases are cloned from a template database that is built once per set of
//! migrations (its name carries a digest of `migrations/`, so a changed migration gets
//! a new template). Building is serialised with an advisory lock, so test processes
//! started together (cargo nextest runs one per test) build it once.
//!
//! The server is `BOR_TEST_DATABASE_URL` (a URL with rights to create databases),
//! by default `postgres://postgres@127.0.0.1:5432/postgres`.
//!
//! ```text
//! let db = TestDatabase::migrated().await;   // or TestDatabase::empty()
//! let pool = db.pool();                       // or db.connect().await, or db.url()
//! let mut conn = pool.get().await?;
//! ```
//!
//! Helpers panic with a clear message when the server is missing: a test cannot go on
//! without it.

#![expect(
    clippy::expect_used,
    reason = "test support: a failed setup stops the test that asked for it"
)]

use diesel::sql_types::{BigInt, Bool, Text};
use diesel::{QueryableByName, sql_query};
use diesel_async::{AsyncConnection, AsyncPgConnection, RunQueryDsl};
use uuid::Uuid;

use crate::db::query_log::{NewQueryLogEntry, QueryLogEntry};
use crate::db::{DbPool, run_migrations};

const DEFAULT_ADMIN_URL: &str = "postgres://postgres@127.0.0.1:5432/postgres";

/// Advisory lock key held while the template is built ("bor-tmpl" in ASCII).
const TEMPLATE_LOCK: i64 = 0x626f_722d_746d_706c;

/// Size of the pools [`TestDatabase::pool`] builds.
const TEST_POOL_SIZE: usize = 4;

/// A database of its own for one test; dropped (with `FORCE`) when this is dropped.
#[derive(Debug)]
pub struct TestDatabase {
    name: String,
    url: String,
    admin_url: String,
}

impl TestDatabase {
    /// A fresh database with every migration applied.
    pub async fn migrated() -> TestDatabase {
        let admin_url = admin_url();
        let mut admin = connect(&admin_url).await;
        let template = ensure_template(&mut admin, &admin_url).await;
        TestDatabase::create(&mut admin, admin_url, &format!("TEMPLATE \"{template}\"")).await
    }

    /// A fresh database with nothing in it (for testing migrations themselves).
    pub async fn empty() -> TestDatabase {
        let admin_url = admin_url();
        let mut admin = connect(&admin_url).await;
        TestDatabase::create(&mut admin, admin_url, "TEMPLATE template0").await
    }

    async fn create(
        admin: &mut AsyncPgConnection,
        admin_url: String,
        options: &str,
    ) -> TestDatabase {
        let name = format!("bor_test_{}", Uuid::new_v4().simple());
        execute(admin, &format!("CREATE DATABASE \"{name}\" {options}")).await;
        TestDatabase {
            url: database_url(&admin_url, &name),
            name,
            admin_url,
        }
    }

    /// The URL of this database.
    pub fn url(&self) -> &str {
        &self.url
    }

    pub fn name(&self) -> &str {
        &self.name
    }

    /// A new pool on this database (default timeouts).
    pub fn pool(&self) -> DbPool {
        DbPool::new(&self.url, TEST_POOL_SIZE)
            .unwrap_or_else(|error| panic!("cannot build a pool for {}: {error}", self.name))
    }

    /// A single connection outside any pool.
    pub async fn connect(&self) -> AsyncPgConnection {
        connect(&self.url).await
    }
}

impl Drop for TestDatabase {
    fn drop(&mut self) {
        // Drop may run inside an async runtime that must not be blocked on itself, so
        // the database is dropped from a thread with a runtime of its own.
        let admin_url = self.admin_url.clone();
        let statement = format!("DROP DATABASE IF EXISTS \"{}\" WITH (FORCE)", self.name);
        let dropped = std::thread::spawn(move || -> Result<(), String> {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .map_err(|error| error.to_string())?;
            runtime.block_on(async {
                let mut admin = AsyncPgConnection::establish(&admin_url)
                    .await
                    .map_err(|error| error.to_string())?;
                sql_query(statement)
                    .execute(&mut admin)
                    .await
                    .map_err(|error| error.to_string())
            })?;
            Ok(())
        })
        .join();
        match dropped {
            Ok(Ok(())) => {}
            Ok(Err(error)) => eprintln!("could not drop test database {}: {error}", self.name),
            Err(_) => eprintln!(
                "could not drop test database {}: the thread panicked",
                self.name
            ),
        }
    }
}

/// The name of the template for the embedded migrations.
fn template_name() -> String {
    let digest = env!("BOR_MIGRATIONS_SHA256");
    format!("bor_test_template_{}", &digest[..16])
}

/// Makes sure the migrated template exists; returns its name.
async fn ensure_template(admin: &mut AsyncPgConnection, admin_url: &str) -> String {
    let template = template_name();
    if database_exists(admin, &template).await {
        return template;
    }
    sql_query("SELECT pg_advisory_lock($1)")
        .bind::<BigInt, _>(TEMPLATE_LOCK)
        .execute(admin)
        .await
        .unwrap_or_else(|error| panic!("cannot take the template lock: {error}"));
    if !database_exists(admin, &template).await {
        // Built under another name and renamed when complete, so that a process that
        // dies half-way never leaves a half-migrated template behind.
        let building = format!("bor_test_building_{}", Uuid::new_v4().simple());
        execute(
            admin,
            &format!("CREATE DATABASE \"{building}\" TEMPLATE template0"),
        )
        .await;
        if let Err(error) = run_migrations(&database_url(admin_url, &building)).await {
            execute(admin, &format!("DROP DATABASE \"{building}\" WITH (FORCE)")).await;
            panic!("migrations failed on a fresh database: {error:?}");
        }
        execute(
            admin,
            &format!("ALTER DATABASE \"{building}\" RENAME TO \"{template}\""),
        )
        .await;
    }
    sql_query("SELECT pg_advisory_unlock($1)")
        .bind::<BigInt, _>(TEMPLATE_LOCK)
        .execute(admin)
        .await
        .unwrap_or_else(|error| panic!("cannot release the template lock: {error}"));
    template
}

#[derive(QueryableByName)]
struct Exists {
    #[diesel(sql_type = Bool)]
    exists: bool,
}

async fn database_exists(admin: &mut AsyncPgConnection, name: &str) -> bool {
    sql_query("SELECT EXISTS (SELECT 1 FROM pg_database WHERE datname = $1) AS exists")
        .bind::<Text, _>(name)
        .get_result::<Exists>(admin)
        .await
        .unwrap_or_else(|error| panic!("cannot list databases: {error}"))
        .exists
}

fn admin_url() -> String {
    std::env::var("BOR_TEST_DATABASE_URL")
        .ok()
        .filter(|url| !url.trim().is_empty())
        .unwrap_or_else(|| DEFAULT_ADMIN_URL.to_owned())
}

/// `admin_url` pointing at database `name` instead.
fn database_url(admin_url: &str, name: &str) -> String {
    let mut url = url::Url::parse(admin_url)
        .unwrap_or_else(|error| panic!("BOR_TEST_DATABASE_URL is not a URL: {error}"));
    url.set_path(&format!("/{name}"));
    url.into()
}

async fn connect(url: &str) -> AsyncPgConnection {
    AsyncPgConnection::establish(url)
        .await
        .unwrap_or_else(|error| {
            panic!(
                "cannot connect to the test PostgreSQL at {} ({error}); \
             run scripts/ensure-postgres.sh or set BOR_TEST_DATABASE_URL",
                crate::config::redact_url_password(url)
            )
        })
}

async fn execute(conn: &mut AsyncPgConnection, statement: &str) {
    sql_query(statement)
        .execute(conn)
        .await
        .unwrap_or_else(|error| panic!("{statement}: {error}"));
}

/// Stores a document of one chunk with the given embedding, straight into the database
/// (as rows written by other means than bor are); returns (document id, chunk id).
pub async fn insert_one_chunk_document(
    pool: &DbPool,
    title: &str,
    text: &str,
    embedding: &[f32],
) -> (i64, i64) {
    use crate::db::documents::NewDocument;
    use crate::db::schema::{chunks, documents};
    use diesel::{ExpressionMethods, insert_into};

    let mut conn = pool.get().await.expect("a connection");
    let document_id: i64 = insert_into(documents::table)
        .values(NewDocument::new(title, None, text))
        .returning(documents::id)
        .get_result(&mut conn)
        .await
        .expect("the document is stored");
    let chunk_id: i64 = insert_into(chunks::table)
        .values((
            chunks::document_id.eq(document_id),
            chunks::ord.eq(0),
            chunks::text.eq(text),
            chunks::embedding.eq(embedding),
        ))
        .returning(chunks::id)
        .get_result(&mut conn)
        .await
        .expect("the chunk is stored");
    (document_id, chunk_id)
}

/// A `query_log` row of a grounded turn with every field set, of no conversation.
pub fn query_log_entry() -> NewQueryLogEntry {
    use crate::db::words::Word;
    use bor_actors::record::{TurnPath, TurnStatus};
    NewQueryLogEntry {
        turn_id: Uuid::new_v4(),
        created_at: chrono::Utc::now(),
        question: "What is in the handbook?".to_owned(),
        answer: "Chapters on onboarding.".to_owned(),
        path: Word(TurnPath::Grounded),
        status: Word(TurnStatus::Done),
        chat_model: "smollm2".to_owned(),
        rounds: 2,
        tool_calls: 1,
        retries: 3,
        scaffold_stripped: 17,
        recovered: true,
        sources: serde_json::json!([{"document_id": 1, "title": "Handbook", "chunk_id": 4, "score": 0.82}]),
        first_token_ms: Some(840),
        elapsed_ms: 1200,
        conversation_id: None,
        user_id: None,
        searched_query: Some("What is in the handbook?".to_owned()),
        prompt_tokens: 310,
        completion_tokens: 42,
        tokens_estimated: false,
        key_id: None,
        version_of: None,
    }
}

/// The configuration of `defaults` with `overrides` replacing or adding variables.
/// Panics on a name that is no bor variable, as the environment would warn of it: a
/// misspelt override would otherwise leave its test running on the default.
pub fn test_config(defaults: &[(&str, &str)], overrides: &[(&str, &str)]) -> crate::config::Config {
    let names = overrides
        .iter()
        .map(|(name, _)| (*name).to_owned())
        .collect();
    let unknown = crate::config::unknown_variables(names);
    assert!(unknown.is_empty(), "{}", unknown.join("; "));
    let vars = defaults
        .iter()
        .chain(overrides)
        .map(|(name, value)| ((*name).to_owned(), (*value).to_owned()));
    crate::config::Config::from_vars(vars).expect("the test configuration is valid")
}

/// The `query_log` rows, oldest first.
pub async fn query_log_rows(pool: &DbPool) -> Vec<QueryLogEntry> {
    use crate::db::schema::query_log;
    use diesel::{QueryDsl, SelectableHelper};

    let mut conn = pool.get().await.expect("a connection");
    query_log::table
        .select(QueryLogEntry::as_select())
        .order((query_log::created_at, query_log::id))
        .load(&mut conn)
        .await
        .expect("query_log is readable")
}

/// bor built on port 0 from `defaults`, with `overrides` replacing or adding variables;
/// not yet running.
pub async fn build_application(
    defaults: &[(&str, &str)],
    overrides: &[(&str, &str)],
) -> crate::startup::Application {
    crate::startup::Application::build(test_config(defaults, overrides))
        .await
        .expect("the app builds")
}

#[cfg(test)]
mod tests {
    use super::test_config;

    const DEFAULTS: [(&str, &str); 2] = [
        ("BOR_DATABASE_URL", "postgres://postgres@127.0.0.1/bor"),
        ("BOR_LLM_BASE_URL", "http://127.0.0.1:1/v1"),
    ];

    #[test]
    fn known_overrides_replace_the_defaults() {
        let config = test_config(&DEFAULTS, &[("BOR_LLM_RETRIES", "7")]);
        assert_eq!(config.llm_retries, 7);
    }

    #[test]
    #[should_panic(expected = "BOR_LLM_RETRYS is not a bor variable")]
    fn a_misspelt_override_is_refused_like_in_the_environment() {
        test_config(&DEFAULTS, &[("BOR_LLM_RETRYS", "7")]);
    }
}
