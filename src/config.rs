//! Service configuration, read from `BOR_*` environment variables (and `.env`).
//!
//! Every variable is first read as an optional string (with envy), then parsed and
//! checked on its own, so that start-up reports every bad variable at once, one line
//! each. Every variable is declared once, in the [`variables!`] list below: its field,
//! type, default, parser and how operators see it. Adding a variable: one entry there
//! and its line in `.env.example` (a test checks both agree).

mod hosts;
mod shown;
mod validate;

use std::collections::HashMap;
use std::ffi::OsString;
use std::fmt;
use std::net::SocketAddr;
use std::path::Path;
use std::time::Duration;

use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

pub use hosts::AllowedHosts;
pub use shown::SecretState;
use shown::{cloned, copied, display, rounded, seconds_of, secret_state};
use validate::{
    Validator, address_ranges, auth_mode, boolean, header_name, host_names, http_url, integer,
    issuer_url, log_filter, log_format, number, ocr_languages, ocr_mode, postgres_url, public_url,
    seconds, secret, socket_addr, text,
};
pub use validate::{redact_url_credentials, redact_url_password};

/// The prefix shared by every variable.
const PREFIX: &str = "BOR_";

/// Declares every variable once. Each entry is its documentation, its field and type
/// in [`Config`], its default, its parser (`validate.rs`) and, after `=>`, its type and
/// value in [`ConfigView`], the view operators see (secrets only as set or unset).
/// From the list come `Config`, the envy-read `RawVars`, the names bor knows, the
/// parsing in `Config::from_raw`, `Config`'s `Debug` (which prints the view) and
/// `ConfigView`.
macro_rules! variables {
    ($(
        $(#[doc = $doc:literal])*
        $field:ident: $ty:ty = $default:expr, $parse:expr => $view_ty:ty = $show:expr;
    )*) => {
        /// The service configuration (every variable: `.env.example`; the rules:
        /// docs/PROTOCOL.md, "Configuration"). Build it with [`Config::from_env`].
        #[derive(Clone, PartialEq)]
        pub struct Config {
            $($(#[doc = $doc])* pub $field: $ty,)*
        }

        /// The variables as envy reads them: present or not, not yet parsed (no `Debug`:
        /// they hold the secrets as given).
        #[derive(Default, Deserialize)]
        struct RawVars {
            $($field: Option<String>,)*
        }

        /// Every variable's name after the prefix, lower case (as in `RawVars`).
        const FIELDS: &[&str] = &[$(stringify!($field)),*];

        impl Config {
            /// Parses each variable (its default when unset), recording every problem.
            fn from_raw(raw: RawVars, check: &mut Validator) -> Config {
                Config {
                    $($field: check.value(
                        &variable_name(stringify!($field)),
                        raw.$field,
                        $default,
                        $parse,
                    ),)*
                }
            }
        }

        impl fmt::Debug for Config {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.debug_struct("Config")
                    $(.field(stringify!($field), &$show(&self.$field)))*
                    .finish()
            }
        }

        /// The configuration in effect as operators may see it: no API key, no admin
        /// token, URLs without passwords or credentials, durations in seconds.
        #[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
        pub struct ConfigView {
            $($(#[doc = $doc])* pub $field: $view_ty,)*
        }

        impl From<&Config> for ConfigView {
            fn from(config: &Config) -> Self {
                ConfigView {
                    $($field: $show(&config.$field),)*
                }
            }
        }
    };
}

variables! {
    /// Address and port the HTTP server listens on.
    bind: SocketAddr = ([127, 0, 0, 1], 8000).into(), socket_addr => String = display;
    /// The address people use to reach bor: its host is one that requests may name
    /// (docs/PROTOCOL.md, "Hosts"), its origin judges cross-site requests, and `https`
    /// makes the session cookie `Secure`; unset: `http://` and the request's `Host`.
    public_url: Option<url::Url> = None, |raw| public_url(raw).map(Some)
        => Option<String> = |url: &Option<url::Url>| url.as_ref().map(url::Url::to_string);
    /// Where the other instances on the same database reach this one, to read its
    /// turns' frames for their readers (docs/ARCHITECTURE.md, "Readers on another
    /// instance"); unset: the bound address (an unspecified one as loopback).
    instance_url: Option<String> = None, |raw| http_url(raw).map(Some)
        => Option<String> = |url: &Option<String>| url.as_deref().map(redact_url_credentials);
    /// More host names requests may name, lower case: `name`, `*.name` (every name
    /// under it) or `*` (any host).
    allowed_hosts: Vec<String> = Vec::new(), host_names
        => Option<String> = |hosts: &Vec<String>| (!hosts.is_empty()).then(|| hosts.join(","));
    /// The PostgreSQL database (shown with its password hidden).
    database_url: String = "postgres://postgres@127.0.0.1:5432/bor".to_owned(), postgres_url
        => String = |url: &String| redact_url_password(url);
    db_pool_size: usize = 8, integer(1..=128) => usize = copied;
    /// The LLM server's base URL, without a trailing `/`.
    llm_base_url: String = "http://127.0.0.1:18089/v1".to_owned(), http_url
        => String = |url: &String| redact_url_credentials(url);
    /// The embeddings server's base URL when it is not the chat server (without a
    /// trailing `/`); `null` when embeddings go to `llm_base_url`. See
    /// [`Config::llm_embed_url`].
    llm_embed_base_url: Option<String> = None, |raw| http_url(raw).map(Some)
        => Option<String> = |url: &Option<String>| url.as_deref().map(redact_url_credentials);
    /// Sent as a bearer token to the LLM server; operators see whether it is set.
    llm_api_key: Option<Secret> = None, secret => SecretState = secret_state;
    llm_chat_model: String = "smollm2".to_owned(), text => String = cloned;
    llm_embed_model: String = "smollm2".to_owned(), text => String = cloned;
    /// Put before each question and search query sent to the embedding model, with one
    /// space between, for a model trained with task prefixes (nomic-embed-text:
    /// `search_query:`); unset: none. Changing it changes every question's vector.
    llm_embed_query_prefix: Option<String> = None, |raw| text(raw).map(Some)
        => Option<String> = cloned;
    /// Put before each chunk sent to the embedding model, with one space between
    /// (nomic-embed-text: `search_document:`); unset: none. Stored vectors keep the
    /// prefix they were made with: re-import after changing it.
    llm_embed_document_prefix: Option<String> = None, |raw| text(raw).map(Some)
        => Option<String> = cloned;
    /// Retries after the first attempt.
    llm_retries: u32 = 3, integer(0..=10) => u32 = copied;
    llm_retry_delay: Duration = Duration::from_secs(5), seconds(0.0..=60.0) => f64 = seconds_of;
    llm_connect_timeout: Duration = Duration::from_secs(10), seconds(0.1..=300.0)
        => f64 = seconds_of;
    llm_read_timeout: Duration = Duration::from_secs(120), seconds(0.1..=3600.0)
        => f64 = seconds_of;
    /// Sampling temperature sent with chat requests; `None` (`null`) leaves it to the
    /// server.
    llm_temperature: Option<f32> = None, |raw| number(0.0..=2.0)(raw).map(Some)
        => Option<f64> = |value: &Option<f32>| value.as_ref().map(rounded);
    /// Sent as `max_tokens` with chat requests.
    llm_max_tokens: u32 = 4096, integer(1..=1_000_000) => u32 = copied;
    /// Characters of answer and reasoning a turn keeps; past them it ends (`done`,
    /// `truncated`).
    max_answer_chars: usize = 100_000, integer(100..=100_000_000) => usize = copied;
    /// Time a request body may take to arrive (408 after it).
    request_body_timeout: Duration = Duration::from_secs(30), seconds(0.1..=600.0)
        => f64 = seconds_of;
    /// Largest file an upload may carry, in bytes.
    max_upload_bytes: usize = 32 * 1024 * 1024, integer(1024..=1024 * 1024 * 1024)
        => usize = copied;
    /// Folders `bor serve` keeps in step as `bor watch` does, separated by `:`; `null`
    /// watches none.
    watch: Option<String> = None, |raw| text(raw).map(Some)
        => Option<String> = |folders: &Option<String>| folders.clone();
    /// Web pages may be fetched from loopback, private, link-local, unique-local and the
    /// other special-purpose addresses (off: such addresses are refused, whatever name
    /// leads to them).
    fetch_allow_private: bool = false, boolean => bool = copied;
    /// How scanned PDF pages and images are read: `tesseract`, `vision` or `off`
    /// (docs/FORMATS.md, "Scanned pages and images").
    ocr: OcrMode = OcrMode::Tesseract, ocr_mode => OcrMode = copied;
    /// The vision model's server for `BOR_OCR=vision` (without a trailing `/`); unset:
    /// the chat server, `BOR_LLM_BASE_URL`.
    ocr_base_url: Option<String> = None, |raw| http_url(raw).map(Some)
        => Option<String> = |url: &Option<String>| url.as_deref().map(redact_url_credentials);
    /// The vision model's name (required with `BOR_OCR=vision`).
    ocr_model: Option<String> = None, |raw| text(raw).map(Some)
        => Option<String> = cloned;
    /// Sent as a bearer token to `BOR_OCR_BASE_URL` only (the chat server's requests
    /// carry `BOR_LLM_API_KEY`); operators see whether it is set.
    ocr_api_key: Option<Secret> = None, secret => SecretState = secret_state;
    /// Tesseract's language codes joined by `+` (`eng`, `eng+deu`).
    ocr_languages: String = "eng".to_owned(), ocr_languages => String = cloned;
    /// A PDF page whose text layer holds fewer characters than this is read by OCR.
    ocr_min_chars: usize = 200, integer(0..=100_000) => usize = copied;
    /// Most pages of one document read by OCR.
    ocr_max_pages: usize = 200, integer(1..=10_000) => usize = copied;
    /// Longest time OCR spends on one document's pages; the pages after are skipped.
    ocr_document_timeout: Duration = Duration::from_secs(30 * 60), seconds(1.0..=86_400.0)
        => f64 = seconds_of;
    /// Resolution PDF pages are rendered at for OCR.
    ocr_dpi: u32 = 300, integer(72..=600) => u32 = copied;
    /// Seconds an ended turn's frames can be replayed to a client that comes back
    /// (docs/LIMITS.md, "Turns kept for their readers").
    turn_replay_seconds: u32 = 600, integer(0..=86_400) => u32 = copied;
    /// Days the audit trail is kept (docs/LIMITS.md, "Settings checked before their
    /// feature").
    audit_days: u32 = 365, integer(1..=3_650) => u32 = copied;
    /// Documents get a short summary from the chat model, in the background.
    summaries: bool = false, boolean => bool = copied;
    agent_enabled: bool = true, boolean => bool = copied;
    agent_max_rounds: u32 = 4, integer(1..=16) => u32 = copied;
    retrieval_top_k: usize = 5, integer(1..=50) => usize = copied;
    /// The re-ranking server's base URL (the `/rerank` shape; docs/RETRIEVAL.md,
    /// "Re-ranking"), without a trailing `/`; unset: no re-ranking.
    rerank_base_url: Option<String> = None, |raw| http_url(raw).map(Some)
        => Option<String> = |url: &Option<String>| url.as_deref().map(redact_url_credentials);
    /// Sent as `model` to the re-ranking server; unset: none is sent.
    rerank_model: Option<String> = None, |raw| text(raw).map(Some)
        => Option<String> = cloned;
    /// Sent as a bearer token to the re-ranking server only; operators see whether it
    /// is set.
    rerank_api_key: Option<Secret> = None, secret => SecretState = secret_state;
    /// How many of the fused best the re-ranking server scores.
    rerank_candidates: usize = 30, integer(1..=200) => usize = copied;
    /// How long a re-rank may take before the fused order is used instead.
    rerank_timeout: Duration = Duration::from_secs(2), seconds(0.01..=60.0) => f64 = seconds_of;
    deflect_threshold: f32 = 0.35, number(-1.0..=1.0) => f64 = rounded;
    max_message_chars: usize = 8000, integer(1..=1_000_000) => usize = copied;
    max_concurrent_turns: usize = 256, integer(1..=100_000) => usize = copied;
    /// Rows waiting to be written to `query_log` past which new turns are refused (503
    /// `busy`), so that a database slower than the turns costs refused turns, never
    /// rows (docs/LIMITS.md, "Rows the database is slow to take").
    log_queue_rows: usize = bor_actors::log::DEFAULT_HIGH_WATER, integer(100..=1_000_000)
        => usize = copied;
    /// Longest chunk a document is cut into, in characters (Unicode scalar values).
    chunk_chars: usize = 1200, integer(200..=20_000) => usize = copied;
    /// Characters a chunk repeats from the end of the one before it (same section).
    chunk_overlap: usize = 150, integer(0..=5_000) => usize = copied;
    /// The bearer token of the admin API, which is off without one; operators see
    /// whether it is set.
    admin_token: Option<Secret> = None, secret => SecretState = secret_state;
    llm_thinking_forced_open: bool = false, boolean => bool = copied;
    sse_keepalive: Duration = Duration::from_secs(5), seconds(1.0..=60.0) => f64 = seconds_of;
    shutdown_grace: Duration = Duration::from_secs(30), seconds(0.0..=600.0)
        => f64 = seconds_of;
    /// A tracing filter (`RUST_LOG` syntax).
    log: String = "info".to_owned(), log_filter => String = cloned;
    log_format: LogFormat = LogFormat::Text, log_format => LogFormat = copied;
    /// Who may use bor: `accounts` (people sign in) or `off` (one person on this
    /// machine; refused on an address other than loopback).
    auth: AuthMode = AuthMode::Accounts, auth_mode => AuthMode = copied;
    /// The OpenID Connect provider people may sign in with (its discovery document is
    /// `<issuer>/.well-known/openid-configuration`); unset: none.
    oidc_issuer: Option<String> = None, |raw| issuer_url(raw).map(Some)
        => Option<String> = cloned;
    /// bor's client id at the provider (required with `oidc_issuer`).
    oidc_client_id: Option<String> = None, |raw| text(raw).map(Some)
        => Option<String> = cloned;
    /// bor's client secret at the provider (none for a public client); operators see
    /// whether it is set.
    oidc_client_secret: Option<Secret> = None, secret => SecretState = secret_state;
    /// The scopes asked for, separated by spaces (`openid` is always among them).
    oidc_scopes: String = "openid profile email".to_owned(), text => String = cloned;
    /// The ID token's claim that lists the person's groups.
    oidc_groups_claim: String = "groups".to_owned(), text => String = cloned;
    /// Members of this group (in the groups claim) are admins, the others members;
    /// unset: bor's own roles stand.
    oidc_admin_group: Option<String> = None, |raw| text(raw).map(Some)
        => Option<String> = cloned;
    /// The header, lower case, in which a trusted proxy names the person; unset: none.
    auth_proxy_header: Option<String> = None, |raw| header_name(raw).map(Some)
        => Option<String> = cloned;
    /// The header, lower case, in which the proxy lists the person's groups
    /// (comma-separated); unset: the groups are bor's own.
    auth_proxy_groups_header: Option<String> = None, |raw| header_name(raw).map(Some)
        => Option<String> = cloned;
    /// The addresses the proxy connects from (the TCP peer); the header from any other
    /// is ignored.
    auth_proxy_trusted: Vec<ipnet::IpNet> = Vec::new(), address_ranges
        => Option<String> = |ranges: &Vec<ipnet::IpNet>| (!ranges.is_empty()).then(|| {
            ranges.iter().map(ToString::to_string).collect::<Vec<_>>().join(",")
        });
    /// The reverse proxies bor is reached through (the TCP peer): from them, and only
    /// from them, `X-Forwarded-For` names the client's address.
    trusted_proxies: Vec<ipnet::IpNet> = Vec::new(), address_ranges
        => Option<String> = |ranges: &Vec<ipnet::IpNet>| (!ranges.is_empty()).then(|| {
            ranges.iter().map(ToString::to_string).collect::<Vec<_>>().join(",")
        });
}

impl ConfigView {
    /// `(BOR_NAME, value)` pairs, sorted by name; a variable without a value, like a
    /// secret, shows as `unset` (a secret that has one as `set`).
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
                    serde_json::Value::Null => "unset".to_owned(),
                    other => other.to_string(),
                };
                (variable_name(name), shown)
            })
            .collect()
    }
}

