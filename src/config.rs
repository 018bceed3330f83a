//! Service configuration, read from `BOR_*` environment variables (and `.env`).
//!
//! Every variable is first read as an optional string (with envy), then parsed and
//! checked on its own, so that start-up reports every bad variable at once, one line
//! each. Adding a variable: a field in [`RawVars`] and in [`Config`], one line in
//! [`Config::from_raw`], and its entry in `.env.example`.

mod validate;

use std::collections::HashMap;
use std::ffi::OsString;
use std::fmt;
use std::net::SocketAddr;
use std::path::Path;
use std::time::Duration;

use serde::Deserialize;

use validate::{
    Validator, boolean, http_url, integer, log_filter, log_format, number, postgres_url, seconds,
    socket_addr, text,
};
pub use validate::{redact_url_credentials, redact_url_password};

/// The prefix shared by every variable.
const PREFIX: &str = "BOR_";

/// The service configuration (SPEC §2). Build it with [`Config::from_env`].
#[derive(Clone, PartialEq)]
pub struct Config {
    pub bind: SocketAddr,
    pub database_url: String,
    pub db_pool_size: usize,
    /// Without a trailing `/`.
    pub llm_base_url: String,
    /// The embeddings server's base URL when it is not the chat server (without a
    /// trailing `/`); see [`Config::llm_embed_url`].
    pub llm_embed_base_url: Option<String>,
    pub llm_api_key: Option<Secret>,
    pub llm_chat_model: String,
    pub llm_embed_model: String,
    /// Retries after the first attempt.
    pub llm_retries: u32,
    pub llm_retry_delay: Duration,
    pub llm_connect_timeout: Duration,
    pub llm_read_timeout: Duration,
    /// Sampling temperature sent with chat requests; `None` leaves it to the server.
    pub llm_temperature: Option<f32>,
    /// Sent as `max_tokens` with chat requests.
    pub llm_max_tokens: u32,
    /// Characters of answer and reasoning a turn keeps; past them it ends (`done`,
    /// `truncated`).
    pub max_answer_chars: usize,
    /// Time a request body may take to arrive (408 after it).
    pub request_body_timeout: Duration,
    /// Largest file an upload may carry, in bytes.
    pub max_upload_bytes: usize,
    /// Documents get a short summary from the chat model, in the background.
    pub summaries: bool,
    pub agent_enabled: bool,
    pub agent_max_rounds: u32,
    pub retrieval_top_k: usize,
    pub deflect_threshold: f32,
    pub max_message_chars: usize,
    pub max_concurrent_turns: usize,
    /// Longest chunk a document is cut into, in characters (Unicode scalar values).
    pub chunk_chars: usize,
    /// Characters a chunk repeats from the end of the one before it (same section).
    pub chunk_overlap: usize,
    /// `None` disables the admin API.
    pub admin_token: Option<Secret>,
    pub llm_thinking_forced_open: bool,
    pub sse_keepalive: Duration,
    pub shutdown_grace: Duration,
    /// A tracing filter (`RUST_LOG` syntax).
    pub log: String,
    pub log_format: LogFormat,
}

/// How log lines are written (`BOR_LOG_FORMAT`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, utoipa::ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum LogFormat {
    /// One readable line per event.
    Text,
    /// One JSON object per line, with the spans (request id, turn id) of the event.
    Json,
}

/// The variables as envy reads them: present or not, not yet parsed.
#[derive(Debug, Default, Deserialize)]
struct RawVars {
    bind: Option<String>,
    database_url: Option<String>,
    db_pool_size: Option<String>,
    llm_base_url: Option<String>,
    llm_embed_base_url: Option<String>,
    llm_api_key: Option<String>,
    llm_chat_model: Option<String>,
    llm_embed_model: Option<String>,
    llm_retries: Option<String>,
    llm_retry_delay: Option<String>,
    llm_connect_timeout: Option<String>,
    llm_read_timeout: Option<String>,
    llm_temperature: Option<String>,
    llm_max_tokens: Option<String>,
    max_answer_chars: Option<String>,
    request_body_timeout: Option<String>,
    max_upload_bytes: Option<String>,
    summaries: Option<String>,
    agent_enabled: Option<String>,
    agent_max_rounds: Option<String>,
    retrieval_top_k: Option<String>,
    deflect_threshold: Option<String>,
    max_message_chars: Option<String>,
    max_concurrent_turns: Option<String>,
    chunk_chars: Option<String>,
    chunk_overlap: Option<String>,
    admin_token: Option<String>,
    llm_thinking_forced_open: Option<String>,
    sse_keepalive: Option<String>,
    shutdown_grace: Option<String>,
    log: Option<String>,
    log_format: Option<String>,
}

