//! The mock server's settings.

use std::time::Duration;

/// Settings fixed at start.
#[derive(Clone, Debug)]
pub(crate) struct Config {
    pub chat_model: String,
    pub embed_model: String,
    pub embedding_dim: usize,
    /// Pause between chunks of a stream, unless a directive sets its own.
    pub token_delay: Duration,
    /// `false`: a chat server that serves no embeddings (see
    /// [`crate::MockLlmBuilder::without_embeddings`]).
    pub embeddings: bool,
    /// `false`: requests are not kept for [`crate::MockLlm::requests`] (a server that
    /// runs long, as the standalone one, would grow without end).
    pub keep_requests: bool,
}