/// `BOR_` variables that bor's own scripts and tests read, not the service: no warning
/// names them. Any `BOR_TEST_` or `BOR_BROWSER_` name counts as one too.
const TOOLING_VARIABLES: &[&str] = &["BOR_LLM_SERVER_HOME", "BOR_DRILLS", "BOR_MIGRATIONS_SHA256"];

/// The variables that may instead be read from a file named by `BOR_<NAME>_FILE` (as
/// container and systemd secrets are mounted): the secrets and the database URL, which
/// may hold a password.
const FILE_VARIABLES: &[&str] = &[
    "database_url",
    "llm_api_key",
    "ocr_api_key",
    "rerank_api_key",
    "admin_token",
    "oidc_client_secret",
];

/// The suffix of a variable naming the file that holds another's value.
const FILE_SUFFIX: &str = "_FILE";

/// Replaces each `BOR_<NAME>_FILE` of [`FILE_VARIABLES`] by `BOR_<NAME>` holding the
/// file's contents without its trailing newline. A file that cannot be read, an empty
/// one, or both names set is a problem naming the variable (never the contents).
fn read_variable_files(vars: &mut HashMap<String, String>, problems: &mut Vec<String>) {
    for field in FILE_VARIABLES {
        let name = variable_name(field);
        let file_name = format!("{name}{FILE_SUFFIX}");
        let Some(path) = vars.remove(&file_name) else {
            continue;
        };
        if vars.contains_key(&name) {
            problems.push(format!(
                "{name} and {file_name} are both set: keep one (the file for a secret)"
            ));
            continue;
        }
        match std::fs::read_to_string(&path) {
            Ok(contents) => {
                let value = contents
                    .strip_suffix('\n')
                    .map(|line| line.strip_suffix('\r').unwrap_or(line))
                    .unwrap_or(&contents);
                if value.is_empty() {
                    problems.push(format!("{file_name}={path} is empty"));
                } else {
                    vars.insert(name, value.to_owned());
                }
            }
            Err(error) => problems.push(format!("{file_name}={path} cannot be read: {error}")),
        }
    }
}

