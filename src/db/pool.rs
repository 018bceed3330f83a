//! The connection pool (deadpool through diesel-async), with explicit timeouts so that
//! a down or exhausted database is an error, never a wait without end.
//!
//! A checkout costs no round trip: an idle connection is handed out after the checks
//! that need no query (no transaction left open, the connection not closed). A
//! connection the server ended (a restart, `pg_terminate_backend`, an outage that
//! closed the socket) is closed on the client's side as soon as its end arrives, so
//! the next checkout replaces it instead of handing it out; one that dies unnoticed
//! (a network cut without a reset) fails its first query and is replaced after it.

use std::time::Duration;

use deadpool::Runtime;
use deadpool::managed::{PoolError, Timeouts};
use diesel_async::AsyncPgConnection;
use diesel_async::pooled_connection::deadpool::{Object, Pool};
use diesel_async::pooled_connection::{
    AsyncDieselConnectionManager, ManagerConfig, RecyclingMethod,
};

use super::DbError;

/// A pooled connection; derefs to `AsyncPgConnection` and goes back to the pool on drop.
pub type DbConnection = Object<AsyncPgConnection>;

/// How long [`DbPool::get`] may take, by stage.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PoolTimeouts {
    /// Waiting for a connection to become free when all are in use.
    pub wait: Duration,
    /// Opening a new connection.
    pub create: Duration,
    /// Checking an idle connection before handing it out (no query is sent, see the
    /// module documentation).
    pub recycle: Duration,
}

impl Default for PoolTimeouts {
    fn default() -> PoolTimeouts {
        PoolTimeouts {
            wait: Duration::from_secs(5),
            create: Duration::from_secs(5),
            recycle: Duration::from_secs(5),
        }
    }
}

/// A pool of PostgreSQL connections; cheap to clone (clones share the pool).
/// Connections are opened on demand, so building it does not touch the database.
#[derive(Clone)]
pub struct DbPool {
    pool: Pool<AsyncPgConnection>,
}

impl DbPool {
    /// A pool of at most `size` connections to `database_url`, with default timeouts.
    pub fn new(database_url: &str, size: usize) -> Result<DbPool, DbError> {
        DbPool::with_timeouts(database_url, size, PoolTimeouts::default())
    }

    pub fn with_timeouts(
        database_url: &str,
        size: usize,
        timeouts: PoolTimeouts,
    ) -> Result<DbPool, DbError> {
        let mut config = ManagerConfig::default();
        config.recycling_method = RecyclingMethod::Fast;
        let manager = AsyncDieselConnectionManager::<AsyncPgConnection>::new_with_config(
            database_url,
            config,
        );
        let pool = Pool::builder(manager)
            .max_size(size)
            .timeouts(Timeouts {
                wait: Some(timeouts.wait),
                create: Some(timeouts.create),
                recycle: Some(timeouts.recycle),
            })
            .runtime(Runtime::Tokio1)
            .build()
            .map_err(|error| DbError::Pool(error.to_string()))?;
        Ok(DbPool { pool })
    }

    /// Its size limit, open connections, idle ones and requests waiting, right now.
    pub fn status(&self) -> deadpool::Status {
        self.pool.status()
    }

    /// A connection from the pool, or a typed error once a timeout has passed.
    pub async fn get(&self) -> Result<DbConnection, DbError> {
        self.pool.get().await.map_err(|error| match error {
            PoolError::Timeout(stage) => DbError::PoolTimeout(stage),
            PoolError::Backend(diesel_async::pooled_connection::PoolError::ConnectionError(
                error,
            )) => DbError::Connect(error),
            PoolError::Backend(diesel_async::pooled_connection::PoolError::QueryError(error)) => {
                DbError::Query(error)
            }
            other => DbError::Pool(other.to_string()),
        })
    }
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;
    use crate::testing::TestDatabase;
    use deadpool::managed::TimeoutType;
    use diesel_async::RunQueryDsl;

    /// A local port nothing listens on (bound, then released).
    pub(in crate::db) fn unused_port() -> u16 {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        listener.local_addr().unwrap().port()
    }

