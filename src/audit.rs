//! The audit trail (docs/PROTOCOL.md, "Audit trail"): who signed in or failed to, and
//! who made or revoked a key, changed a user, a group, a collection's grants, or added
//! or deleted a document — when, and from which address. Rows are appended, never
//! changed (the table refuses an `UPDATE`); the only delete is the pruning of rows
//! older than `BOR_AUDIT_DAYS`. No secret goes in: an entry is built from names, ids
//! and counts only, and a failed sign-in names the username tried only when such a
//! user exists (a password typed into the username box stays out).

use std::net::IpAddr;

use actix_web::{HttpMessage, HttpRequest};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;
use uuid::Uuid;

use crate::auth::client_address::ClientAddress;
use crate::auth::{Caller, Via};
use crate::db::DbPool;
use crate::db::audit::NewAuditEntry;

/// What happened.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum Action {
    SignedIn,
    SignInFailed,
    PasswordChanged,
    KeyCreated,
    KeyRevoked,
    UserCreated,
    UserChanged,
    UserDeleted,
    GroupCreated,
    GroupDeleted,
    GroupMembersSet,
    CollectionCreated,
    CollectionChanged,
    CollectionDeleted,
    GrantsSet,
    DocumentAdded,
    DocumentDeleted,
    #[serde(rename = "oauth_client_registered")]
    OAuthClientRegistered,
    #[serde(rename = "oauth_grant_allowed")]
    OAuthGrantAllowed,
    #[serde(rename = "oauth_grant_denied")]
    OAuthGrantDenied,
    #[serde(rename = "oauth_tokens_issued")]
    OAuthTokensIssued,
    #[serde(rename = "oauth_tokens_revoked")]
    OAuthTokensRevoked,
    #[serde(rename = "oauth_refresh_reused")]
    OAuthRefreshReused,
    LimitSet,
    LimitRemoved,
}

impl Action {
    pub const ALL: [Action; 25] = [
        Action::SignedIn,
        Action::SignInFailed,
        Action::PasswordChanged,
        Action::KeyCreated,
        Action::KeyRevoked,
        Action::UserCreated,
        Action::UserChanged,
        Action::UserDeleted,
        Action::GroupCreated,
        Action::GroupDeleted,
        Action::GroupMembersSet,
        Action::CollectionCreated,
        Action::CollectionChanged,
        Action::CollectionDeleted,
        Action::GrantsSet,
        Action::DocumentAdded,
        Action::DocumentDeleted,
        Action::OAuthClientRegistered,
        Action::OAuthGrantAllowed,
        Action::OAuthGrantDenied,
        Action::OAuthTokensIssued,
        Action::OAuthTokensRevoked,
        Action::OAuthRefreshReused,
        Action::LimitSet,
        Action::LimitRemoved,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Action::SignedIn => "signed_in",
            Action::SignInFailed => "sign_in_failed",
            Action::PasswordChanged => "password_changed",
            Action::KeyCreated => "key_created",
            Action::KeyRevoked => "key_revoked",
            Action::UserCreated => "user_created",
            Action::UserChanged => "user_changed",
            Action::UserDeleted => "user_deleted",
            Action::GroupCreated => "group_created",
            Action::GroupDeleted => "group_deleted",
            Action::GroupMembersSet => "group_members_set",
            Action::CollectionCreated => "collection_created",
            Action::CollectionChanged => "collection_changed",
            Action::CollectionDeleted => "collection_deleted",
            Action::GrantsSet => "grants_set",
            Action::DocumentAdded => "document_added",
            Action::DocumentDeleted => "document_deleted",
            Action::OAuthClientRegistered => "oauth_client_registered",
            Action::OAuthGrantAllowed => "oauth_grant_allowed",
            Action::OAuthGrantDenied => "oauth_grant_denied",
            Action::OAuthTokensIssued => "oauth_tokens_issued",
            Action::OAuthTokensRevoked => "oauth_tokens_revoked",
            Action::OAuthRefreshReused => "oauth_refresh_reused",
            Action::LimitSet => "limit_set",
            Action::LimitRemoved => "limit_removed",
        }
    }
}

/// Who did it, as the trail names them.
#[derive(Debug, Clone, PartialEq)]
pub struct Actor {
    /// Their user row, when they have one (kept as it was: the trail outlives the user).
    pub user_id: Option<Uuid>,
    pub name: String,
}