/// Whether people sign in (`BOR_AUTH`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum AuthMode {
    /// Every request but sign-in and health needs a session, a key or the service token.
    Accounts,
    /// No sign-in: every request acts as the built-in admin `local`.
    Off,
}

/// How scanned pages and images are read (`BOR_OCR`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum OcrMode {
    /// Tesseract (Debian's `tesseract-ocr`), PDF pages rendered by Poppler's `pdftoppm`.
    Tesseract,
    /// An OpenAI-compatible vision model (`BOR_OCR_MODEL`) asked to transcribe each page.
    Vision,
    /// No OCR: a PDF without a text layer and an image are skipped with the reason.
    Off,
}

/// How log lines are written (`BOR_LOG_FORMAT`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum LogFormat {
    /// One readable line per event.
    Text,
    /// One JSON object per line, with the spans (request id, turn id) of the event.
    Json,
}

/// A configuration read from the environment, with what deserves a warning in it.
#[derive(Debug)]
pub struct Loaded {
    pub config: Config,
    /// One line per `BOR_` variable bor does not know (a misspelt name is otherwise
    /// silently ignored), naming the known one it resembles.
    pub warnings: Vec<String>,
}

impl Config {
    /// Reads `.env` from the working directory if present (the real environment
    /// wins), then the environment.
    pub fn from_env() -> Result<Loaded, ConfigError> {
        Self::from_sources(Path::new(".env"), std::env::vars_os())
    }

