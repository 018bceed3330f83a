//! The connection pool (deadpool through diesel-async), with explicit timeouts so that
//! a down or exhausted database is an error, never a wait without end.

use std::time::Duration;

use deadpool::Runtime;
use deadpool::managed::{PoolError, Timeouts};
use diesel_async::AsyncPgConnection;
use diesel_async::pooled_connection::AsyncDieselConnectionManager;
use diesel_async::pooled_connection::deadpool::{Object, Pool};

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
    /// Checking an idle connection before handing it out.
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
        let manager = AsyncDieselConnectionManager::<AsyncPgConnection>::new(database_url);
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