impl Config {
    /// Reads `.env` from the working directory if present (the real environment
    /// wins), then the environment.
    pub fn from_env() -> Result<Config, ConfigError> {
        Self::from_sources(Path::new(".env"), std::env::vars_os())
    }

    /// The variables of the file at `dotenv_path` (when it exists), overridden by the
    /// `BOR_*` ones of `environment` that have a value.
    fn from_sources(
        dotenv_path: &Path,
        environment: impl IntoIterator<Item = (OsString, OsString)>,
    ) -> Result<Config, ConfigError> {
        let mut problems = Vec::new();
        let mut vars = HashMap::new();
        match dotenvy::from_path_iter(dotenv_path) {
            Ok(lines) => {
                for line in lines {
                    match line {
                        Ok((name, value)) => insert_if_set(&mut vars, name, value),
                        Err(error) => problems.push(format!(".env: {error}")),
                    }
                }
            }
            Err(error) if error.not_found() => {}
            Err(error) => problems.push(format!(".env: {error}")),
        }
        for (name, value) in environment {
            let Some(name) = name.to_str().filter(|name| name.starts_with(PREFIX)) else {
                continue;
            };
            match value.into_string() {
                Ok(value) => insert_if_set(&mut vars, name.to_owned(), value),
                Err(_) => problems.push(format!("{name} is not valid UTF-8")),
            }
        }
        Self::from_vars_with(vars, problems)
    }

    /// Like [`Config::from_env`], from explicit pairs only (no `.env`, no process
    /// environment).
    pub fn from_vars<I: IntoIterator<Item = (String, String)>>(
        vars: I,
    ) -> Result<Config, ConfigError> {
        let mut set = HashMap::new();
        for (name, value) in vars {
            insert_if_set(&mut set, name, value);
        }
        Self::from_vars_with(set, Vec::new())
    }

    /// Where embeddings are requested: `BOR_LLM_EMBED_BASE_URL`, else the chat server.
    pub fn llm_embed_url(&self) -> &str {
        self.llm_embed_base_url
            .as_deref()
            .unwrap_or(&self.llm_base_url)
    }

    /// The database URL with its password replaced, for logs and status pages.
    pub fn database_url_redacted(&self) -> String {
        redact_url_password(&self.database_url)
    }

    fn from_vars_with(
        vars: HashMap<String, String>,
        mut problems: Vec<String>,
    ) -> Result<Config, ConfigError> {
        let raw = match envy::prefixed(PREFIX).from_iter::<_, RawVars>(vars) {
            Ok(raw) => raw,
            Err(error) => {
                problems.push(format!("environment: {error}"));
                RawVars::default()
            }
        };
        let mut check = Validator::new(problems);
        let config = Self::from_raw(raw, &mut check);
        if config.chunk_overlap * 2 >= config.chunk_chars {
            check.problem(format!(
                "BOR_CHUNK_OVERLAP={} is invalid: expected less than half of BOR_CHUNK_CHARS ({})",
                config.chunk_overlap, config.chunk_chars
            ));
        }
        check.finish().map(|()| config)
    }

