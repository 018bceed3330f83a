//! Building and running the service: migrations, the pool, the LogActor (started
//! before the HTTP server, once per process), the HTTP server on its listener (every
//! request under its request-id span), and a graceful stop on SIGTERM/SIGINT: turns
//! first (see [`crate::lifecycle`]), then the LogActor's queue, then the server.

use crate::usage::{SystemClock, UsageLimits};
use std::net::{Ipv4Addr, Ipv6Addr, SocketAddr, TcpListener};
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use actix::{Actor, Addr};
use actix_web::dev::{Server, ServerHandle};
use actix_web::{App, HttpServer, middleware, web};
use bor_actors::llm::LlmClient;
use bor_actors::log::{Flush, LogActor, QueueBounds};
use utoipa_actix_web::AppExt;

use crate::auth::{self, Accounts};
use crate::config::AuthMode;
use crate::config::Config;
use crate::conversations::HISTORY_LIMIT;
use crate::db::{self, DbError, DbPool};
use crate::history_cache::HistoryCache;
use crate::http;
use crate::knowledge::KnowledgeService;
use crate::knowledge::notify::IndexFollower;
use crate::notify::{self, Follower, Subscription};
use crate::query_log_store::PgQueryLogStore;
use crate::state::{AppState, chunking_settings, llm_settings};

/// How long a stopping service waits for the LogActor to write its queue.
const LOG_FLUSH_TIMEOUT: Duration = Duration::from_secs(10);
/// How long the HTTP server waits for open connections once it stops; turns have had
/// their grace before (see [`crate::lifecycle`]).
const SERVER_STOP_TIMEOUT_SECS: u64 = 5;
/// Connections of the LogActor's own pool: one per write it has in flight.
const LOG_WRITER_CONNECTIONS: usize = bor_actors::log::WRITES_IN_FLIGHT;

/// Descriptors kept for everything but client connections: the log, the listener,
/// files, the notification connection.
const RESERVED_DESCRIPTORS: u64 = 64;

/// The process's open-file limit, raised to its hard limit first. Unknown: 1024, the
/// usual default.
fn open_file_limit() -> u64 {
    rlimit::increase_nofile_limit(u64::MAX).unwrap_or_else(|error| {
        tracing::warn!(error = %bor_actors::error_chain(&error), "cannot read or raise the open-file limit; assuming 1024");
        1024
    })
}

/// Client connections each HTTP worker accepts: half of the descriptors left after the
/// pool and [`RESERVED_DESCRIPTORS`], since a client's turn may open a connection to the
/// LLM server too. Past it, connections wait in the listen queue instead of failing
/// every open of a file or socket (docs/LIMITS.md).
fn connections_per_worker(open_files: u64, workers: usize, pool_size: usize) -> usize {
    let spare = open_files.saturating_sub(RESERVED_DESCRIPTORS + pool_size as u64);
    let per_worker = spare / 2 / (workers.max(1) as u64);
    usize::try_from(per_worker).unwrap_or(usize::MAX).max(1)
}

