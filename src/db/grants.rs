//! `collection_grants`: who may read or write a collection, a user or a group at a time.

use diesel::prelude::*;
use diesel_async::{AsyncConnection, AsyncPgConnection, RunQueryDsl};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;
use uuid::Uuid;

use super::DbError;
use super::schema::{collection_grants, groups, users};
use super::words::{Vocabulary, Word};

/// What a grant allows: `write` also adds and deletes the collection's documents.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, ToSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum Access {
    Read,
    Write,
}

impl Vocabulary for Access {
    fn all() -> &'static [Self] {
        &[Access::Read, Access::Write]
    }
    fn word(self) -> &'static str {
        match self {
            Access::Read => "read",
            Access::Write => "write",
        }
    }
}

impl From<Word<Access>> for Access {
    fn from(word: Word<Access>) -> Self {
        word.0
    }
}

/// Who a grant is to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Grantee {
    User(Uuid),
    Group(Uuid),
}

/// A grant as stored.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Grant {
    pub collection_id: i64,
    pub grantee: Grantee,
    pub access: Access,
}

#[derive(Queryable)]
struct GrantRow {
    collection_id: i64,
    user_id: Option<Uuid>,
    group_id: Option<Uuid>,
    #[diesel(deserialize_as = Word<Access>)]
    access: Access,
}

impl GrantRow {
    /// `None` for a row the table's check forbids (neither a user nor a group).
    fn grant(self) -> Option<Grant> {
        let grantee = match (self.user_id, self.group_id) {
            (Some(user), _) => Grantee::User(user),
            (None, Some(group)) => Grantee::Group(group),
            (None, None) => return None,
        };
        Some(Grant {
            collection_id: self.collection_id,
            grantee,
            access: self.access,
        })
    }
}

/// Every grant.
pub async fn all(conn: &mut AsyncPgConnection) -> Result<Vec<Grant>, DbError> {
    let rows: Vec<GrantRow> = collection_grants::table
        .select((
            collection_grants::collection_id,
            collection_grants::user_id,
            collection_grants::group_id,
            collection_grants::access,
        ))
        .order(collection_grants::id)
        .load(conn)
        .await?;
    Ok(rows.into_iter().filter_map(GrantRow::grant).collect())
}

/// A grant as the admin API shows it: the user's or the group's name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NamedGrant {
    pub collection_id: i64,
    pub user: Option<String>,
    pub group: Option<String>,
    pub access: Access,
}

/// Every grant with the names of its users and groups, users first, by name.
pub async fn all_named(conn: &mut AsyncPgConnection) -> Result<Vec<NamedGrant>, DbError> {
    let to_users: Vec<(i64, String, Word<Access>)> = collection_grants::table
        .inner_join(users::table)
        .select((
            collection_grants::collection_id,
            users::username,
            collection_grants::access,
        ))
        .order(users::username)
        .load(conn)
        .await?;
    let to_groups: Vec<(i64, String, Word<Access>)> = collection_grants::table
        .inner_join(groups::table)
        .select((
            collection_grants::collection_id,
            groups::name,
            collection_grants::access,
        ))
        .order(groups::name)
        .load(conn)
        .await?;
    let users = to_users
        .into_iter()
        .map(|(collection_id, user, Word(access))| NamedGrant {
            collection_id,
            user: Some(user),
            group: None,
            access,
        });
    let groups = to_groups
        .into_iter()
        .map(|(collection_id, group, Word(access))| NamedGrant {
            collection_id,
            user: None,
            group: Some(group),
            access,
        });
    Ok(users.chain(groups).collect())
}

/// Replaces the grants of a collection by `grants`, in one transaction.
pub async fn replace(
    conn: &mut AsyncPgConnection,
    collection_id: i64,
    grants: &[(Grantee, Access)],
) -> Result<(), DbError> {
    let rows: Vec<_> = grants
        .iter()
        .map(|(grantee, access)| {
            let (user, group) = match *grantee {
                Grantee::User(user) => (Some(user), None),
                Grantee::Group(group) => (None, Some(group)),
            };
            (
                collection_grants::collection_id.eq(collection_id),
                collection_grants::user_id.eq(user),
                collection_grants::group_id.eq(group),
                collection_grants::access.eq(Word(*access)),
            )
        })
        .collect();
    conn.transaction::<_, DbError, _>(async |conn| {
        diesel::delete(
            collection_grants::table.filter(collection_grants::collection_id.eq(collection_id)),
        )
        .execute(conn)
        .await?;
        if !rows.is_empty() {
            diesel::insert_into(collection_grants::table)
                .values(rows)
                .execute(conn)
                .await?;
        }
        Ok(())
    })
    .await
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::db::collections::{self, DEFAULT_COLLECTION};
    use crate::db::groups::{self, EVERYONE};
    use crate::testing::TestDatabase;

    #[tokio::test]
    async fn default_is_readable_by_everyone_and_grants_are_replaced_whole() {
        let db = TestDatabase::migrated().await;
        let mut conn = db.pool().get().await.unwrap();
        let default = collections::by_name(&mut conn, DEFAULT_COLLECTION)
            .await
            .unwrap()
            .unwrap();
        let everyone = groups::by_name(&mut conn, EVERYONE).await.unwrap().unwrap();
        let expected = Grant {
            collection_id: default.id,
            grantee: Grantee::Group(everyone.id),
            access: Access::Read,
        };
        assert_eq!(all(&mut conn).await.unwrap(), [expected]);

        let hr = collections::create(&mut conn, "hr", "")
            .await
            .unwrap()
            .unwrap();
        let staff = groups::create(&mut conn, "staff").await.unwrap().unwrap();
        replace(
            &mut conn,
            hr.id,
            &[(Grantee::Group(staff.id), Access::Write)],
        )
        .await
        .unwrap();
        let named = all_named(&mut conn).await.unwrap();
        assert!(named.contains(&NamedGrant {
            collection_id: hr.id,
            user: None,
            group: Some("staff".to_owned()),
            access: Access::Write,
        }));
        replace(&mut conn, hr.id, &[]).await.unwrap();
        assert_eq!(all(&mut conn).await.unwrap(), [expected]);

        // A `default` made again is readable by everyone again.
        collections::delete(&mut conn, DEFAULT_COLLECTION)
            .await
            .unwrap();
        let again = collections::get_or_create(&mut conn, DEFAULT_COLLECTION)
            .await
            .unwrap();
        let grants = all(&mut conn).await.unwrap();
        assert_eq!(grants.len(), 1);
        assert_eq!(grants[0].collection_id, again.id);
        assert_eq!(grants[0].grantee, Grantee::Group(everyone.id));
    }
}
