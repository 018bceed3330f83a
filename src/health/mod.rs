//! Readiness: probes of the service's dependencies, run at once and each under its own
//! timeout, and the report built from them. `GET /api/admin/health` serves it as JSON;
//! `bor check` prints it.
//!
//! Status rules: `down` when the database is unreachable; `degraded` when the LLM
//! server is unreachable, a configured model is not listed by it, `query_log` rows
//! wait in the LogActor's queue (or the LogActor does not answer), or chunks were
//! embedded otherwise than the model embeds now (of another dimension, or of its
//! dimension by another recorded model or document prefix); else `ok`.

mod probes;

use std::sync::Arc;
use std::time::Duration;

use bor_actors::llm::LlmClient;
use bor_actors::log::{GetLogStats, LogStats, TurnCounts};
use serde::Serialize;
use utoipa::ToSchema;

use crate::config::{Config, ConfigView, redact_url_credentials};
use crate::db::{self, DbPool};
use crate::lifecycle;
use crate::state::AppState;

pub use probes::{
    DatabaseHealth, KnowledgeHealth, LlmHealth, Migrations, ModelListing, ServerRole,
};

/// How long each probe of `GET /api/admin/health` may take: the endpoint answers within
/// about a second even when a dependency hangs.
pub const ENDPOINT_PROBE_TIMEOUT: Duration = Duration::from_millis(800);

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    Ok,
    Degraded,
    Down,
}

impl Status {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Ok => "ok",
            Self::Degraded => "degraded",
            Self::Down => "down",
        }
    }
}

/// The service's dependencies, probed at once.
#[derive(Debug, Clone, PartialEq)]
pub struct Dependencies {
    pub database: DatabaseHealth,
    /// The chat server (and the embeddings server, unless that is another one).
    pub llm: LlmHealth,
    /// The embeddings server when `BOR_LLM_EMBED_BASE_URL` names another server.
    pub llm_embeddings: Option<LlmHealth>,
    pub knowledge: KnowledgeHealth,
}

impl Dependencies {
    /// `model_dimension`: the embedding model's dimension, when known (the running
    /// service's index holds it).
    pub async fn probe(
        config: &Config,
        pool: &DbPool,
        llm: &LlmClient,
        model_dimension: Option<usize>,
        timeout: Duration,
    ) -> Dependencies {
        let separate = llm.settings().separate_embeddings_server();
        let embeddings = LlmClient::new(Arc::new(llm.settings().embeddings_server()));
        let chat_role = if separate {
            ServerRole::Chat
        } else {
            ServerRole::Both
        };
        let embeddings_probe = async {
            if separate {
                let url = redact_url_credentials(config.llm_embed_url());
                Some(probes::llm(&embeddings, ServerRole::Embeddings, url, timeout).await)
            } else {
                None
            }
        };
        let embedder = db::chunks::embedder_of(llm.settings());
        let (database, llm, llm_embeddings, knowledge) = futures_util::join!(
            probes::database(pool, config.database_url_redacted(), timeout),
            probes::llm(
                llm,
                chat_role,
                redact_url_credentials(&config.llm_base_url),
                timeout
            ),
            embeddings_probe,
            probes::knowledge(pool, &embedder, model_dimension, timeout),
        );
        Dependencies {
            database,
            llm,
            llm_embeddings,
            knowledge,
        }
    }

    /// The status these dependencies allow, and why it is not `ok`.
    pub fn assess(&self) -> Assessment {
        let mut assessment = Assessment {
            status: Status::Ok,
            problems: Vec::new(),
        };
        if !self.database.reachable {
            assessment.status = Status::Down;
            assessment
                .problems
                .push("the database is unreachable".to_owned());
        }
        for (server, health) in self.llm_servers() {
            if !health.reachable {
                assessment.degrade(format!("the {server} is unreachable"));
            }
            for (role, model) in [
                ("chat", &health.chat_model),
                ("embedding", &health.embed_model),
            ] {
                if let Some(model) = model
                    && model.listed == Some(false)
                {
                    assessment.degrade(format!(
                        "the {role} model {} is not listed by the {server}",
                        model.name
                    ));
                }
            }
        }
        if let Some(count) = self.knowledge.other_embedder
            && count > 0
        {
            assessment.degrade(format!(
                "{count} chunks were embedded by another model or document prefix than the one configured: run `bor reembed`"
            ));
        }
        assessment
    }

    /// Each LLM server probed, with the name problems use for it.
    pub fn llm_servers(&self) -> Vec<(&'static str, &LlmHealth)> {
        let mut servers = vec![("LLM server", &self.llm)];
        if let Some(embeddings) = &self.llm_embeddings {
            servers.push(("embeddings server", embeddings));
        }
        servers
    }
}

/// An overall status with its reasons.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Assessment {
    pub status: Status,
    pub problems: Vec<String>,
}

