//! The `bor` command line: `serve` (the default), `migrate` and `check`.

use std::process::ExitCode;
use std::sync::Arc;

use bor_actors::llm::LlmClient;
use clap::{Parser, Subcommand};

use crate::config::Config;
use crate::db::{self, DbPool};
use crate::startup::Application;
use crate::state::llm_settings;
use crate::telemetry;

#[derive(Debug, Parser)]
#[command(name = "bor", version, about = "Chat with your own knowledge base")]
pub struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Serve the chat page and the API (the default).
    Serve,
    /// Apply pending database migrations, then exit.
    Migrate,
    /// Probe the database and the LLM server and say what is missing.
    Check,
    /// Import Markdown (.md, .markdown) and plain-text (.txt) files into the knowledge
    /// base; folders are read recursively (hidden entries left out). Other files are
    /// skipped with a line each; unchanged files are left as they are.
    Import {
        /// Files and folders to import.
        #[arg(required = true)]
        paths: Vec<std::path::PathBuf>,
    },
}

/// Runs the command; configuration problems stop it before anything starts.
pub async fn run(cli: Cli) -> ExitCode {
    let config = match Config::from_env() {
        Ok(config) => config,
        Err(error) => {
            eprintln!("bor: invalid configuration:\n{error}");
            return ExitCode::from(2);
        }
    };
    telemetry::init(&config.log);
    match cli.command.unwrap_or(Command::Serve) {
        Command::Serve => serve(config).await,
        Command::Migrate => migrate(config).await,
        Command::Check => check(config).await,
        Command::Import { paths } => crate::import::run(&config, &paths).await,
    }
}

async fn serve(config: Config) -> ExitCode {
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

async fn migrate(config: Config) -> ExitCode {
    match db::run_migrations(&config.database_url).await {
        Ok(applied) if applied.is_empty() => {
            println!("The database is up to date.");
            ExitCode::SUCCESS
        }
        Ok(applied) => {
            for name in applied {
                println!("applied {name}");
            }
            ExitCode::SUCCESS
        }
        Err(error) => {
            eprintln!(
                "bor: migrations failed on {}: {}",
                config.database_url_redacted(),
                error_chain(&error)
            );
            ExitCode::FAILURE
        }
    }
}

/// One line per dependency: what was found, and what to do when something is missing.
async fn check(config: Config) -> ExitCode {
    let mut healthy = true;
    let mut report = |name: &str, outcome: Result<String, String>| match outcome {
        Ok(found) => println!("ok       {name:<14} {found}"),
        Err(problem) => {
            healthy = false;
            println!("MISSING  {name:<14} {problem}");
        }
    };

    report("database", check_database(&config).await);
    let llm = LlmClient::new(Arc::new(llm_settings(&config)));
    match llm.list_models().await {
        Ok(models) => {
            report("LLM server", Ok(format!("{} answers", config.llm_base_url)));
            for (what, model) in [
                ("chat model", &config.llm_chat_model),
                ("embed model", &config.llm_embed_model),
            ] {
                let listed = models.iter().any(|m| m == model);
                report(
                    what,
                    if listed {
                        Ok(format!("{model} is listed"))
                    } else {
                        Err(format!(
                            "{model} is not among the server's models ({}); set BOR_LLM_{}_MODEL",
                            models.join(", "),
                            if what == "chat model" {
                                "CHAT"
                            } else {
                                "EMBED"
                            }
                        ))
                    },
                );
            }
            report(
                "embeddings",
                llm.embed(vec!["bor check".to_owned()], |_, _| {})
                    .await
                    .map(|vectors| {
                        let dimension = vectors.first().map_or(0, Vec::len);
                        format!("{dimension} dimensions")
                    })
                    .map_err(|error| format!("the server cannot embed: {error}")),
            );
        }
        Err(error) => report(
            "LLM server",
            Err(format!(
                "{} does not answer ({error}). Start an OpenAI-compatible server there (`make run` starts one) or set BOR_LLM_BASE_URL.",
                config.llm_base_url
            )),
        ),
    }
    if healthy {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}

async fn check_database(config: &Config) -> Result<String, String> {
    let url = config.database_url_redacted();
    let missing = |error: &db::DbError| {
        format!(
            "{url} is not reachable ({}). Start PostgreSQL (`make run` does) or set BOR_DATABASE_URL.",
            error_chain(error)
        )
    };
    let pool = DbPool::new(&config.database_url, 1).map_err(|error| missing(&error))?;
    let mut conn = pool.get().await.map_err(|error| missing(&error))?;
    let status = db::migration_status(&mut conn)
        .await
        .map_err(|error| format!("{url}: cannot read migrations ({})", error_chain(&error)))?;
    if status.pending.is_empty() {
        Ok(format!(
            "{url} (migrations: {} applied)",
            status.applied.len()
        ))
    } else {
        Err(format!(
            "{url} has {} pending migration(s); run `bor migrate` (or start `bor serve`)",
            status.pending.len()
        ))
    }
}

/// An error with its sources, for one line of output.
pub(crate) fn error_chain(error: &dyn std::error::Error) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        text.push_str(": ");
        text.push_str(&cause.to_string());
        source = cause.source();
    }
    text
}
