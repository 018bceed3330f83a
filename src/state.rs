//! What every request handler shares.

use std::sync::Arc;

use std::time::Duration;

use actix::{Actor, Addr};
use bor_actors::frame_hub::{DEFAULT_MAX_KEPT_BYTES, FrameHub};
use bor_actors::llm::{EmbedPrefixes, LlmSettings, RerankServer};
use bor_actors::log::{Backlog, LogActor};
use bor_actors::rerank::RerankSettings;
use bor_actors::turn::TurnSettings;
use tokio::sync::Semaphore;

use crate::auth::Accounts;
use crate::config::{AllowedHosts, Config};
use crate::db::DbPool;

use crate::history_cache::HistoryCache;
use crate::knowledge::KnowledgeService;
use crate::knowledge::chunking::ChunkingSettings;
use crate::lifecycle::Lifecycle;
use crate::stored_history::StoredHistories;
use crate::turn_owners::TurnOwners;

pub struct AppState {
    pub config: Arc<Config>,
    pub pool: DbPool,
    pub llm: Arc<LlmSettings>,
    pub turn: Arc<TurnSettings>,
    /// The knowledge base: each turn gets it scoped to its asker's collections.
    pub library: KnowledgeService,
    pub log: Addr<LogActor>,
    /// How many rows wait in the LogActor's queue: past its mark no turn starts.
    pub log_backlog: Backlog,
    /// One permit per turn that may run at once (`BOR_MAX_CONCURRENT_TURNS`).
    pub turn_slots: Arc<Semaphore>,
    /// Sign-in: the mode, the credentials in memory, the failure limiter.
    pub accounts: Arc<Accounts>,
    /// Uptime, and the stop sequence: refusing turns, then stopping those left.
    pub lifecycle: Lifecycle,
    /// The host names requests may name (`BOR_PUBLIC_URL`, `BOR_ALLOWED_HOSTS`).
    pub allowed_hosts: AllowedHosts,
    /// The frames of `/api/chat` turns, for their readers (docs/PROTOCOL.md,
    /// "Following a turn").
    pub frame_hub: Addr<FrameHub>,
    /// Which instance runs each turn, for readers that reach another one.
    pub turn_owners: TurnOwners,
    /// The limits on turns and tokens, and the use counted against them.
    pub usage: Arc<crate::usage::UsageLimits>,
    /// The stored histories of the conversations turns continue, read together.
    pub histories: StoredHistories,
}

impl AppState {
    pub fn new(
        config: Arc<Config>,
        pool: DbPool,
        library: KnowledgeService,
        (log, log_backlog): (Addr<LogActor>, Backlog),
        accounts: Arc<Accounts>,
        usage: Arc<crate::usage::UsageLimits>,
        histories: Arc<HistoryCache>,
    ) -> Self {
        let replay_for = Duration::from_secs(config.turn_replay_seconds.into());
        Self {
            library,
            llm: Arc::new(llm_settings(&config)),
            turn: Arc::new(turn_settings(&config)),
            turn_slots: Arc::new(Semaphore::new(config.max_concurrent_turns)),
            lifecycle: Lifecycle::new(),
            allowed_hosts: AllowedHosts::from_config(&config),
            frame_hub: FrameHub::new(replay_for, DEFAULT_MAX_KEPT_BYTES).start(),
            turn_owners: TurnOwners::start(pool.clone(), replay_for),
            histories: StoredHistories::new(pool.clone(), histories),
            config,
            pool,
            log,
            log_backlog,
            accounts,
            usage,
        }
    }
}

/// The LLM part of the configuration.
pub fn llm_settings(config: &Config) -> LlmSettings {
    LlmSettings {
        base_url: config.llm_base_url.clone(),
        embed_base_url: config.llm_embed_url().to_owned(),
        api_key: config
            .llm_api_key
            .as_ref()
            .map(|key| key.expose().to_owned()),
        chat_model: config.llm_chat_model.clone(),
        embed_model: config.llm_embed_model.clone(),
        embed_prefixes: EmbedPrefixes {
            query: config.llm_embed_query_prefix.clone(),
            document: config.llm_embed_document_prefix.clone(),
        },
        retries: config.llm_retries,
        retry_delay: config.llm_retry_delay,
        connect_timeout: config.llm_connect_timeout,
        read_timeout: config.llm_read_timeout,
        temperature: config.llm_temperature,
        max_tokens: Some(config.llm_max_tokens),
        embeddings_fix: config.embeddings_fix(),
        rerank: config
            .rerank_base_url
            .as_ref()
            .map(|base_url| RerankServer {
                base_url: base_url.clone(),
                model: config.rerank_model.clone(),
                api_key: config
                    .rerank_api_key
                    .as_ref()
                    .map(|key| key.expose().to_owned()),
            }),
        stream_usage: Default::default(),
    }
}

/// Re-ranking, when a re-ranking server is set.
pub fn rerank_settings(config: &Config) -> Option<RerankSettings> {
    config.rerank_base_url.as_ref().map(|_| RerankSettings {
        candidates: config.rerank_candidates,
        timeout: config.rerank_timeout,
    })
}

/// Chunk size and overlap for imports.
pub fn chunking_settings(config: &Config) -> ChunkingSettings {
    ChunkingSettings {
        max_chars: config.chunk_chars,
        overlap: config.chunk_overlap,
    }
}

fn turn_settings(config: &Config) -> TurnSettings {
    TurnSettings {
        agent_enabled: config.agent_enabled,
        max_rounds: config.agent_max_rounds,
        top_k: config.retrieval_top_k,
        rerank: rerank_settings(config),
        deflect_threshold: config.deflect_threshold,
        thinking_forced_open: config.llm_thinking_forced_open,
        chat_model: config.llm_chat_model.clone(),
        max_answer_chars: config.max_answer_chars,
    }
}