impl Actor {
    /// The caller the request was decided to be: a user, the service token, or (no
    /// caller) the admin token of `off` mode.
    pub fn of(request: &HttpRequest) -> Actor {
        match request.extensions().get::<Caller>() {
            Some(caller) if caller.via == Via::ServiceToken => Actor::named("service token"),
            Some(caller) => Actor::user(caller.user_id, &caller.username),
            None => Actor::named("admin token"),
        }
    }

    pub fn user(id: Uuid, username: &str) -> Actor {
        Actor {
            user_id: Some(id),
            name: username.to_owned(),
        }
    }

    /// Someone or something without a user row.
    pub fn named(name: &str) -> Actor {
        Actor {
            user_id: None,
            name: name.to_owned(),
        }
    }
}

/// One entry, built where the thing happened.
#[derive(Debug, Clone, PartialEq)]
pub struct Event {
    pub action: Action,
    pub actor: Actor,
    pub address: Option<IpAddr>,
    /// What it was done to: a username, a key's name, a collection or group, a document.
    pub target: String,
    /// Names, ids and counts that say more; never a secret.
    pub details: serde_json::Value,
}

impl Event {
    /// `action` by the request's caller, from the request's address.
    pub fn of(request: &HttpRequest, action: Action, target: impl Into<String>) -> Event {
        Event {
            action,
            actor: Actor::of(request),
            // As the request id's middleware found it (the peer for a request without it).
            address: request
                .extensions()
                .get::<ClientAddress>()
                .map(|ClientAddress(found)| *found)
                .or_else(|| request.peer_addr().map(|peer| peer.ip())),
            target: target.into(),
            details: serde_json::Value::Object(Default::default()),
        }
    }

    /// `action` by `bor user` on the server's own command line.
    pub fn of_command_line(action: Action, target: impl Into<String>) -> Event {
        Event {
            action,
            actor: Actor::named("command line"),
            address: None,
            target: target.into(),
            details: serde_json::Value::Object(Default::default()),
        }
    }

    pub fn by(mut self, actor: Actor) -> Event {
        self.actor = actor;
        self
    }

    pub fn with(mut self, details: serde_json::Value) -> Event {
        self.details = details;
        self
    }
}

/// Appends `event` to the trail. A failure is logged, not returned: what was done is
/// done, and the person who did it gets its answer.
pub async fn record(pool: &DbPool, event: Event) {
    let entry = NewAuditEntry {
        action: event.action.as_str(),
        actor_id: event.actor.user_id,
        actor: &event.actor.name,
        address: event.address.map(|address| address.to_string()),
        target: &event.target,
        details: &event.details,
    };
    let written = match pool.get().await {
        Ok(mut conn) => crate::db::audit::insert(&mut conn, &entry).await,
        Err(error) => Err(error),
    };
    if let Err(error) = written {
        tracing::error!(
            action = event.action.as_str(),
            error = %bor_actors::error_chain(&error),
            "an audit entry could not be written"
        );
    }
}

/// How often the pruning runs.
const PRUNE_EVERY: std::time::Duration = std::time::Duration::from_secs(3600);

/// Deletes, now and then every hour, the entries older than `days` days.
pub async fn prune_forever(pool: DbPool, days: u32) {
    let mut every = tokio::time::interval(PRUNE_EVERY);
    loop {
        every.tick().await;
        let pruned = match pool.get().await {
            Ok(mut conn) => crate::db::audit::prune(&mut conn, days).await,
            Err(error) => Err(error),
        };
        match pruned {
            Ok(0) => {}
            Ok(rows) => tracing::info!(rows, days, "audit entries past their time pruned"),
            Err(error) => tracing::warn!(
                error = %bor_actors::error_chain(&error),
                "pruning the audit trail failed; the next hour tries again"
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_words_are_the_wire_words_and_all_lists_every_action() {
        let words: std::collections::BTreeSet<&str> =
            Action::ALL.iter().map(|action| action.as_str()).collect();
        assert_eq!(words.len(), Action::ALL.len());
        for action in Action::ALL {
            assert_eq!(
                serde_json::to_value(action).ok(),
                Some(serde_json::json!(action.as_str()))
            );
        }
    }
}
