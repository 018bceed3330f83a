//! What each caller may read and write (docs/PROTOCOL.md, "Collections"): the one place
//! that decides it. The collections, their grants and the groups' members are held in memory
//! ([`AccessMap`]), read again whenever `NOTIFY bor_access` says one of them changed, on
//! every instance. The door (`auth::Accounts::decide`) asks it once per request and puts the
//! answer ([`Readable`]) in the [`Caller`](super::Caller); routes, turns and tools
//! only ever look there.
//!
//! A member reads the collections granted to them or to a group they are in (the
//! built-in group `everyone` holds every user); `write` also adds and deletes
//! documents. Admins read and write every collection.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::{Arc, RwLock};

use futures_util::FutureExt;
use futures_util::future::BoxFuture;
use uuid::Uuid;

use crate::db::collections::DEFAULT_COLLECTION;
use crate::db::grants::{self, Access, Grant, Grantee};
use crate::db::users::Role;
use crate::db::{DbError, DbPool, collections, groups};
use crate::knowledge::index::CollectionFilter;
use crate::notify::{Follower, RETRY_DELAY};

/// The channel the grants migration's triggers notify.
pub const CHANNEL: &str = "bor_access";

/// The collections, grants and memberships as last read.
#[derive(Debug)]
struct Snapshot {
    /// Every collection's name, by id.
    collections: BTreeMap<i64, String>,
    grants: Vec<Grant>,
    /// The groups each user is a member of.
    groups_of: HashMap<Uuid, HashSet<Uuid>>,
    /// The built-in group of every user.
    everyone: Option<Uuid>,
    /// What every admin reads, made once per snapshot rather than per request.
    admin: Readable,
}

impl Snapshot {
    async fn read(pool: &DbPool) -> Result<Snapshot, DbError> {
        let mut conn = pool.get().await?;
        let collections = collections::all(&mut conn)
            .await?
            .into_iter()
            .map(|collection| (collection.id, collection.name))
            .collect();
        let grants = grants::all(&mut conn).await?;
        let mut groups_of: HashMap<Uuid, HashSet<Uuid>> = HashMap::new();
        for (group, user) in groups::member_ids(&mut conn).await? {
            groups_of.entry(user).or_default().insert(group);
        }
        let everyone = groups::by_name(&mut conn, groups::EVERYONE)
            .await?
            .map(|group| group.id);
        Ok(Snapshot::new(collections, grants, groups_of, everyone))
    }

    fn new(
        collections: BTreeMap<i64, String>,
        grants: Vec<Grant>,
        groups_of: HashMap<Uuid, HashSet<Uuid>>,
        everyone: Option<Uuid>,
    ) -> Snapshot {
        let every = collections
            .iter()
            .map(|(id, name)| (*id, (name.clone(), Access::Write)))
            .collect();
        let admin = Readable {
            every: true,
            collections: Arc::new(every),
        };
        Snapshot {
            collections,
            grants,
            groups_of,
            everyone,
            admin,
        }
    }

    fn readable(&self, user: Option<Uuid>, role: Role) -> Readable {
        if role == Role::Admin {
            return self.admin.clone();
        }
        let no_groups = HashSet::new();
        let groups = user
            .and_then(|user| self.groups_of.get(&user))
            .unwrap_or(&no_groups);
        let mut granted: BTreeMap<i64, (String, Access)> = BTreeMap::new();
        for grant in &self.grants {
            let applies = match grant.grantee {
                Grantee::User(id) => Some(id) == user,
                Grantee::Group(id) => Some(id) == self.everyone || groups.contains(&id),
            };
            let Some(name) = self.collections.get(&grant.collection_id) else {
                continue;
            };
            if applies {
                let entry = granted
                    .entry(grant.collection_id)
                    .or_insert_with(|| (name.clone(), grant.access));
                entry.1 = entry.1.max(grant.access);
            }
        }
        Readable {
            every: false,
            collections: Arc::new(granted),
        }
    }
}

/// The collections a caller may read, each with their access; cheap to clone.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Readable {
    /// An admin: every collection, also one made a moment ago on another instance.
    every: bool,
    /// (name, access) by collection id.
    collections: Arc<BTreeMap<i64, (String, Access)>>,
}

/// What the access rules refuse, in their own words; each HTTP edge turns it into its
/// answer in one place (`http::error` for `/api`, and `/v1` in its shape from there).
/// Something a caller cannot read is absent to them: the refusal is the very one for
/// something that does not exist.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refusal {
    /// No such collection, or one the caller cannot read.
    NoCollection(String),
    /// No such conversation, or another person's.
    NoConversation(String),
    /// No such turn, or another person's.
    NoTurn(String),
    /// A collection the caller can read but not write.
    ReadOnly(String),
}