    fn short_timeouts() -> PoolTimeouts {
        PoolTimeouts {
            wait: Duration::from_millis(300),
            create: Duration::from_millis(500),
            recycle: Duration::from_millis(500),
        }
    }

    /// Fails the test instead of hanging when `get` does not return.
    async fn get_within_a_minute(pool: &DbPool) -> Result<DbConnection, DbError> {
        tokio::time::timeout(Duration::from_secs(60), pool.get())
            .await
            .expect("the pool should answer instead of hanging")
    }

    #[tokio::test]
    async fn a_pool_hands_out_working_connections() {
        let db = TestDatabase::migrated().await;
        let pool = DbPool::new(db.url(), 2).unwrap();
        let mut conn = get_within_a_minute(&pool).await.unwrap();
        let answer: i32 = diesel::select(diesel::dsl::sql::<diesel::sql_types::Integer>("40 + 2"))
            .get_result(&mut conn)
            .await
            .unwrap();
        assert_eq!(answer, 42);
    }

    async fn backend_pid(conn: &mut DbConnection) -> i32 {
        diesel::select(diesel::dsl::sql::<diesel::sql_types::Integer>(
            "pg_backend_pid()",
        ))
        .get_result(conn)
        .await
        .unwrap()
    }

    #[tokio::test]
    async fn a_connection_the_server_ended_is_replaced_at_the_next_checkout() {
        let db = TestDatabase::migrated().await;
        let pool = DbPool::new(db.url(), 1).unwrap();
        let killed = backend_pid(&mut get_within_a_minute(&pool).await.unwrap()).await;
        // Ended from another session, while the connection waits idle in the pool.
        let mut other = db.pool().get().await.unwrap();
        let ended: bool = diesel::sql_query("SELECT pg_terminate_backend($1, 5000) AS ended")
            .bind::<diesel::sql_types::Integer, _>(killed)
            .get_result::<Ended>(&mut other)
            .await
            .unwrap()
            .ended;
        assert!(ended);
        // The server's goodbye reaches the client's connection task within moments.
        tokio::time::sleep(Duration::from_millis(200)).await;
        let mut conn = get_within_a_minute(&pool).await.unwrap();
        let replacement = backend_pid(&mut conn).await;
        assert_ne!(replacement, killed, "a new connection");
    }

    #[derive(diesel::QueryableByName)]
    struct Ended {
        #[diesel(sql_type = diesel::sql_types::Bool)]
        ended: bool,
    }

    #[tokio::test]
    async fn an_unreachable_database_is_a_typed_error() {
        let url = format!("postgres://postgres@127.0.0.1:{}/bor", unused_port());
        let pool = DbPool::with_timeouts(&url, 2, short_timeouts()).unwrap();
        let error = get_within_a_minute(&pool).await.err().unwrap();
        assert!(matches!(error, DbError::Connect(_)), "{error:?}");
        assert!(error.is_unavailable());
    }

    #[tokio::test]
    async fn a_server_that_never_answers_times_out() {
        // Accepts connections (in the kernel's backlog) but never speaks.
        let silent = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("postgres://postgres@{}/bor", silent.local_addr().unwrap());
        let pool = DbPool::with_timeouts(&url, 2, short_timeouts()).unwrap();
        let error = get_within_a_minute(&pool).await.err().unwrap();
        assert!(
            matches!(error, DbError::PoolTimeout(TimeoutType::Create)),
            "{error:?}"
        );
        assert!(error.is_unavailable());
    }

    #[tokio::test]
    async fn an_exhausted_pool_is_a_typed_error_until_a_connection_returns() {
        let db = TestDatabase::migrated().await;
        let pool = DbPool::with_timeouts(db.url(), 1, short_timeouts()).unwrap();
        let held = get_within_a_minute(&pool).await.unwrap();
        let error = get_within_a_minute(&pool).await.err().unwrap();
        assert!(
            matches!(error, DbError::PoolTimeout(TimeoutType::Wait)),
            "{error:?}"
        );
        assert!(error.is_unavailable());
        assert_eq!(
            error.to_string(),
            "timed out waiting for a free database connection"
        );
        drop(held);
        let _returned = get_within_a_minute(&pool).await.unwrap();
    }
}
