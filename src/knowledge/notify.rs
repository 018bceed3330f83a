//! Keeping every instance's vector index in step with the database.
//!
//! Triggers on `documents` and `chunks` announce every change on the PostgreSQL channel
//! [`CHANNEL`], with the document id as payload (`reload` after a TRUNCATE); the
//! instance's listener ([`crate::notify`]) hands them to [`IndexFollower`], which reads
//! the changed documents again.

use std::collections::BTreeSet;
use std::sync::Arc;

use futures_util::FutureExt;
use futures_util::future::BoxFuture;

use super::live_index::LiveIndex;
use crate::notify::{Follower, RETRY_DELAY};

/// The channel the triggers notify.
pub const CHANNEL: &str = "bor_knowledge";

/// A change announced on [`CHANNEL`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Change {
    Document(i64),
    /// Anything may have changed.
    Reload,
}

impl Change {
    pub fn parse(payload: &str) -> Option<Change> {
        match payload {
            "reload" => Some(Change::Reload),
            id => id.parse().ok().map(Change::Document),
        }
    }
}

/// Applies the changes heard on [`CHANNEL`] to an instance's index.
pub struct IndexFollower(pub Arc<LiveIndex>);

impl Follower for IndexFollower {
    fn channel(&self) -> &'static str {
        CHANNEL
    }

    fn apply<'a>(&'a self, payloads: &'a [String]) -> BoxFuture<'a, ()> {
        let batch: Vec<Change> = payloads
            .iter()
            .filter_map(|payload| {
                let change = Change::parse(payload);
                if change.is_none() {
                    tracing::warn!(payload, "unknown knowledge change");
                }
                change
            })
            .collect();
        async move { apply(&self.0, &batch).await }.boxed()
    }

    fn reload(&self) -> BoxFuture<'_, ()> {
        reload_until_done(&self.0).boxed()
    }
}

async fn apply(index: &LiveIndex, batch: &[Change]) {
    if batch.is_empty() {
        return;
    }
    let result = if batch.contains(&Change::Reload) {
        index.reload(None).await.map(|_| ())
    } else {
        let documents: BTreeSet<i64> = batch
            .iter()
            .filter_map(|change| match change {
                Change::Document(id) => Some(*id),
                Change::Reload => None,
            })
            .collect();
        let documents: Vec<i64> = documents.into_iter().collect();
        index.refresh_documents(&documents).await
    };
    if let Err(error) = result {
        tracing::warn!(error = %bor_actors::error_chain(&error), "the vector index could not be updated; reloading it");
        reload_until_done(index).await;
    }
}

async fn reload_until_done(index: &LiveIndex) {
    while let Err(error) = index.reload(None).await {
        tracing::warn!(error = %bor_actors::error_chain(&error), "the vector index could not be reloaded; retrying");
        tokio::time::sleep(RETRY_DELAY).await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn payloads_are_document_ids_or_reload() {
        assert_eq!(Change::parse("42"), Some(Change::Document(42)));
        assert_eq!(Change::parse("reload"), Some(Change::Reload));
        assert_eq!(Change::parse("x"), None);
    }
}