impl Readable {
    /// Every collection, with write access (an admin's).
    pub fn everything() -> Readable {
        Readable {
            every: true,
            collections: Arc::default(),
        }
    }

    /// The caller's access to a collection; `None` when they cannot read it.
    pub fn access_to(&self, collection_id: i64) -> Option<Access> {
        match self.collections.get(&collection_id) {
            Some((_, access)) => Some(*access),
            None if self.every => Some(Access::Write),
            None => None,
        }
    }

    pub fn can_read(&self, collection_id: i64) -> bool {
        self.access_to(collection_id).is_some()
    }

    /// The readable collection called `name`: its id and the caller's access.
    pub fn named(&self, name: &str) -> Option<(i64, Access)> {
        self.collections
            .iter()
            .find(|(_, (known, _))| known == name)
            .map(|(id, (_, access))| (*id, *access))
    }

    /// The collection `name` (`default` when `None`) if the caller may write it.
    pub fn writable(&self, name: Option<&str>) -> Result<i64, Refusal> {
        let name = name.unwrap_or(DEFAULT_COLLECTION);
        match self.named(name) {
            Some((id, Access::Write)) => Ok(id),
            Some((_, Access::Read)) => Err(Refusal::ReadOnly(name.to_owned())),
            None => Err(Refusal::NoCollection(name.to_owned())),
        }
    }

    /// The readable collections: (id, name, access), by name.
    pub fn collections(&self) -> Vec<(i64, &str, Access)> {
        let mut listed: Vec<(i64, &str, Access)> = self
            .collections
            .iter()
            .map(|(id, (name, access))| (*id, name.as_str(), *access))
            .collect();
        listed.sort_by(|a, b| a.1.cmp(b.1));
        listed
    }

    /// Up to `most` readable collections whose names look like `asked` (one holds the
    /// other, or a few letters differ), closest first: what a refusal of `asked` may
    /// suggest. Only readable names, so the answer tells nothing of what exists beyond.
    pub fn names_like(&self, asked: &str, most: usize) -> Vec<&str> {
        let asked = asked.to_lowercase();
        let allowed_edits = (asked.chars().count() / 3).max(2);
        let mut near: Vec<(usize, &str)> = self
            .collections
            .values()
            .filter_map(|(name, _)| {
                let lower = name.to_lowercase();
                let edits = strsim::levenshtein(&asked, &lower);
                let holds = !asked.is_empty() && (lower.contains(&asked) || asked.contains(&lower));
                (edits <= allowed_edits || holds).then_some((edits, name.as_str()))
            })
            .collect();
        near.sort_unstable();
        near.into_iter().take(most).map(|(_, name)| name).collect()
    }

    /// What a search of this caller may see: the collections `named` (each must be
    /// readable), else every readable one. `None` is every collection (an admin who
    /// names none).
    pub fn scope(&self, named: Option<&[String]>) -> Result<Option<CollectionFilter>, Refusal> {
        match named {
            Some(names) => {
                let mut ids = Vec::with_capacity(names.len());
                for name in names {
                    let (id, _) = self
                        .named(name)
                        .ok_or_else(|| Refusal::NoCollection(name.clone()))?;
                    ids.push(id);
                }
                Ok(Some(CollectionFilter::new(ids)))
            }
            None if self.every => Ok(None),
            None => Ok(Some(CollectionFilter::new(
                self.collections.keys().copied(),
            ))),
        }
    }
}

/// The collections, grants and memberships in memory, kept in step with the database.
pub struct AccessMap {
    pool: DbPool,
    snapshot: RwLock<Arc<Snapshot>>,
}

impl AccessMap {
    pub async fn load(pool: DbPool) -> Result<AccessMap, DbError> {
        let snapshot = Snapshot::read(&pool).await?;
        Ok(AccessMap {
            pool,
            snapshot: RwLock::new(Arc::new(snapshot)),
        })
    }

    /// A map of no collection, for the tests of what reads it.
    #[cfg(test)]
    pub(super) fn empty(pool: DbPool) -> AccessMap {
        let snapshot = Snapshot::new(BTreeMap::new(), Vec::new(), HashMap::new(), None);
        AccessMap {
            pool,
            snapshot: RwLock::new(Arc::new(snapshot)),
        }
    }

    /// What a user of `role` may read (`user`: `None` for the service token).
    pub fn readable(&self, user: Option<Uuid>, role: Role) -> Readable {
        let snapshot = Arc::clone(
            &self
                .snapshot
                .read()
                .unwrap_or_else(std::sync::PoisonError::into_inner),
        );
        snapshot.readable(user, role)
    }