    /// The variables of the file at `dotenv_path` (when it exists), overridden by the
    /// `BOR_*` ones of `environment` that have a value.
    fn from_sources(
        dotenv_path: &Path,
        environment: impl IntoIterator<Item = (OsString, OsString)>,
    ) -> Result<Loaded, ConfigError> {
        let mut problems = Vec::new();
        let mut vars = HashMap::new();
        let mut names = Vec::new();
        match dotenvy::from_path_iter(dotenv_path) {
            Ok(lines) => {
                for line in lines {
                    match line {
                        Ok((name, value)) => {
                            names.push(name.clone());
                            insert_if_set(&mut vars, name, value);
                        }
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
            names.push(name.to_owned());
            match value.into_string() {
                Ok(value) => insert_if_set(&mut vars, name.to_owned(), value),
                Err(_) => problems.push(format!("{name} is not valid UTF-8")),
            }
        }
        let warnings = unknown_variables(names);
        match Self::from_vars_with(vars, problems) {
            Ok(config) => Ok(Loaded { config, warnings }),
            // A misspelt name may be why a variable seems wrong: said with the problems.
            Err(mut error) => {
                error.problems.extend(warnings);
                Err(error)
            }
        }
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

    /// What an operator reads when the embeddings server serves no embeddings: which
    /// variable sends them where (the URL without credentials), and how to change it.
    pub fn embeddings_fix(&self) -> String {
        match &self.llm_embed_base_url {
            Some(url) => format!(
                "embeddings go to BOR_LLM_EMBED_BASE_URL={}; point it at a server that serves \
                 embeddings (llama.cpp's server with an embedding model and --embeddings, \
                 vLLM with an embedding model, TEI)",
                redact_url_credentials(url)
            ),
            None => format!(
                "BOR_LLM_EMBED_BASE_URL is unset, so embeddings go to BOR_LLM_BASE_URL={}, the \
                 chat server; set BOR_LLM_EMBED_BASE_URL to the embeddings server (`make run` \
                 serves one on http://127.0.0.1:18088/v1, which `scripts/bor` sets)",
                redact_url_credentials(&self.llm_base_url)
            ),
        }
    }

    /// The database URL with its password replaced, for logs and status pages.
    pub fn database_url_redacted(&self) -> String {
        redact_url_password(&self.database_url)
    }

    fn from_vars_with(
        mut vars: HashMap<String, String>,
        mut problems: Vec<String>,
    ) -> Result<Config, ConfigError> {
        read_variable_files(&mut vars, &mut problems);
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
        if config.auth == AuthMode::Off && !config.bind.ip().is_loopback() {
            check.problem(format!(
                "BOR_AUTH=off is refused on BOR_BIND={}: without sign-in bor must listen on a loopback address (127.0.0.1 or ::1)",
                config.bind
            ));
        }
        if config.ocr == OcrMode::Vision && config.ocr_model.is_none() {
            check.problem(
                "BOR_OCR=vision but BOR_OCR_MODEL is unset: name the vision model that transcribes the pages"
                    .to_owned(),
            );
        }
        if config.oidc_issuer.is_some() && config.oidc_client_id.is_none() {
            check.problem(
                "BOR_OIDC_ISSUER is set but BOR_OIDC_CLIENT_ID is not: set the client id bor has at the provider"
                    .to_owned(),
            );
        }
        if config.auth_proxy_header.is_some() && config.auth_proxy_trusted.is_empty() {
            check.problem(
                "BOR_AUTH_PROXY_HEADER is set but BOR_AUTH_PROXY_TRUSTED is not: name the proxy's addresses (CIDR list, such as 127.0.0.1/32)"
                    .to_owned(),
            );
        }
        check.finish().map(|()| config)
    }
}

/// `BOR_` and the field's name in upper case: `llm_retries` → `BOR_LLM_RETRIES`.
fn variable_name(field: &str) -> String {
    format!("{PREFIX}{}", field.to_ascii_uppercase())
}

/// One warning per distinct `BOR_` name that is neither a variable nor a tooling one,
/// in the order first seen, with the variable it most resembles when one is close.
pub(crate) fn unknown_variables(names: Vec<String>) -> Vec<String> {
    let mut warnings = Vec::new();
    let mut seen = std::collections::HashSet::new();
    for name in names {
        let Some(field) = name.strip_prefix(PREFIX) else {
            continue;
        };
        let field = field.to_ascii_lowercase();
        let read_from_file = field
            .strip_suffix(&FILE_SUFFIX.to_ascii_lowercase())
            .is_some_and(|named| FILE_VARIABLES.contains(&named));
        let tooling = TOOLING_VARIABLES.contains(&name.as_str())
            || name.starts_with("BOR_TEST_")
            || name.starts_with("BOR_BROWSER_");
        if FIELDS.contains(&field.as_str())
            || read_from_file
            || tooling
            || !seen.insert(name.clone())
        {
            continue;
        }
        warnings.push(match closest_variable(&field) {
            Some(known) => format!(
                "{name} is not a bor variable and is ignored; did you mean {}?",
                variable_name(known)
            ),
            None => format!("{name} is not a bor variable and is ignored"),
        });
    }
    warnings
}

/// The known variable whose name is nearest to `field` (both after the prefix, lower
/// case): at most a third of its letters apart, or one name inside the other.
fn closest_variable(field: &str) -> Option<&'static str> {
    FIELDS
        .iter()
        .map(|known| (strsim::levenshtein(field, known), *known))
        .filter(|(distance, known)| {
            *distance <= known.len().max(field.len()) / 3
                || (field.len().min(known.len()) >= 4
                    && (known.contains(field) || field.contains(known)))
        })
        .min_by_key(|(distance, _)| *distance)
        .map(|(_, known)| known)
}

/// Keeps a variable only when it has a value: empty (or blank) counts as unset.
fn insert_if_set(vars: &mut HashMap<String, String>, name: String, value: String) {
    let value = value.trim();
    if !value.is_empty() {
        vars.insert(name, value.to_owned());
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
