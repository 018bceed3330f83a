//! `watched_files`: what the watcher last did with each file of the folders it watches,
//! for `bor check` (and whoever asks) to show.

use diesel::prelude::*;
use diesel_async::{AsyncPgConnection, RunQueryDsl};

use super::DbError;
use super::schema::watched_files;

/// What the watcher did with a file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FileState {
    Imported,
    /// Not stored, for the reason recorded with it.
    Skipped,
    /// Its document was removed: the file is gone.
    Removed,
}

impl FileState {
    pub fn as_str(self) -> &'static str {
        match self {
            FileState::Imported => "imported",
            FileState::Skipped => "skipped",
            FileState::Removed => "removed",
        }
    }
}

/// Records the state of the file at `path`.
pub async fn record(
    conn: &mut AsyncPgConnection,
    path: &str,
    state: FileState,
    reason: Option<&str>,
) -> Result<(), DbError> {
    let now = diesel::dsl::now;
    diesel::insert_into(watched_files::table)
        .values((
            watched_files::path.eq(path),
            watched_files::state.eq(state.as_str()),
            watched_files::reason.eq(reason),
            watched_files::updated_at.eq(now),
        ))
        .on_conflict(watched_files::path)
        .do_update()
        .set((
            watched_files::state.eq(state.as_str()),
            watched_files::reason.eq(reason),
            watched_files::updated_at.eq(now),
        ))
        .execute(conn)
        .await?;
    Ok(())
}

/// Records as removed the files at `path` or inside it that were recorded otherwise (a
/// skipped file deleted, say): each gone file reads `removed`.
pub async fn mark_removed(conn: &mut AsyncPgConnection, path: &str) -> Result<(), DbError> {
    let inside = format!("{}/%", super::documents::escape_like(path));
    diesel::update(
        watched_files::table
            .filter(
                watched_files::path
                    .eq(path)
                    .or(watched_files::path.like(inside).escape('\\')),
            )
            .filter(watched_files::state.ne(FileState::Removed.as_str())),
    )
    .set((
        watched_files::state.eq(FileState::Removed.as_str()),
        watched_files::reason.eq(None::<String>),
        watched_files::updated_at.eq(diesel::dsl::now),
    ))
    .execute(conn)
    .await?;
    Ok(())
}

/// How many files are in each state, by state name.
pub async fn counts(conn: &mut AsyncPgConnection) -> Result<Vec<(String, i64)>, DbError> {
    Ok(watched_files::table
        .group_by(watched_files::state)
        .select((watched_files::state, diesel::dsl::count_star()))
        .order(watched_files::state)
        .load(conn)
        .await?)
}

/// The files skipped, with why, most recent first, at most `limit`.
pub async fn skipped(
    conn: &mut AsyncPgConnection,
    limit: i64,
) -> Result<Vec<(String, Option<String>)>, DbError> {
    Ok(watched_files::table
        .filter(watched_files::state.eq(FileState::Skipped.as_str()))
        .select((watched_files::path, watched_files::reason))
        .order(watched_files::updated_at.desc())
        .limit(limit)
        .load(conn)
        .await?)
}

/// The state recorded for `path`, with its reason.
pub async fn state_of(
    conn: &mut AsyncPgConnection,
    path: &str,
) -> Result<Option<(String, Option<String>)>, DbError> {
    Ok(watched_files::table
        .find(path)
        .select((watched_files::state, watched_files::reason))
        .first(conn)
        .await
        .optional()?)
}
