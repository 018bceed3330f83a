//! `users`: the people who may sign in, with their role and argon2id password hash.

use chrono::{DateTime, Utc};
use diesel::prelude::*;
use diesel_async::{AsyncPgConnection, RunQueryDsl};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;
use uuid::Uuid;

use super::DbError;

use super::schema::users;
use crate::username;

/// What a user may do: an admin also manages documents and people.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    Admin,
    Member,
}

impl Role {
    /// The word stored in `users.role`.
    pub fn as_str(self) -> &'static str {
        match self {
            Role::Admin => "admin",
            Role::Member => "member",
        }
    }

    /// The role a stored word names; anything else (the table's check forbids it) is a
    /// member, who may do least.
    pub fn from_stored(word: &str) -> Role {
        if word == Role::Admin.as_str() {
            Role::Admin
        } else {
            Role::Member
        }
    }
}

/// A user row.
#[derive(Debug, Clone, PartialEq, Queryable, Selectable)]
#[diesel(table_name = users, check_for_backend(diesel::pg::Pg))]
pub struct UserRow {
    pub id: Uuid,
    pub username: String,
    pub display_name: String,
    pub password_hash: Option<String>,
    pub role: String,
    pub disabled: bool,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
}

impl UserRow {
    pub fn role(&self) -> Role {
        Role::from_stored(&self.role)
    }
}

/// A user to create.
#[derive(Debug, Clone, Insertable)]
#[diesel(table_name = users)]
pub struct NewUser<'a> {
    id: Uuid,
    username: &'a str,
    /// [`username::key`] of `username`, which the unique index holds.
    username_key: String,
    display_name: &'a str,
    password_hash: Option<&'a str>,
    role: &'a str,
}

impl<'a> NewUser<'a> {
    /// A new user (with a new id) named `username`.
    pub fn new(
        username: &'a str,
        display_name: &'a str,
        password_hash: Option<&'a str>,
        role: Role,
    ) -> NewUser<'a> {
        NewUser {
            id: Uuid::new_v4(),
            username,
            username_key: username::key(username),
            display_name,
            password_hash,
            role: role.as_str(),
        }
    }
}

/// What an admin may change about a user; `None` leaves it as it is.
#[derive(Debug, Clone, Default, AsChangeset)]
#[diesel(table_name = users)]
pub struct UserChanges {
    pub display_name: Option<String>,
    pub password_hash: Option<String>,
    pub role: Option<String>,
    pub disabled: Option<bool>,
}

/// Stores `user`; `Ok(None)` when its username (in any case) is taken.
pub async fn insert(
    conn: &mut AsyncPgConnection,
    user: &NewUser<'_>,
) -> Result<Option<UserRow>, DbError> {
    diesel::insert_into(users::table)
        .values(user)
        .on_conflict_do_nothing()
        .returning(UserRow::as_returning())
        .get_result(conn)
        .await
        .optional()
        .map_err(DbError::from)
}

/// Every user, by username.
pub async fn list(conn: &mut AsyncPgConnection) -> Result<Vec<UserRow>, DbError> {
    users::table
        .select(UserRow::as_select())
        .order(users::username)
        .load(conn)
        .await
        .map_err(DbError::from)
}

pub async fn find(conn: &mut AsyncPgConnection, id: Uuid) -> Result<Option<UserRow>, DbError> {
    users::table
        .find(id)
        .select(UserRow::as_select())
        .get_result(conn)
        .await
        .optional()
        .map_err(DbError::from)
}

/// The user of `name`, in any case (by [`username::key`]).
pub async fn find_by_username(
    conn: &mut AsyncPgConnection,
    name: &str,
) -> Result<Option<UserRow>, DbError> {
    users::table
        .filter(users::username_key.eq(username::key(name)))
        .select(UserRow::as_select())
        .get_result(conn)
        .await
        .optional()
        .map_err(DbError::from)
}

/// Applies `changes` to user `id` (and its `updated_at`); the row as it is now, `None`
/// when there is no such user.
pub async fn update(
    conn: &mut AsyncPgConnection,
    id: Uuid,
    changes: &UserChanges,
) -> Result<Option<UserRow>, DbError> {
    diesel::update(users::table.find(id))
        .set((changes, users::updated_at.eq(diesel::dsl::now)))
        .returning(UserRow::as_returning())
        .get_result(conn)
        .await
        .optional()
        .map_err(DbError::from)
}

/// Removes user `id` (their sessions, keys and memberships go with them); whether
/// there was one.
pub async fn delete(conn: &mut AsyncPgConnection, id: Uuid) -> Result<bool, DbError> {
    let deleted = diesel::delete(users::table.find(id)).execute(conn).await?;
    Ok(deleted > 0)
}

/// The ids of the admins who are not disabled, their rows locked until the
/// transaction ends (so two requests cannot each remove one of the last two).
pub async fn lock_active_admins(conn: &mut AsyncPgConnection) -> Result<Vec<Uuid>, DbError> {
    users::table
        .filter(users::role.eq(Role::Admin.as_str()))
        .filter(users::disabled.eq(false))
        .select(users::id)
        .for_update()
        .load(conn)
        .await
        .map_err(DbError::from)
}

/// How many users there are.
pub async fn count(conn: &mut AsyncPgConnection) -> Result<i64, DbError> {
    users::table
        .count()
        .get_result(conn)
        .await
        .map_err(DbError::from)
}
