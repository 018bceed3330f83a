//! `query_log`: one row per chat turn that ended `done` or `stopped`.

use std::io::Write;

use chrono::{DateTime, Utc};
use diesel::deserialize::{self, FromSql, FromSqlRow};
use diesel::expression::AsExpression;
use diesel::pg::{Pg, PgValue};
use diesel::prelude::*;
use diesel::serialize::{self, IsNull, Output, ToSql};
use diesel::sql_types::Text;
use diesel_async::{AsyncPgConnection, RunQueryDsl};
use uuid::Uuid;

use super::DbError;
use super::schema::query_log;

/// Declares an enum stored as one of a fixed set of words in a text column.
macro_rules! text_enum {
    (
        $(#[$meta:meta])*
        $name:ident { $($(#[$variant_meta:meta])* $variant:ident => $word:literal),+ $(,)? }
    ) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, AsExpression, FromSqlRow)]
        #[diesel(sql_type = Text)]
        pub enum $name {
            $($(#[$variant_meta])* $variant),+
        }

        impl $name {
            /// The word stored in the database and shown in logs.
            pub fn as_str(self) -> &'static str {
                match self {
                    $($name::$variant => $word),+
                }
            }
        }

        impl ToSql<Text, Pg> for $name {
            fn to_sql<'b>(&'b self, out: &mut Output<'b, '_, Pg>) -> serialize::Result {
                out.write_all(self.as_str().as_bytes())?;
                Ok(IsNull::No)
            }
        }

        impl FromSql<Text, Pg> for $name {
            fn from_sql(value: PgValue<'_>) -> deserialize::Result<Self> {
                match value.as_bytes() {
                    $(bytes if bytes == $word.as_bytes() => Ok($name::$variant),)+
                    other => Err(format!(
                        concat!("unexpected ", stringify!($name), " {:?}"),
                        String::from_utf8_lossy(other)
                    )
                    .into()),
                }
            }
        }
    };
}

text_enum! {
    /// How a turn was answered.
    TurnPath {
        Grounded => "grounded",
        Deflected => "deflected",
        /// The turn failed before retrieval decided.
        Undecided => "undecided",
    }
}

text_enum! {
    /// How a logged turn ended.
    TurnStatus {
        Done => "done",
        /// The client went away; the partial answer is kept.
        Stopped => "stopped",
    }
}

#[derive(Debug, Clone, PartialEq, Queryable, Selectable)]
#[diesel(table_name = query_log, check_for_backend(Pg))]
pub struct QueryLogEntry {
    pub id: i64,
    pub turn_id: Uuid,
    pub created_at: DateTime<Utc>,
    pub question: String,
    pub answer: String,
    pub path: TurnPath,
    pub status: TurnStatus,
    pub chat_model: String,
    pub rounds: i32,
    pub tool_calls: i32,
    pub retries: i32,
    pub scaffold_stripped: i32,
    pub recovered: bool,
    pub sources: serde_json::Value,
    pub first_token_ms: Option<i64>,
    pub elapsed_ms: i64,
}

/// A row to write. Owned, so that a writer can keep it queued until the database
/// takes it.
#[derive(Debug, Clone, PartialEq, Insertable)]
#[diesel(table_name = query_log, check_for_backend(Pg))]
pub struct NewQueryLogEntry {
    pub turn_id: Uuid,
    /// As sent, trimmed.
    pub question: String,
    pub answer: String,
    pub path: TurnPath,
    pub status: TurnStatus,
    pub chat_model: String,
    pub rounds: i32,
    pub tool_calls: i32,
    pub retries: i32,
    pub scaffold_stripped: i32,
    pub recovered: bool,
    /// `[{"document_id","title","chunk_id","score"}]`, best first.
    pub sources: serde_json::Value,
    /// Milliseconds to the first visible answer text; `None` when there was none.
    pub first_token_ms: Option<i64>,
    pub elapsed_ms: i64,
}

/// Writes the row of a turn once: returns `false` when a row with this `turn_id`
/// already exists (a retried write), which is left unchanged.
pub async fn insert_query_log(
    conn: &mut AsyncPgConnection,
    entry: &NewQueryLogEntry,
) -> Result<bool, DbError> {
    let inserted = diesel::insert_into(query_log::table)
        .values(entry)
        .on_conflict(query_log::turn_id)
        .do_nothing()
        .execute(conn)
        .await?;
    Ok(inserted == 1)
}