#[derive(Debug, thiserror::Error)]
pub enum StartupError {
    #[error("cannot bind {address}: {source}")]
    Bind {
        address: String,
        source: std::io::Error,
    },
    #[error("database: {0}")]
    Database(#[from] DbError),
    #[error("cannot listen for changes on the database: {0}")]
    Listen(#[from] tokio_postgres::Error),
    #[error("BOR_WATCH: {0}")]
    Watch(String),
}

/// A built service, listening, not yet serving.
pub struct Application {
    port: u16,
    server: Server,
    state: web::Data<AppState>,
}

impl Application {
    /// Applies migrations, builds the shared state ([`build_state`]) and binds
    /// `config.bind` (port 0 picks a free port). Must run inside an actix system.
    pub async fn build(config: Config) -> Result<Application, StartupError> {
        let state = build_state(config).await?;
        Application::listen(state)
    }

    /// Binds `state.config.bind` and starts the HTTP server's workers on it, every
    /// request under the middleware of [`http`]; the server serves once awaited.
    fn listen(state: web::Data<AppState>) -> Result<Application, StartupError> {
        let config = Arc::clone(&state.config);
        if !config.bind.ip().is_loopback() && state.allowed_hosts.names_nothing() {
            tracing::warn!(
                bind = %config.bind,
                "requests that reach bor by a name other than localhost are refused (421): set BOR_PUBLIC_URL to the address people use, or BOR_ALLOWED_HOSTS to the names they use"
            );
        }
        let address = config.bind.to_string();
        let bind_error = |source| StartupError::Bind {
            address: address.clone(),
            source,
        };
        let listener = TcpListener::bind(config.bind).map_err(bind_error)?;
        let port = listener.local_addr().map_err(bind_error)?.port();
        state
            .turn_owners
            .set_instance_url(instance_url(&config, port));
        let app_state = state.clone();
        let description = web::Data::new(http::ApiDescription::new());
        let workers = std::thread::available_parallelism().map_or(1, usize::from);
        let server = HttpServer::new(move || {
            App::new()
                .app_data(app_state.clone())
                .app_data(description.clone())
                .wrap(middleware::from_fn(http::door))
                .wrap(middleware::from_fn(http::cors))
                .wrap(middleware::from_fn(http::refuse_nul))
                .wrap(middleware::from_fn(http::refuse_repeated_forwarded_for))
                .wrap(middleware::from_fn(http::allowed_host))
                .wrap(middleware::from_fn(http::security_headers))
                .wrap(middleware::from_fn(http::head_as_get))
                .wrap(middleware::from_fn(http::request_id))
                .into_utoipa_app()
                .configure(http::routes)
                .into_app()
        })
        .disable_signals()
        // Frames are small writes: each goes out at once rather than after the client's
        // delayed ACK of the last one.
        .tcp_nodelay(true)
        // A client that closes its side has left: the request's handler is dropped at
        // once (a turn waiting for its whole answer stops, its upstream request with it)
        // instead of running on for nobody.
        .h1_allow_half_closed(false)
        .max_connections(connections_per_worker(
            open_file_limit(),
            workers,
            config.db_pool_size + LOG_WRITER_CONNECTIONS,
        ))
        .workers(workers)
        .shutdown_timeout(SERVER_STOP_TIMEOUT_SECS)
        .listen(listener)
        .map_err(bind_error)?
        .run();
        Ok(Application {
            port,
            server,
            state,
        })
    }

    pub fn port(&self) -> u16 {
        self.port
    }

    pub fn state(&self) -> web::Data<AppState> {
        self.state.clone()
    }

    pub fn handle(&self) -> ServerHandle {
        self.server.handle()
    }

    /// Serves until the server stops, then writes what is left in the LogActor's queue.
    pub async fn run_until_stopped(self) -> std::io::Result<()> {
        let result = self.server.await;
        flush_log(&self.state.log).await;
        result
    }

    /// Serves until SIGTERM or SIGINT, then stops gracefully: no new turns, the turns
    /// in flight finish within `BOR_SHUTDOWN_GRACE` (the rest are stopped and recorded),
    /// then the HTTP server stops and the LogActor's queue is written.
    pub async fn run_until_signalled(self) -> std::io::Result<()> {
        let handle = self.server.handle();
        let state = self.state.clone();
        actix_web::rt::spawn(async move {
            wait_for_stop_signal().await;
            tracing::info!("stop signal received; refusing new turns");
            state
                .lifecycle
                .stop(
                    &state.turn_slots,
                    state.config.max_concurrent_turns,
                    state.config.shutdown_grace,
                )
                .await;
            // Written while the workers (and the pool connections they opened) live.
            flush_log(&state.log).await;
            handle.stop(true).await;
        });
        self.run_until_stopped().await
    }
}

/// What every handler shares, built and started: migrations applied, the pool, the
/// LogActor, the notification listener and its followers, accounts, the knowledge base
/// in memory and, with `BOR_WATCH`, the watcher. Must run inside an actix system.
pub async fn build_state(config: Config) -> Result<web::Data<AppState>, StartupError> {
    let applied = db::run_migrations(&config.database_url).await?;
    for migration in &applied {
        tracing::info!(%migration, "migration applied");
    }
    let pool = DbPool::new(&config.database_url, config.db_pool_size)?;
    // The writer has a connection of its own: turns waiting for the pool never hold
    // their own rows back.
    let log_pool = DbPool::new(&config.database_url, LOG_WRITER_CONNECTIONS)?;
    // Listening starts before the index, the credentials and the use counted are
    // loaded, so no change falls in between.
    let subscription = Subscription::connect(
        &config.database_url,
        &[
            crate::knowledge::notify::CHANNEL,
            auth::CHANNEL,
            auth::access::CHANNEL,
            crate::usage::CHANNEL,
            crate::history_cache::CHANNEL,
        ],
    )
    .await?;
    let histories = Arc::new(HistoryCache::new(HISTORY_LIMIT));
    // The listener hears every change from here on.
    histories.follow_from_now();
    let usage = UsageLimits::load(pool.clone(), Arc::new(SystemClock)).await?;
    let log = LogActor::new(
        Arc::new(PgQueryLogStore::new(log_pool, Arc::clone(&histories))),
        QueueBounds::for_turns(config.log_queue_rows, config.max_concurrent_turns),
    )
    .observed_by(usage.clone());
    let log_backlog = log.backlog();
    let log = log.start();
    let accounts = Arc::new(Accounts::start(&config, pool.clone()).await?);
    let given =
        crate::db::conversations::give_unowned_to_first_admin(&mut *pool.get().await?).await?;
    if given > 0 {
        tracing::info!(
            conversations = given,
            "conversations from before accounts given to the first admin"
        );
    }
    if config.auth == AuthMode::Accounts {
        say_how_to_sign_in(&pool).await;
    }
    let llm = LlmClient::new(Arc::new(llm_settings(&config)));
    let library =
        KnowledgeService::load(pool.clone(), llm.clone(), chunking_settings(&config)).await?;
    let library = if config.summaries {
        library.with_summaries(llm)
    } else {
        library
    };
    let stats = library.index().stats();
    let memory = library.index().memory_use();
    tracing::info!(
        chunks = stats.chunks,
        documents = stats.documents,
        dimension = ?stats.dimension,
        vector_bytes = memory.vectors,
        text_bytes = memory.chunks,
        full_text_bytes = memory.full_text,
        "knowledge base loaded into memory"
    );
    let followers: Vec<Arc<dyn Follower>> = vec![
        Arc::new(IndexFollower(Arc::clone(library.index()))),
        accounts.cache.clone(),
        accounts.access.clone(),
        usage.clone(),
        histories.clone(),
    ];
    actix_web::rt::spawn(notify::follow(
        config.database_url.clone(),
        subscription,
        followers,
    ));
    if let Some(folders) = &config.watch {
        let folders: Vec<_> = std::env::split_paths(folders).collect();
        let watch = crate::watch::start(&folders, crate::knowledge::read_limits(&config))
            .map_err(StartupError::Watch)?;
        let library = library.clone();
        actix_web::rt::spawn(async move {
            let say = |line: &str| tracing::info!(target: "bor::watch", "{line}");
            crate::watch::keep_in_step(&library, watch, &say).await;
        });
    }
    actix_web::rt::spawn(crate::audit::prune_forever(pool.clone(), config.audit_days));
    let config = Arc::new(config);
    let state = web::Data::new(AppState::new(
        Arc::clone(&config),
        pool,
        library,
        (log.clone(), log_backlog),
        accounts,
        usage,
        histories,
    ));
    Ok(state)
}

/// `bor serve`: builds the service and serves until SIGTERM or SIGINT; exit code non-zero
/// when it cannot start or the server fails.
pub async fn serve(config: Config) -> ExitCode {
    let bind = config.bind;
    let application = match Application::build(config).await {
        Ok(application) => application,
        Err(error) => {
            eprintln!("bor: cannot start: {error}");
            return ExitCode::FAILURE;
        }
    };
    tracing::info!(address = %bind, port = application.port(), "bor is listening");
    match application.run_until_signalled().await {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("bor: server error: {error}");
            ExitCode::FAILURE
        }
    }
}

/// With accounts and nobody to sign in yet, a log line says how to make the first
/// admin.
async fn say_how_to_sign_in(pool: &DbPool) {
    let users = match pool.get().await {
        Ok(mut conn) => crate::db::users::count(&mut conn).await,
        Err(error) => Err(error),
    };
    if let Ok(0) = users {
        tracing::warn!(
            "nobody can sign in yet: make the first admin with `bor user add NAME --admin` (or set BOR_AUTH=off on this machine alone)"
        );
    }
}

async fn flush_log(log: &Addr<LogActor>) {
    match tokio::time::timeout(LOG_FLUSH_TIMEOUT, log.send(Flush)).await {
        Ok(Ok(0)) => tracing::info!("query log flushed"),
        Ok(Ok(left)) => tracing::error!(left, "query log rows could not be written before exit"),
        Ok(Err(err)) => {
            tracing::error!(error = %bor_actors::error_chain(&err), "query log actor unavailable at exit")
        }
        Err(_) => tracing::error!("query log flush timed out"),
    }
}

async fn wait_for_stop_signal() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        match signal(SignalKind::terminate()) {
            Ok(mut terminate) => {
                tokio::select! {
                    _ = terminate.recv() => {}
                    _ = tokio::signal::ctrl_c() => {}
                }
            }
            Err(_) => {
                let _ = tokio::signal::ctrl_c().await;
            }
        }
    }
    #[cfg(not(unix))]
    {
        let _ = tokio::signal::ctrl_c().await;
    }
}

/// Where the other instances reach this one: `BOR_INSTANCE_URL`, else the address bound
/// with its `port` (an unspecified address read as loopback: instances on one machine).
fn instance_url(config: &Config, port: u16) -> String {
    if let Some(url) = &config.instance_url {
        return url.clone();
    }
    let ip = match config.bind.ip() {
        ip if ip.is_unspecified() && ip.is_ipv6() => Ipv6Addr::LOCALHOST.into(),
        ip if ip.is_unspecified() => Ipv4Addr::LOCALHOST.into(),
        ip => ip,
    };
    format!("http://{}", SocketAddr::new(ip, port))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn client_connections_leave_descriptors_for_everything_else() {
        // 1024 descriptors, 2 workers, a pool of 8: (1024 - 64 - 8) / 2 / 2.
        assert_eq!(connections_per_worker(1024, 2, 8), 238);
        assert_eq!(connections_per_worker(20_000, 1, 8), 9_964);
        assert_eq!(connections_per_worker(10, 4, 8), 1, "never none");
        assert_eq!(connections_per_worker(1024, 0, 8), 476);
    }
}
