//! Building and running the service: migrations, the pool, the LogActor (started
//! before the HTTP server, once per process), the HTTP server on its listener, and a
//! graceful stop on SIGTERM/SIGINT that flushes the LogActor.

use std::net::TcpListener;
use std::sync::Arc;
use std::time::Duration;

use actix::{Actor, Addr};
use actix_web::dev::{Server, ServerHandle};
use actix_web::{App, HttpServer, web};
use bor_actors::log::{DEFAULT_QUEUE_CAPACITY, Flush, LogActor};

use crate::config::Config;
use crate::db::{self, DbError, DbPool};
use crate::http;
use crate::knowledge::PgKnowledge;
use crate::query_log_store::PgQueryLogStore;
use crate::state::AppState;

/// How long a stopping service waits for the LogActor to write its queue.
const LOG_FLUSH_TIMEOUT: Duration = Duration::from_secs(10);

#[derive(Debug, thiserror::Error)]
pub enum StartupError {
    #[error("cannot bind {address}: {source}")]
    Bind {
        address: String,
        source: std::io::Error,
    },
    #[error("database: {0}")]
    Database(#[from] DbError),
}

/// A built service, listening, not yet serving.
pub struct Application {
    port: u16,
    server: Server,
    log: Addr<LogActor>,
    state: web::Data<AppState>,
}

impl Application {
    /// Applies migrations, starts the LogActor and binds `config.bind` (port 0 picks a
    /// free port). Must run inside an actix system.
    pub async fn build(config: Config) -> Result<Application, StartupError> {
        let applied = db::run_migrations(&config.database_url).await?;
        for migration in &applied {
            tracing::info!(%migration, "migration applied");
        }
        let pool = DbPool::new(&config.database_url, config.db_pool_size)?;
        let log = LogActor::new(
            Arc::new(PgQueryLogStore::new(pool.clone())),
            DEFAULT_QUEUE_CAPACITY,
        )
        .start();
        let knowledge = Arc::new(PgKnowledge::new(pool.clone()));
        let config = Arc::new(config);
        let state = web::Data::new(AppState::new(
            Arc::clone(&config),
            pool,
            knowledge,
            log.clone(),
        ));

        let address = config.bind.to_string();
        let bind_error = |source| StartupError::Bind {
            address: address.clone(),
            source,
        };
        let listener = TcpListener::bind(config.bind).map_err(bind_error)?;
        let port = listener.local_addr().map_err(bind_error)?.port();
        let app_state = state.clone();
        let server = HttpServer::new(move || {
            App::new()
                .app_data(app_state.clone())
                .configure(http::routes)
        })
        .disable_signals()
        // Frames are small writes: each goes out at once rather than after the client's
        // delayed ACK of the last one.
        .tcp_nodelay(true)
        .shutdown_timeout(config.shutdown_grace.as_secs().max(1))
        .listen(listener)
        .map_err(bind_error)?
        .run();
        Ok(Application {
            port,
            server,
            log,
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

    /// Serves until the server stops, then writes the LogActor's queue.
    pub async fn run_until_stopped(self) -> std::io::Result<()> {
        let result = self.server.await;
        flush_log(&self.log).await;
        result
    }

    /// Serves until SIGTERM or SIGINT, then stops gracefully.
    pub async fn run_until_signalled(self) -> std::io::Result<()> {
        let handle = self.server.handle();
        actix_web::rt::spawn(async move {
            wait_for_stop_signal().await;
            tracing::info!("stop signal received; finishing turns in flight");
            handle.stop(true).await;
        });
        self.run_until_stopped().await
    }
}

async fn flush_log(log: &Addr<LogActor>) {
    match tokio::time::timeout(LOG_FLUSH_TIMEOUT, log.send(Flush)).await {
        Ok(Ok(0)) => tracing::info!("query log flushed"),
        Ok(Ok(left)) => tracing::error!(left, "query log rows could not be written before exit"),
        Ok(Err(err)) => tracing::error!(error = %err, "query log actor unavailable at exit"),
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
