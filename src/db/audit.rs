//! `audit_log`: the audit trail's rows (`crate::audit` builds them), appended, listed
//! newest first, and pruned past their time.

use chrono::{DateTime, Utc};
use diesel::prelude::*;
use diesel_async::{AsyncPgConnection, RunQueryDsl};
use serde::Serialize;
use utoipa::ToSchema;
use uuid::Uuid;

use super::DbError;
use super::schema::audit_log;

#[derive(Debug, Clone, Insertable)]
#[diesel(table_name = audit_log)]
pub struct NewAuditEntry<'a> {
    pub action: &'a str,
    pub actor_id: Option<Uuid>,
    pub actor: &'a str,
    pub address: Option<String>,
    pub target: &'a str,
    pub details: &'a serde_json::Value,
}

/// An entry as `GET /api/admin/audit` lists it.
#[derive(Debug, Clone, PartialEq, Queryable, Selectable, Serialize, ToSchema)]
#[diesel(table_name = audit_log, check_for_backend(diesel::pg::Pg))]
pub struct AuditEntry {
    pub id: i64,
    pub at: DateTime<Utc>,
    /// What happened (`signed_in`, `key_created`, …).
    pub action: String,
    /// The actor's user id, when they have one.
    pub actor_id: Option<Uuid>,
    /// The actor's username (or `service token`, `admin token`, `command line`).
    pub actor: String,
    /// The client's address, as bor saw it.
    pub address: Option<String>,
    /// What it was done to.
    pub target: String,
    #[schema(value_type = Object)]
    pub details: serde_json::Value,
}

pub async fn insert(
    conn: &mut AsyncPgConnection,
    entry: &NewAuditEntry<'_>,
) -> Result<(), DbError> {
    diesel::insert_into(audit_log::table)
        .values(entry)
        .execute(conn)
        .await?;
    Ok(())
}

/// Which entries a page lists.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct AuditFilter {
    pub action: Option<String>,
    pub actor: Option<String>,
    pub since: Option<DateTime<Utc>>,
    pub until: Option<DateTime<Utc>>,
    /// Entries with a smaller id only (the previous page's last).
    pub before: Option<i64>,
    pub limit: i64,
}

/// Newest first.
pub async fn list(
    conn: &mut AsyncPgConnection,
    filter: &AuditFilter,
) -> Result<Vec<AuditEntry>, DbError> {
    let mut query = audit_log::table
        .select(AuditEntry::as_select())
        .order(audit_log::id.desc())
        .limit(filter.limit)
        .into_boxed();
    if let Some(action) = &filter.action {
        query = query.filter(audit_log::action.eq(action));
    }
    if let Some(actor) = &filter.actor {
        query = query.filter(audit_log::actor.eq(actor));
    }
    if let Some(since) = filter.since {
        query = query.filter(audit_log::at.ge(since));
    }
    if let Some(until) = filter.until {
        query = query.filter(audit_log::at.lt(until));
    }
    if let Some(before) = filter.before {
        query = query.filter(audit_log::id.lt(before));
    }
    Ok(query.load(conn).await?)
}

/// Deletes the entries older than `days` days; how many.
pub async fn prune(conn: &mut AsyncPgConnection, days: u32) -> Result<usize, DbError> {
    let cutoff = Utc::now() - chrono::TimeDelta::days(i64::from(days));
    Ok(
        diesel::delete(audit_log::table.filter(audit_log::at.lt(cutoff)))
            .execute(conn)
            .await?,
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::TestDatabase;

    fn entry<'a>(action: &'a str, details: &'a serde_json::Value) -> NewAuditEntry<'a> {
        NewAuditEntry {
            action,
            actor_id: None,
            actor: "ann",
            address: Some("127.0.0.1".to_owned()),
            target: "kettle",
            details,
        }
    }

    #[tokio::test]
    async fn entries_are_appended_listed_newest_first_and_never_changed() {
        let db = TestDatabase::migrated().await;
        let mut conn = db.connect().await;
        let details = serde_json::json!({"n": 1});
        for action in ["signed_in", "key_created", "signed_in"] {
            insert(&mut conn, &entry(action, &details)).await.unwrap();
        }
        let all = AuditFilter {
            limit: 10,
            ..AuditFilter::default()
        };
        let listed = list(&mut conn, &all).await.unwrap();
        let actions: Vec<&str> = listed.iter().map(|e| e.action.as_str()).collect();
        assert_eq!(actions, ["signed_in", "key_created", "signed_in"]);
        assert!(listed[0].id > listed[1].id);
        let signed_in = AuditFilter {
            action: Some("signed_in".into()),
            before: Some(listed[0].id),
            ..all.clone()
        };
        assert_eq!(list(&mut conn, &signed_in).await.unwrap().len(), 1);

        let changed = diesel::update(audit_log::table)
            .set(audit_log::actor.eq("mallory"))
            .execute(&mut conn)
            .await;
        assert!(changed.is_err(), "an UPDATE is refused");
        assert!(
            list(&mut conn, &all)
                .await
                .unwrap()
                .iter()
                .all(|e| e.actor == "ann")
        );
    }

    #[tokio::test]
    async fn pruning_takes_the_entries_past_their_days_only() {
        let db = TestDatabase::migrated().await;
        let mut conn = db.connect().await;
        let details = serde_json::json!({});
        insert(&mut conn, &entry("signed_in", &details))
            .await
            .unwrap();
        let old = Utc::now() - chrono::TimeDelta::days(40);
        diesel::insert_into(audit_log::table)
            .values((
                audit_log::at.eq(old),
                audit_log::action.eq("signed_in"),
                audit_log::actor.eq("bob"),
            ))
            .execute(&mut conn)
            .await
            .unwrap();
        assert_eq!(prune(&mut conn, 30).await.unwrap(), 1);
        let left = list(
            &mut conn,
            &AuditFilter {
                limit: 10,
                ..AuditFilter::default()
            },
        )
        .await
        .unwrap();
        assert_eq!(left.len(), 1);
        assert_eq!(left[0].actor, "ann");
    }
}