    /// Parses each variable (its default when unset), recording every problem.
    fn from_raw(raw: RawVars, check: &mut Validator) -> Config {
        Config {
            bind: check.value(
                "BOR_BIND",
                raw.bind,
                ([127, 0, 0, 1], 8000).into(),
                socket_addr,
            ),
            database_url: check.value(
                "BOR_DATABASE_URL",
                raw.database_url,
                "postgres://postgres@127.0.0.1:5432/bor".to_owned(),
                postgres_url,
            ),
            db_pool_size: check.value("BOR_DB_POOL_SIZE", raw.db_pool_size, 8, integer(1..=128)),
            llm_base_url: check.value(
                "BOR_LLM_BASE_URL",
                raw.llm_base_url,
                "http://127.0.0.1:18089/v1".to_owned(),
                http_url,
            ),
            llm_embed_base_url: check.value(
                "BOR_LLM_EMBED_BASE_URL",
                raw.llm_embed_base_url,
                None,
                |raw| http_url(raw).map(Some),
            ),
            llm_api_key: raw.llm_api_key.map(Secret),
            llm_chat_model: check.value(
                "BOR_LLM_CHAT_MODEL",
                raw.llm_chat_model,
                "smollm2".to_owned(),
                text,
            ),
            llm_embed_model: check.value(
                "BOR_LLM_EMBED_MODEL",
                raw.llm_embed_model,
                "smollm2".to_owned(),
                text,
            ),
            llm_retries: check.value("BOR_LLM_RETRIES", raw.llm_retries, 3, integer(0..=10)),
            llm_retry_delay: check.value(
                "BOR_LLM_RETRY_DELAY",
                raw.llm_retry_delay,
                Duration::from_secs(5),
                seconds(0.0..=60.0),
            ),
            llm_connect_timeout: check.value(
                "BOR_LLM_CONNECT_TIMEOUT",
                raw.llm_connect_timeout,
                Duration::from_secs(10),
                seconds(0.1..=300.0),
            ),
            llm_read_timeout: check.value(
                "BOR_LLM_READ_TIMEOUT",
                raw.llm_read_timeout,
                Duration::from_secs(120),
                seconds(0.1..=3600.0),
            ),
            llm_temperature: check.value("BOR_LLM_TEMPERATURE", raw.llm_temperature, None, |raw| {
                number(0.0..=2.0)(raw).map(Some)
            }),
            llm_max_tokens: check.value(
                "BOR_LLM_MAX_TOKENS",
                raw.llm_max_tokens,
                4096,
                integer(1..=1_000_000),
            ),
            max_answer_chars: check.value(
                "BOR_MAX_ANSWER_CHARS",
                raw.max_answer_chars,
                100_000,
                integer(100..=100_000_000),
            ),
            request_body_timeout: check.value(
                "BOR_REQUEST_BODY_TIMEOUT",
                raw.request_body_timeout,
                Duration::from_secs(30),
                seconds(0.1..=600.0),
            ),
            max_upload_bytes: check.value(
                "BOR_MAX_UPLOAD_BYTES",
                raw.max_upload_bytes,
                32 * 1024 * 1024,
                integer(1024..=1024 * 1024 * 1024),
            ),
            summaries: check.value("BOR_SUMMARIES", raw.summaries, false, boolean),
            agent_enabled: check.value("BOR_AGENT_ENABLED", raw.agent_enabled, true, boolean),
            agent_max_rounds: check.value(
                "BOR_AGENT_MAX_ROUNDS",
                raw.agent_max_rounds,
                4,
                integer(1..=16),
            ),
            retrieval_top_k: check.value(
                "BOR_RETRIEVAL_TOP_K",
                raw.retrieval_top_k,
                5,
                integer(1..=50),
            ),
            deflect_threshold: check.value(
                "BOR_DEFLECT_THRESHOLD",
                raw.deflect_threshold,
                0.35,
                number(-1.0..=1.0),
            ),
            max_message_chars: check.value(
                "BOR_MAX_MESSAGE_CHARS",
                raw.max_message_chars,
                8000,
                integer(1..=1_000_000),
            ),
            max_concurrent_turns: check.value(
                "BOR_MAX_CONCURRENT_TURNS",
                raw.max_concurrent_turns,
                256,
                integer(1..=100_000),
            ),
            chunk_chars: check.value(
                "BOR_CHUNK_CHARS",
                raw.chunk_chars,
                1200,
                integer(200..=20_000),
            ),
            chunk_overlap: check.value(
                "BOR_CHUNK_OVERLAP",
                raw.chunk_overlap,
                150,
                integer(0..=5_000),
            ),
            admin_token: raw.admin_token.map(Secret),
            llm_thinking_forced_open: check.value(
                "BOR_LLM_THINKING_FORCED_OPEN",
                raw.llm_thinking_forced_open,
                false,
                boolean,
            ),
            sse_keepalive: check.value(
                "BOR_SSE_KEEPALIVE",
                raw.sse_keepalive,
                Duration::from_secs(5),
                seconds(1.0..=60.0),
            ),
            shutdown_grace: check.value(
                "BOR_SHUTDOWN_GRACE",
                raw.shutdown_grace,
                Duration::from_secs(30),
                seconds(0.0..=600.0),
            ),
            log: check.value("BOR_LOG", raw.log, "info".to_owned(), log_filter),
            log_format: check.value(
                "BOR_LOG_FORMAT",
                raw.log_format,
                LogFormat::Text,
                log_format,
            ),
        }
    }
}