impl Assessment {
    /// Rows waiting in the LogActor's queue, or a LogActor that did not answer, degrade.
    fn consider_log(&mut self, stats: Option<&LogStats>) {
        match stats {
            None => self.degrade("the log actor does not answer".to_owned()),
            Some(stats) if stats.queued > 0 => self.degrade(format!(
                "{} query_log row(s) wait to be written",
                stats.queued
            )),
            Some(_) => {}
        }
    }

    /// Adds a problem that makes the service `degraded` (unless it is already `down`).
    fn degrade(&mut self, problem: String) {
        if self.status == Status::Ok {
            self.status = Status::Degraded;
        }
        self.problems.push(problem);
    }
}

/// The readiness report of a running service.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct HealthReport {
    pub status: Status,
    /// Why the status is not `ok`, one sentence each.
    pub problems: Vec<String>,
    pub version: String,
    pub uptime_seconds: u64,
    pub database: DatabaseHealth,
    /// The chat server (and the embeddings server, unless that is another one).
    pub llm: LlmHealth,
    /// The embeddings server when `BOR_LLM_EMBED_BASE_URL` names another server, else
    /// `null`.
    pub llm_embeddings: Option<LlmHealth>,
    pub knowledge: KnowledgeHealth,
    pub turns: TurnsHealth,
    /// `null` when the LogActor did not answer in time.
    pub log: Option<LogHealth>,
    pub config: ConfigView,
}

/// Chat turns now and since start.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct TurnsHealth {
    pub in_flight: usize,
    /// `BOR_MAX_CONCURRENT_TURNS`.
    pub max: usize,
    /// `false` once the service is stopping.
    pub accepting: bool,
    /// Turns ended since start, as the LogActor counted them; `null` when it did not
    /// answer in time.
    pub ended: Option<TurnCounts>,
}

/// The LogActor's queue and writes since start.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct LogHealth {
    /// Rows waiting to be written.
    pub queued: usize,
    /// New turns are refused (503 `busy`) while this many rows or more wait
    /// (`BOR_LOG_QUEUE_ROWS`).
    pub high_water: usize,
    pub written: u64,
    /// Write attempts that failed (each is retried).
    pub failed_writes: u64,
    /// Rows given up because the queue was full: only after an outage longer than the
    /// queue lasts.
    pub dropped: u64,
    /// Rows given up because the database refused them (the log names their turns).
    pub refused: u64,
}

/// Turns holding a slot now.
pub fn turns_in_flight(state: &AppState) -> usize {
    lifecycle::in_flight(&state.turn_slots, state.config.max_concurrent_turns)
}

