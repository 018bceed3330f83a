//! The database layer's error.

use deadpool::managed::TimeoutType;
use diesel::result::DatabaseErrorKind;

/// Everything that can go wrong talking to PostgreSQL.
#[derive(Debug, thiserror::Error)]
pub enum DbError {
    /// No connection could be made (refused, unknown host, authentication, …).
    #[error("cannot connect to the database")]
    Connect(#[source] diesel::ConnectionError),
    /// The pool gave up: no free connection, or connecting or checking one took too long.
    #[error("timed out {}", describe_timeout(*.0))]
    PoolTimeout(TimeoutType),
    /// The pool is closed or was built without a runtime.
    #[error("the database pool is unusable: {0}")]
    Pool(String),
    /// A query failed.
    #[error("database query failed")]
    Query(#[from] diesel::result::Error),
    /// The in-memory full-text index built from the rows failed to take them (the
    /// index and its error type are the knowledge base's, src/knowledge/).
    #[error("the in-memory full-text index failed")]
    FullText(#[source] Box<dyn std::error::Error + Send + Sync>),
    /// Running, reverting or listing migrations failed.
    #[error("database migrations failed")]
    Migration(#[source] Box<dyn std::error::Error + Send + Sync>),
    /// The database records migrations this binary does not have: a newer bor migrated
    /// it, and this one refuses to start rather than run on a schema it does not know.
    #[error(
        "the database has migration {newest}{}, which this bor does not know: a newer bor migrated it; run that release or a newer one (a downgrade needs the backup taken before the upgrade)",
        others_note(*.others)
    )]
    NewerSchema {
        /// The newest version recorded that this binary does not know.
        newest: String,
        /// How many other unknown versions there are.
        others: usize,
    },
    /// A read that several requests shared failed: each of them has its error.
    #[error(transparent)]
    Shared(std::sync::Arc<DbError>),
}

fn others_note(others: usize) -> String {
    match others {
        0 => String::new(),
        1 => " (and 1 more)".to_owned(),
        more => format!(" (and {more} more)"),
    }
}

impl DbError {
    /// True when the database is down or overloaded rather than the request wrong:
    /// such errors become 503 `unavailable`.
    pub fn is_unavailable(&self) -> bool {
        match self {
            DbError::Connect(_) | DbError::PoolTimeout(_) | DbError::Pool(_) => true,
            DbError::Query(diesel::result::Error::DatabaseError(kind, _)) => matches!(
                kind,
                DatabaseErrorKind::UnableToSendCommand | DatabaseErrorKind::ClosedConnection
            ),
            DbError::Query(diesel::result::Error::BrokenTransactionManager) => true,
            DbError::Shared(error) => error.is_unavailable(),
            DbError::Query(_)
            | DbError::Migration(_)
            | DbError::FullText(_)
            | DbError::NewerSchema { .. } => false,
        }
    }
}

fn describe_timeout(stage: TimeoutType) -> &'static str {
    match stage {
        TimeoutType::Wait => "waiting for a free database connection",
        TimeoutType::Create => "connecting to the database",
        TimeoutType::Recycle => "checking a pooled database connection",
    }
}