    /// Reads everything again now: after this instance changed a grant, so that its
    /// next request sees the change without waiting for the notification.
    pub async fn refresh(&self) -> Result<(), DbError> {
        let snapshot = Snapshot::read(&self.pool).await?;
        *self
            .snapshot
            .write()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = Arc::new(snapshot);
        Ok(())
    }

    async fn refresh_until_done(&self) {
        while let Err(error) = self.refresh().await {
            tracing::warn!(error = %bor_actors::error_chain(&error), "the collections' grants could not be read again; retrying");
            tokio::time::sleep(RETRY_DELAY).await;
        }
    }
}

impl Follower for AccessMap {
    fn channel(&self) -> &'static str {
        CHANNEL
    }

    fn apply<'a>(&'a self, _: &'a [String]) -> BoxFuture<'a, ()> {
        self.refresh_until_done().boxed()
    }

    fn reload(&self) -> BoxFuture<'_, ()> {
        self.refresh_until_done().boxed()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn snapshot() -> Snapshot {
        let staff = Uuid::from_u128(10);
        let everyone = Uuid::from_u128(11);
        let ann = Uuid::from_u128(1);
        Snapshot::new(
            BTreeMap::from([
                (1, "default".to_owned()),
                (2, "hr".to_owned()),
                (3, "legal".to_owned()),
            ]),
            vec![
                Grant {
                    collection_id: 1,
                    grantee: Grantee::Group(everyone),
                    access: Access::Read,
                },
                Grant {
                    collection_id: 2,
                    grantee: Grantee::Group(staff),
                    access: Access::Read,
                },
                Grant {
                    collection_id: 2,
                    grantee: Grantee::User(ann),
                    access: Access::Write,
                },
            ],
            HashMap::from([(Uuid::from_u128(2), HashSet::from([staff]))]),
            Some(everyone),
        )
    }

    #[test]
    fn members_read_what_is_granted_to_them_their_groups_and_everyone() {
        let snapshot = snapshot();
        let ann = snapshot.readable(Some(Uuid::from_u128(1)), Role::Member);
        assert_eq!(ann.access_to(1), Some(Access::Read));
        assert_eq!(ann.access_to(2), Some(Access::Write));
        assert_eq!(ann.access_to(3), None);
        let bob = snapshot.readable(Some(Uuid::from_u128(2)), Role::Member);
        assert_eq!(bob.access_to(2), Some(Access::Read));
        let carol = snapshot.readable(Some(Uuid::from_u128(3)), Role::Member);
        assert_eq!(
            carol.collections(),
            [(1, "default", Access::Read)],
            "everyone's grant only"
        );
        assert_eq!(
            carol.scope(None),
            Ok(Some(CollectionFilter::new([1]))),
            "a member's search sees their collections only"
        );
        assert_eq!(
            carol.scope(Some(&["hr".to_owned()])),
            Err(Refusal::NoCollection("hr".to_owned()))
        );
        assert_eq!(
            carol.scope(Some(&["absent".to_owned()])),
            Err(Refusal::NoCollection("absent".to_owned()))
        );
    }

    #[test]
    fn names_like_a_wrong_one_are_readable_and_close() {
        let snapshot = snapshot();
        let ann = snapshot.readable(Some(Uuid::from_u128(1)), Role::Member);
        assert_eq!(ann.names_like("defualt", 5), ["default"]);
        assert_eq!(ann.names_like("HR", 5), ["hr"]);
        assert_eq!(ann.names_like("hr-team", 5), ["hr"], "one holds the other");
        assert!(ann.names_like("legal", 5).is_empty(), "not readable");
        assert!(ann.names_like("nosuch", 5).is_empty());
        let admin = snapshot.readable(None, Role::Admin);
        assert_eq!(admin.names_like("legl", 5), ["legal"]);
        assert_eq!(admin.names_like("h", 1), ["hr"]);
    }

    #[test]
    fn admins_read_and_write_every_collection() {
        let admin = snapshot().readable(Some(Uuid::from_u128(4)), Role::Admin);
        assert_eq!(admin.access_to(3), Some(Access::Write));
        assert_eq!(admin.access_to(99), Some(Access::Write), "made elsewhere");
        assert_eq!(admin.scope(None), Ok(None));
        assert_eq!(
            admin.scope(Some(&["legal".to_owned(), "hr".to_owned()])),
            Ok(Some(CollectionFilter::new([2, 3])))
        );
    }
}