/// Keeps a variable only when it has a value: empty (or blank) counts as unset.
fn insert_if_set(vars: &mut HashMap<String, String>, name: String, value: String) {
    let value = value.trim();
    if !value.is_empty() {
        vars.insert(name, value.to_owned());
    }
}

impl fmt::Debug for Config {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Destructured so that a new field cannot be forgotten here.
        let Config {
            bind,
            database_url,
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
            chunk_chars,
            chunk_overlap,
            admin_token,
            llm_thinking_forced_open,
            sse_keepalive,
            shutdown_grace,
            log,
            log_format,
        } = self;
        f.debug_struct("Config")
            .field("bind", bind)
            .field("database_url", &redact_url_password(database_url))
            .field("db_pool_size", db_pool_size)
            .field("llm_base_url", llm_base_url)
            .field("llm_embed_base_url", llm_embed_base_url)
            .field("llm_api_key", llm_api_key)
            .field("llm_chat_model", llm_chat_model)
            .field("llm_embed_model", llm_embed_model)
            .field("llm_retries", llm_retries)
            .field("llm_retry_delay", llm_retry_delay)
            .field("llm_connect_timeout", llm_connect_timeout)
            .field("llm_read_timeout", llm_read_timeout)
            .field("llm_temperature", llm_temperature)
            .field("llm_max_tokens", llm_max_tokens)
            .field("max_answer_chars", max_answer_chars)
            .field("request_body_timeout", request_body_timeout)
            .field("max_upload_bytes", max_upload_bytes)
            .field("summaries", summaries)
            .field("agent_enabled", agent_enabled)
            .field("agent_max_rounds", agent_max_rounds)
            .field("retrieval_top_k", retrieval_top_k)
            .field("deflect_threshold", deflect_threshold)
            .field("max_message_chars", max_message_chars)
            .field("max_concurrent_turns", max_concurrent_turns)
            .field("chunk_chars", chunk_chars)
            .field("chunk_overlap", chunk_overlap)
            .field("admin_token", admin_token)
            .field("llm_thinking_forced_open", llm_thinking_forced_open)
            .field("sse_keepalive", sse_keepalive)
            .field("shutdown_grace", shutdown_grace)
            .field("log", log)
            .field("log_format", log_format)
            .finish()
    }
}

/// A value that must never be logged or shown: `Debug` prints a placeholder.
#[derive(Clone, PartialEq, Eq)]
pub struct Secret(String);

impl Secret {
    pub fn new(value: impl Into<String>) -> Secret {
        Secret(value.into())
    }

    /// The secret itself, for the one place that needs it (a header, a comparison).
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Secret([redacted])")
    }
}

/// Every problem found in the configuration; displayed one per line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigError {
    problems: Vec<String>,
}

impl ConfigError {
    /// One line per problem, each naming its variable.
    pub fn problems(&self) -> &[String] {
        &self.problems
    }
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.problems.join("\n"))
    }
}

impl std::error::Error for ConfigError {}

#[cfg(test)]
mod tests;
