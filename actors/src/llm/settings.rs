//! What an LlmActor needs to know about the LLM server.

use std::fmt;
use std::time::Duration;

/// Connection and retry settings of the LLM server (SPEC §2, §6).
#[derive(Clone)]
pub struct LlmSettings {
    /// Base URL without a trailing slash, e.g. `http://127.0.0.1:18089/v1`.
    pub base_url: String,
    /// Sent as `Authorization: Bearer`; never logged.
    pub api_key: Option<String>,
    pub chat_model: String,
    pub embed_model: String,
    /// Retries after the first attempt.
    pub retries: u32,
    /// Flat delay between attempts.
    pub retry_delay: Duration,
    pub connect_timeout: Duration,
    /// Silence tolerated before the response headers and between body chunks.
    pub read_timeout: Duration,
}

impl LlmSettings {
    pub(crate) fn url(&self, path: &str) -> String {
        format!("{}/{}", self.base_url, path)
    }
}

impl fmt::Debug for LlmSettings {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("LlmSettings")
            .field("base_url", &self.base_url)
            .field("api_key", &self.api_key.as_ref().map(|_| "[redacted]"))
            .field("chat_model", &self.chat_model)
            .field("embed_model", &self.embed_model)
            .field("retries", &self.retries)
            .field("retry_delay", &self.retry_delay)
            .field("connect_timeout", &self.connect_timeout)
            .field("read_timeout", &self.read_timeout)
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn debug_output_hides_the_api_key() {
        let settings = LlmSettings {
            base_url: "http://127.0.0.1:1/v1".into(),
            api_key: Some("sk-very-secret".into()),
            chat_model: "m".into(),
            embed_model: "e".into(),
            retries: 3,
            retry_delay: Duration::from_secs(5),
            connect_timeout: Duration::from_secs(10),
            read_timeout: Duration::from_secs(120),
        };
        let shown = format!("{settings:?}");
        assert!(!shown.contains("sk-very-secret"), "{shown}");
        assert!(shown.contains("[redacted]"), "{shown}");
        assert_eq!(settings.url("models"), "http://127.0.0.1:1/v1/models");
    }
}
