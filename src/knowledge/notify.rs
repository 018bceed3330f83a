//! Keeping every instance's vector index in step with the database.
//!
//! Triggers on `documents` and `chunks` announce every change on the PostgreSQL channel
//! [`CHANNEL`], with the document id as payload (`reload` after a TRUNCATE). Each bor
//! instance listens on a connection of its own (tokio-postgres, outside the pool) and
//! reads the changed documents again. Notifications sent while that connection is down
//! are lost, so after reconnecting the index is reloaded whole.

use std::collections::BTreeSet;
use std::sync::Arc;
use std::time::Duration;

use futures_util::StreamExt;
use tokio::sync::mpsc;
use tokio_postgres::{AsyncMessage, NoTls};

use super::live_index::LiveIndex;

/// The channel the triggers notify.
pub const CHANNEL: &str = "bor_knowledge";
/// The listening connection's `application_name` (seen in `pg_stat_activity`).
pub const APPLICATION_NAME: &str = "bor-index-listener";
const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);
/// Pause before reconnecting, or before retrying a failed index update.
const RETRY_DELAY: Duration = Duration::from_secs(1);
/// How often the idle connection is checked, so a dead one is noticed.
const HEARTBEAT: Duration = Duration::from_secs(15);

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

/// A connection listening on [`CHANNEL`], with the changes it hears.
pub struct Subscription {
    /// Keeps the connection open; also used for heartbeats.
    client: tokio_postgres::Client,
    changes: mpsc::UnboundedReceiver<Change>,
}

impl Subscription {
    /// Connects and starts listening. Must run inside a tokio runtime.
    pub async fn connect(database_url: &str) -> Result<Subscription, tokio_postgres::Error> {
        let mut config: tokio_postgres::Config = database_url.parse()?;
        config
            .application_name(APPLICATION_NAME)
            .connect_timeout(CONNECT_TIMEOUT);
        let (client, mut connection) = config.connect(NoTls).await?;
        let (sender, changes) = mpsc::unbounded_channel();
        // The connection is driven here; its messages are the notifications. When it
        // ends, `sender` is dropped and the subscription's channel closes.
        tokio::spawn(async move {
            let mut messages = futures_util::stream::poll_fn(|cx| connection.poll_message(cx));
            while let Some(message) = messages.next().await {
                match message {
                    Ok(AsyncMessage::Notification(notification)) => {
                        let Some(change) = Change::parse(notification.payload()) else {
                            tracing::warn!(
                                payload = notification.payload(),
                                "unknown knowledge change"
                            );
                            continue;
                        };
                        if sender.send(change).is_err() {
                            break;
                        }
                    }
                    Ok(_) => {}
                    Err(error) => {
                        tracing::warn!(error = %bor_actors::error_chain(&error), "the index listener's connection failed");
                        break;
                    }
                }
            }
        });
        client.batch_execute(&format!("LISTEN {CHANNEL}")).await?;
        Ok(Subscription { client, changes })
    }

    /// The next batch of changes (all that are waiting, at least one); `None` when the
    /// connection is lost.
    async fn next_batch(&mut self) -> Option<Vec<Change>> {
        loop {
            tokio::select! {
                change = self.changes.recv() => {
                    let mut batch = vec![change?];
                    while let Ok(more) = self.changes.try_recv() {
                        batch.push(more);
                    }
                    return Some(batch);
                }
                () = tokio::time::sleep(HEARTBEAT) => {
                    if let Err(error) = self.client.batch_execute("").await {
                        tracing::warn!(error = %bor_actors::error_chain(&error), "the index listener's connection is dead");
                        return None;
                    }
                }
            }
        }
    }
}

/// Applies the changes `subscription` hears to `index`, forever: reconnects when the
/// connection is lost, then reloads the index whole.
pub async fn follow(database_url: String, mut subscription: Subscription, index: Arc<LiveIndex>) {
    loop {
        while let Some(batch) = subscription.next_batch().await {
            apply(&index, &batch).await;
        }
        subscription = reconnect(&database_url).await;
        reload_until_done(&index).await;
    }
}

async fn apply(index: &LiveIndex, batch: &[Change]) {
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

async fn reconnect(database_url: &str) -> Subscription {
    loop {
        tokio::time::sleep(RETRY_DELAY).await;
        match Subscription::connect(database_url).await {
            Ok(subscription) => {
                tracing::info!("the index listener is connected again");
                return subscription;
            }
            Err(error) => {
                tracing::warn!(error = %bor_actors::error_chain(&error), "the index listener cannot reconnect yet")
            }
        }
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