/// Probes everything the running service depends on and reports.
pub async fn report(state: &AppState) -> HealthReport {
    let llm = LlmClient::new(Arc::clone(&state.llm));
    let (dependencies, stats) = futures_util::join!(
        Dependencies::probe(
            &state.config,
            &state.pool,
            &llm,
            state.library.index().stats().dimension,
            ENDPOINT_PROBE_TIMEOUT
        ),
        tokio::time::timeout(ENDPOINT_PROBE_TIMEOUT, state.log.send(GetLogStats)),
    );
    let stats = stats.ok().and_then(Result::ok);
    let mut assessment = dependencies.assess();
    assessment.consider_log(stats.as_ref());
    let Dependencies {
        database,
        llm,
        llm_embeddings,
        mut knowledge,
    } = dependencies;
    let mismatch = state.library.index().stats().dimension_mismatch;
    if mismatch > 0 {
        assessment.degrade(format!(
            "{mismatch} chunks have embeddings of another dimension than the model's: run `bor reembed`"
        ));
    }
    knowledge.dimension_mismatch = Some(mismatch);
    HealthReport {
        status: assessment.status,
        problems: assessment.problems,
        version: env!("CARGO_PKG_VERSION").to_owned(),
        uptime_seconds: state.lifecycle.uptime().as_secs(),
        database,
        llm,
        llm_embeddings,
        knowledge,
        turns: TurnsHealth {
            in_flight: turns_in_flight(state),
            max: state.config.max_concurrent_turns,
            accepting: state.lifecycle.is_accepting(),
            ended: stats.map(|stats| stats.turns),
        },
        log: stats.map(|stats| LogHealth {
            queued: stats.queued,
            high_water: state.log_backlog.high_water(),
            written: stats.written,
            failed_writes: stats.failed_writes,
            dropped: stats.dropped,
            refused: stats.refused,
        }),
        config: ConfigView::from(state.config.as_ref()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dependencies() -> Dependencies {
        let listed = |name: &str| ModelListing {
            name: name.to_owned(),
            listed: Some(true),
        };
        Dependencies {
            database: DatabaseHealth {
                url: "postgres://postgres@127.0.0.1:5432/bor".into(),
                reachable: true,
                latency_ms: Some(1.0),
                migrations: Some(Migrations {
                    applied: 3,
                    pending: Vec::new(),
                }),
                error: None,
            },
            llm: LlmHealth {
                url: "http://127.0.0.1:18089/v1".into(),
                reachable: true,
                latency_ms: Some(1.0),
                chat_model: Some(listed("chat")),
                embed_model: Some(listed("embed")),
                models: vec!["chat".into(), "embed".into()],
                error: None,
            },
            llm_embeddings: None,
            knowledge: KnowledgeHealth {
                documents: Some(0),
                chunks: Some(0),
                embedding_dimension: None,
                dimension_mismatch: None,
                other_embedder: None,
                error: None,
            },
        }
    }

    #[test]
    fn everything_up_is_ok() {
        let assessment = dependencies().assess();
        assert_eq!(assessment.status, Status::Ok);
        assert!(assessment.problems.is_empty());
    }

    #[test]
    fn an_unreachable_llm_or_an_unlisted_model_degrades() {
        let mut unreachable = dependencies();
        unreachable.llm.reachable = false;
        for model in [
            &mut unreachable.llm.chat_model,
            &mut unreachable.llm.embed_model,
        ]
        .into_iter()
        .flatten()
        {
            model.listed = None;
        }
        let assessment = unreachable.assess();
        assert_eq!(assessment.status, Status::Degraded);
        assert_eq!(assessment.problems, ["the LLM server is unreachable"]);

        let mut unlisted = dependencies();
        if let Some(model) = &mut unlisted.llm.embed_model {
            model.listed = Some(false);
        }
        let assessment = unlisted.assess();
        assert_eq!(assessment.status, Status::Degraded);
        assert_eq!(
            assessment.problems,
            ["the embedding model embed is not listed by the LLM server"]
        );
    }

    #[test]
    fn a_separate_embeddings_server_is_assessed_on_its_own() {
        let mut two = dependencies();
        two.llm.embed_model = None;
        let mut embeddings = two.llm.clone();
        embeddings.url = "http://127.0.0.1:18088/v1".into();
        embeddings.chat_model = None;
        embeddings.embed_model = Some(ModelListing {
            name: "embed".into(),
            listed: Some(true),
        });
        two.llm_embeddings = Some(embeddings);
        assert_eq!(two.assess().status, Status::Ok);

        let mut down = two.clone();
        if let Some(embeddings) = &mut down.llm_embeddings {
            embeddings.reachable = false;
            embeddings.embed_model = Some(ModelListing {
                name: "embed".into(),
                listed: None,
            });
        }
        let assessment = down.assess();
        assert_eq!(assessment.status, Status::Degraded);
        assert_eq!(
            assessment.problems,
            ["the embeddings server is unreachable"]
        );

        let mut unlisted = two;
        if let Some(model) = unlisted
            .llm_embeddings
            .as_mut()
            .and_then(|e| e.embed_model.as_mut())
        {
            model.listed = Some(false);
        }
        assert_eq!(
            unlisted.assess().problems,
            ["the embedding model embed is not listed by the embeddings server"]
        );
    }

    #[test]
    fn chunks_another_embedder_made_degrade() {
        let mut none = dependencies();
        none.knowledge.other_embedder = Some(0);
        assert_eq!(none.assess().status, Status::Ok);

        let mut some = dependencies();
        some.knowledge.other_embedder = Some(3);
        let assessment = some.assess();
        assert_eq!(assessment.status, Status::Degraded);
        assert_eq!(
            assessment.problems,
            [
                "3 chunks were embedded by another model or document prefix than the one configured: run `bor reembed`"
            ]
        );
    }

    #[test]
    fn an_unreachable_database_is_down_whatever_else() {
        let mut down = dependencies();
        down.database.reachable = false;
        down.llm.reachable = false;
        let assessment = down.assess();
        assert_eq!(assessment.status, Status::Down);
        assert_eq!(assessment.problems.len(), 2);
        let mut assessment = assessment;
        assessment.consider_log(None);
        assert_eq!(assessment.status, Status::Down);
        assert_eq!(assessment.problems.len(), 3);
    }

    #[test]
    fn rows_waiting_in_the_log_queue_or_a_silent_log_actor_degrade() {
        let mut idle = dependencies().assess();
        idle.consider_log(Some(&LogStats::default()));
        assert_eq!(idle.status, Status::Ok);

        let mut waiting = dependencies().assess();
        waiting.consider_log(Some(&LogStats {
            queued: 2,
            ..LogStats::default()
        }));
        assert_eq!(waiting.status, Status::Degraded);
        assert_eq!(waiting.problems, ["2 query_log row(s) wait to be written"]);

        let mut silent = dependencies().assess();
        silent.consider_log(None);
        assert_eq!(silent.status, Status::Degraded);
    }
}
