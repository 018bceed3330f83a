//! Keeping every instance's in-memory state in step with the database.
//!
//! Triggers announce changes on PostgreSQL channels (the knowledge base on
//! `bor_knowledge`, sign-ins on `bor_auth`). Each bor instance listens on one
//! connection of its own (tokio-postgres, outside the pool) and hands each channel's
//! payloads to its [`Follower`]. Notifications sent while that connection is down are
//! lost, so after reconnecting every follower reloads whole.

use std::sync::Arc;
use std::time::Duration;

use futures_util::StreamExt;
use futures_util::future::BoxFuture;
use tokio::sync::mpsc;
use tokio_postgres::{AsyncMessage, NoTls};

/// The listening connection's `application_name` (seen in `pg_stat_activity`).
pub const APPLICATION_NAME: &str = "bor-listener";
const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);
/// Pause before reconnecting, or before a follower retries a failed update.
pub const RETRY_DELAY: Duration = Duration::from_secs(1);
/// How often the idle connection is checked, so a dead one is noticed.
const HEARTBEAT: Duration = Duration::from_secs(15);
/// How long a check may take before the connection counts as dead (a connection the
/// network dropped without a word answers never).
const HEARTBEAT_TIMEOUT: Duration = Duration::from_secs(5);

/// What keeps one piece of in-memory state in step with one channel.
pub trait Follower: Send + Sync {
    /// The channel its triggers notify.
    fn channel(&self) -> &'static str;
    /// Applies the payloads heard on the channel (every one waiting, in order).
    fn apply<'a>(&'a self, payloads: &'a [String]) -> BoxFuture<'a, ()>;
    /// The connection is lost: what is sent until it is back will not be heard.
    fn lost(&self) {}
    /// Reads everything again (notifications may have been lost); retries until done.
    fn reload(&self) -> BoxFuture<'_, ()>;
}

/// A notification: its channel and payload.
type Heard = (String, String);

/// A connection listening on some channels, with what it hears.
pub struct Subscription {
    /// Keeps the connection open; also used for heartbeats.
    client: tokio_postgres::Client,
    heard: mpsc::UnboundedReceiver<Heard>,
}

impl Subscription {
    /// Connects and starts listening on `channels`. Must run inside a tokio runtime.
    pub async fn connect(
        database_url: &str,
        channels: &[&str],
    ) -> Result<Subscription, tokio_postgres::Error> {
        let mut config: tokio_postgres::Config = database_url.parse()?;
        config
            .application_name(APPLICATION_NAME)
            .connect_timeout(CONNECT_TIMEOUT);
        let (client, mut connection) = config.connect(NoTls).await?;
        let (sender, heard) = mpsc::unbounded_channel();
        // The connection is driven here; its messages are the notifications. When it
        // ends, `sender` is dropped and the subscription's channel closes.
        tokio::spawn(async move {
            let mut messages = futures_util::stream::poll_fn(|cx| connection.poll_message(cx));
            while let Some(message) = messages.next().await {
                match message {
                    Ok(AsyncMessage::Notification(notification)) => {
                        let heard = (
                            notification.channel().to_owned(),
                            notification.payload().to_owned(),
                        );
                        if sender.send(heard).is_err() {
                            break;
                        }
                    }
                    Ok(_) => {}
                    Err(error) => {
                        tracing::warn!(error = %bor_actors::error_chain(&error), "the listener's connection failed");
                        break;
                    }
                }
            }
        });
        let listen: String = channels
            .iter()
            .map(|channel| format!("LISTEN {channel};"))
            .collect();
        client.batch_execute(&listen).await?;
        Ok(Subscription { client, heard })
    }

    /// The next batch of notifications (all that are waiting, at least one); `None`
    /// when the connection is lost.
    async fn next_batch(&mut self) -> Option<Vec<Heard>> {
        loop {
            tokio::select! {
                heard = self.heard.recv() => {
                    let mut batch = vec![heard?];
                    while let Ok(more) = self.heard.try_recv() {
                        batch.push(more);
                    }
                    return Some(batch);
                }
                () = tokio::time::sleep(HEARTBEAT) => {
                    match tokio::time::timeout(HEARTBEAT_TIMEOUT, self.client.batch_execute("")).await {
                        Ok(Ok(())) => {}
                        Ok(Err(error)) => {
                            tracing::warn!(error = %bor_actors::error_chain(&error), "the listener's connection is dead");
                            return None;
                        }
                        Err(_) => {
                            tracing::warn!("the listener's connection does not answer; it counts as dead");
                            return None;
                        }
                    }
                }
            }
        }
    }
}

/// Hands what `subscription` hears to the follower of each channel, forever: when the
/// connection is lost, tells every follower, reconnects, then has every follower
/// reload.
pub async fn follow(
    database_url: String,
    mut subscription: Subscription,
    followers: Vec<Arc<dyn Follower>>,
) {
    let channels: Vec<&str> = followers.iter().map(|f| f.channel()).collect();
    loop {
        while let Some(batch) = subscription.next_batch().await {
            for follower in &followers {
                let payloads: Vec<String> = batch
                    .iter()
                    .filter(|(channel, _)| channel == follower.channel())
                    .map(|(_, payload)| payload.clone())
                    .collect();
                if !payloads.is_empty() {
                    follower.apply(&payloads).await;
                }
            }
        }
        for follower in &followers {
            follower.lost();
        }
        subscription = reconnect(&database_url, &channels).await;
        for follower in &followers {
            follower.reload().await;
        }
    }
}

async fn reconnect(database_url: &str, channels: &[&str]) -> Subscription {
    loop {
        tokio::time::sleep(RETRY_DELAY).await;
        match Subscription::connect(database_url, channels).await {
            Ok(subscription) => {
                tracing::info!("the listener is connected again");
                return subscription;
            }
            Err(error) => {
                tracing::warn!(error = %bor_actors::error_chain(&error), "the listener cannot reconnect yet")
            }
        }
    }
}
