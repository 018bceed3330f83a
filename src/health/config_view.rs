//! The configuration as operators may see it: no API key, no admin token, URLs without
//! passwords or credentials.

use serde::Serialize;
use utoipa::ToSchema;

use crate::config::{Config, LogFormat, redact_url_credentials};

/// The service's configuration in effect, secrets left out. Durations are in seconds.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct ConfigView {
    pub bind: String,
    pub database_url: String,
    pub db_pool_size: usize,
    pub llm_base_url: String,
    /// `null` when embeddings go to `llm_base_url`.
    pub llm_embed_base_url: Option<String>,
    /// Whether an API key is configured (the key itself is never shown).
    pub llm_api_key_set: bool,
    pub llm_chat_model: String,
    pub llm_embed_model: String,
    pub llm_retries: u32,
    pub llm_retry_delay: f64,
    pub llm_connect_timeout: f64,
    pub llm_read_timeout: f64,
    /// `null` when the server's own default applies.
    pub llm_temperature: Option<f64>,
    pub llm_max_tokens: u32,
    pub max_answer_chars: usize,
    pub request_body_timeout: f64,
    pub max_upload_bytes: usize,
    pub summaries: bool,
    pub agent_enabled: bool,
    pub agent_max_rounds: u32,
    pub retrieval_top_k: usize,
    pub deflect_threshold: f64,
    pub max_message_chars: usize,
    pub max_concurrent_turns: usize,
    pub llm_thinking_forced_open: bool,
    pub sse_keepalive: f64,
    pub shutdown_grace: f64,
    pub log: String,
    pub log_format: LogFormat,
    pub chunk_chars: usize,
    pub chunk_overlap: usize,
}

impl From<&Config> for ConfigView {
    fn from(config: &Config) -> Self {
        // Destructured so that a new variable must be placed here (or left out) on purpose.
        let Config {
            bind,
            database_url: _,
            db_pool_size,
            llm_base_url,
            llm_embed_base_url,
            llm_api_key,
            llm_chat_model,
            llm_embed_model,
            llm_retries,
            llm_retry_delay,
            llm_connect_timeout,
            llm_read_timeout,
            llm_temperature,
            llm_max_tokens,
            max_answer_chars,
            request_body_timeout,
            max_upload_bytes,
            summaries,
            agent_enabled,
            agent_max_rounds,
            retrieval_top_k,
            deflect_threshold,
            max_message_chars,
            max_concurrent_turns,
            admin_token: _,
            llm_thinking_forced_open,
            sse_keepalive,
            shutdown_grace,
            log,
            log_format,
            chunk_chars,
            chunk_overlap,
        } = config;
        ConfigView {
            bind: bind.to_string(),
            database_url: config.database_url_redacted(),
            db_pool_size: *db_pool_size,
            llm_base_url: redact_url_credentials(llm_base_url),
            llm_embed_base_url: llm_embed_base_url.as_deref().map(redact_url_credentials),
            llm_api_key_set: llm_api_key.is_some(),
            llm_chat_model: llm_chat_model.clone(),
            llm_embed_model: llm_embed_model.clone(),
            llm_retries: *llm_retries,
            llm_retry_delay: llm_retry_delay.as_secs_f64(),
            llm_connect_timeout: llm_connect_timeout.as_secs_f64(),
            llm_read_timeout: llm_read_timeout.as_secs_f64(),
            llm_temperature: llm_temperature.map(|t| (f64::from(t) * 1e6).round() / 1e6),
            llm_max_tokens: *llm_max_tokens,
            max_answer_chars: *max_answer_chars,
            request_body_timeout: request_body_timeout.as_secs_f64(),
            max_upload_bytes: *max_upload_bytes,
            summaries: *summaries,
            agent_enabled: *agent_enabled,
            agent_max_rounds: *agent_max_rounds,
            retrieval_top_k: *retrieval_top_k,
            // As written (0.35), not as the nearest f64 of the f32 (0.3499999940395355).
            deflect_threshold: (f64::from(*deflect_threshold) * 1e6).round() / 1e6,
            max_message_chars: *max_message_chars,
            max_concurrent_turns: *max_concurrent_turns,
            llm_thinking_forced_open: *llm_thinking_forced_open,
            sse_keepalive: sse_keepalive.as_secs_f64(),
            shutdown_grace: shutdown_grace.as_secs_f64(),
            log: log.clone(),
            log_format: *log_format,
            chunk_chars: *chunk_chars,
            chunk_overlap: *chunk_overlap,
        }
    }
}

impl ConfigView {
    /// `(BOR_NAME, value)` pairs, sorted by name; the API key shows as `(set)` or
    /// `(unset)`.
    pub fn variables(&self) -> Vec<(String, String)> {
        let value = serde_json::to_value(self).unwrap_or_default();
        let Some(fields) = value.as_object() else {
            return Vec::new();
        };
        fields
            .iter()
            .map(|(name, value)| {
                let shown = match value {
                    serde_json::Value::String(text) => text.clone(),
                    serde_json::Value::Null => "(unset)".to_owned(),
                    other => other.to_string(),
                };
                match name.strip_suffix("_set") {
                    Some(secret) => (
                        format!("BOR_{}", secret.to_ascii_uppercase()),
                        if self.llm_api_key_set {
                            "(set)"
                        } else {
                            "(unset)"
                        }
                        .to_owned(),
                    ),
                    None => (format!("BOR_{}", name.to_ascii_uppercase()), shown),
                }
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Config;

    #[test]
    fn secrets_are_left_out() {
        let config = Config::from_vars([
            (
                "BOR_DATABASE_URL".to_owned(),
                "postgres://bor:db-secret-1@127.0.0.1:5432/bor".to_owned(),
            ),
            (
                "BOR_LLM_BASE_URL".to_owned(),
                "https://user:url-secret-2@models.example.org/v1".to_owned(),
            ),
            ("BOR_LLM_API_KEY".to_owned(), "sk-secret-3".to_owned()),
            ("BOR_ADMIN_TOKEN".to_owned(), "admin-secret-4".to_owned()),
            (
                "BOR_LLM_EMBED_BASE_URL".to_owned(),
                "https://user:url-secret-5@embed.example.org/v1".to_owned(),
            ),
        ])
        .unwrap();
        let view = ConfigView::from(&config);
        let shown = serde_json::to_string(&view).unwrap();
        for secret in [
            "db-secret-1",
            "url-secret-2",
            "sk-secret-3",
            "admin-secret-4",
            "url-secret-5",
        ] {
            assert!(!shown.contains(secret), "{secret} in {shown}");
        }
        assert_eq!(view.database_url, "postgres://bor:***@127.0.0.1:5432/bor");
        assert_eq!(view.llm_base_url, "https://***@models.example.org/v1");
        assert_eq!(
            view.llm_embed_base_url.as_deref(),
            Some("https://***@embed.example.org/v1")
        );
        assert!(view.llm_api_key_set);
        assert_eq!(view.deflect_threshold, 0.35);
        let variables = view.variables();
        assert!(
            variables.contains(&("BOR_LLM_RETRIES".to_owned(), "3".to_owned())),
            "{variables:?}"
        );
        assert!(variables.contains(&("BOR_LOG_FORMAT".to_owned(), "text".to_owned())));
        assert!(variables.contains(&("BOR_LLM_API_KEY".to_owned(), "(set)".to_owned())));
    }
}
