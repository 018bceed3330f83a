//! The `bor` command line: `serve` (the default), `migrate`, `check`, `import`, `watch`,
//! `eval`, `reembed` and `user`.

use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use bor_actors::llm::LlmClient;
use clap::{Parser, Subcommand};

use crate::config::{Config, ConfigView};
use crate::db::{self, DbPool, watched_files};
use crate::health::{DatabaseHealth, Dependencies, KnowledgeHealth};
use crate::startup::Application;
use crate::state::llm_settings;
use crate::telemetry;
use bor_actors::error_chain;

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
    /// Probe the database, the LLM server and the knowledge base, and say what is missing.
    Check,
    /// Import Markdown, plain-text, PDF, HTML and Word files, and web pages, into the
    /// knowledge base; folders are read recursively (hidden entries left out). Other
    /// files are skipped with a line each; unchanged files and pages are left as they
    /// are.
    Import {
        /// Files, folders and web addresses (http:// or https://) to import.
        #[arg(required = true)]
        paths: Vec<std::path::PathBuf>,
        /// Also remove the documents whose files are gone from the folders named.
        #[arg(long)]
        sync: bool,
        /// Import up to N pages of each web address's site (its sitemap, else its
        /// links), not only the page named.
        #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=i64::from(crate::web::crawl::MAX_CRAWL_PAGES)))]
        crawl: Option<u32>,
        /// The collection to import into (made when absent; default: `default`).
        #[arg(long, value_name = "NAME")]
        collection: Option<String>,
    },
    /// Keep folders in step until stopped: import them (removing the documents of files
    /// gone), then import, replace or remove each file created, changed, deleted or
    /// renamed in them.
    Watch {
        /// Folders to watch (recursively; hidden entries left out).
        #[arg(required = true)]
        folders: Vec<std::path::PathBuf>,
        /// The collection to keep them in (made when absent; default: `default`).
        #[arg(long, value_name = "NAME")]
        collection: Option<String>,
    },
    /// Measure retrieval on a test collection in the BEIR layout (nDCG@10, recall, MRR).
    ///
    /// DIR holds corpus.jsonl ({"_id","title","text"} a line), queries.jsonl
    /// ({"_id","text"}) and qrels/test.tsv (a header, then `query-id corpus-id score`),
    /// or qrels/train.tsv when there is no test split (--qrels names another file). The
    /// corpus is imported into the knowledge base (once: unchanged documents are left as
    /// they are, and stay there); every judged query is ranked as a turn ranks it, and
    /// nDCG@10, Recall@10, Recall@5 and MRR@10 are printed for full text alone, vectors
    /// alone and fused, with the ranking and embedding latencies at p50 and p99.
    Eval {
        /// The collection's folder.
        dir: std::path::PathBuf,
        /// The judgements to use instead of qrels/test.tsv or qrels/train.tsv.
        #[arg(long, value_name = "FILE")]
        qrels: Option<std::path::PathBuf>,
        /// Import the corpus into this collection (made when absent) and rank among its
        /// documents only.
        #[arg(long, value_name = "NAME")]
        collection: Option<String>,
        /// Print the figures as one JSON object.
        #[arg(long)]
        json: bool,
    },
    /// Embed anew, from their stored text, the documents embedded with another
    /// embedding model (vectors of another dimension) than the one configured now.
    Reembed,
    /// Manage the people who sign in (BOR_AUTH=accounts).
    User {
        #[command(subcommand)]
        command: crate::user_command::UserCommand,
    },
}

/// Runs the command; configuration problems stop it before anything starts.
pub async fn run(cli: Cli) -> ExitCode {
    let (config, warnings) = match Config::from_env() {
        Ok(loaded) => (loaded.config, loaded.warnings),
        Err(error) => {
            eprintln!("bor: invalid configuration:\n{error}");
            return ExitCode::from(2);
        }
    };
    telemetry::init(&config.log, config.log_format);
    for warning in warnings {
        tracing::warn!("{warning}");
    }
    match cli.command.unwrap_or(Command::Serve) {
        Command::Serve => serve(config).await,
        Command::Migrate => migrate(config).await,
        Command::Check => check(config).await,
        Command::Import {
            paths,
            sync,
            crawl,
            collection,
        } => {
            let options = crate::import::ImportOptions {
                sync,
                crawl: crawl.map(|pages| pages as usize),
            };
            crate::import::run(&config, &paths, collection.as_deref(), &options).await
        }
        Command::Watch {
            folders,
            collection,
        } => crate::watch::run(&config, &folders, collection.as_deref()).await,
        Command::Eval {
            dir,
            qrels,
            collection,
            json,
        } => crate::eval::run(&config, &dir, qrels.as_deref(), collection.as_deref(), json).await,
        Command::Reembed => crate::reembed::run(&config).await,
        Command::User { command } => crate::user_command::run(&config, command).await,
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

/// How long each probe of `bor check` may take.
const CHECK_TIMEOUT: Duration = Duration::from_secs(5);

/// The readiness report of `GET /api/admin/health`, one line per item: what was found,
/// and what to do when something is missing; then the configuration and the status.
async fn check(config: Config) -> ExitCode {
    let mut healthy = true;
    let mut report = |name: &str, outcome: Result<String, String>| match outcome {
        Ok(found) => println!("ok       {name:<14} {found}"),
        Err(problem) => {
            healthy = false;
            println!("MISSING  {name:<14} {problem}");
        }
    };

    let llm = LlmClient::new(Arc::new(llm_settings(&config)));
    let pool = match DbPool::new(&config.database_url, CHECK_POOL_SIZE) {
        Ok(pool) => pool,
        Err(error) => {
            report(
                "database",
                Err(format!(
                    "{}: {}",
                    config.database_url_redacted(),
                    error_chain(&error)
                )),
            );
            return ExitCode::FAILURE;
        }
    };
    let dependencies = Dependencies::probe(&config, &pool, &llm, CHECK_TIMEOUT).await;
    let Dependencies {
        database,
        knowledge,
        ..
    } = &dependencies;

    report("database", database_line(database));
    let mut all_reachable = true;
    for (server_name, server) in dependencies.llm_servers() {
        let label = if server.chat_model.is_none() {
            "embed server"
        } else {
            "LLM server"
        };
        if !server.reachable {
            all_reachable = false;
            let variable = if server.chat_model.is_none() {
                "BOR_LLM_EMBED_BASE_URL"
            } else {
                "BOR_LLM_BASE_URL"
            };
            report(
                label,
                Err(format!(
                    "{} does not answer ({}). Start an OpenAI-compatible server there (`make run` starts one) or set {variable}.",
                    server.url,
                    server.error.as_deref().unwrap_or("no answer"),
                )),
            );
            continue;
        }
        report(
            label,
            Ok(format!(
                "{} answers in {} ms",
                server.url,
                server.latency_ms.unwrap_or_default()
            )),
        );
        for (what, variable, model) in [
            ("chat model", "BOR_LLM_CHAT_MODEL", &server.chat_model),
            ("embed model", "BOR_LLM_EMBED_MODEL", &server.embed_model),
        ] {
            let Some(model) = model else { continue };
            report(
                what,
                if model.listed == Some(true) {
                    Ok(format!("{} is listed", model.name))
                } else {
                    Err(format!(
                        "{} is not among the models of the {server_name} ({}); set {variable}",
                        model.name,
                        server.models.join(", "),
                    ))
                },
            );
        }
    }
    if all_reachable {
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
    report("knowledge base", knowledge_line(knowledge));
    if let Ok(mut conn) = pool.get().await {
        print_watched_files(&mut conn).await;
    }

    println!("{:<8} {:<14} {}", "", "version", env!("CARGO_PKG_VERSION"));
    for (variable, value) in ConfigView::from(&config).variables() {
        println!("{:<8} {:<14} {variable}={value}", "", "config");
    }
    let assessment = dependencies.assess();
    let mut status = assessment.status.as_str().to_owned();
    if !assessment.problems.is_empty() {
        status = format!("{status}: {}", assessment.problems.join("; "));
    }
    println!("{:<8} {status}", "status");
    if healthy {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}

/// Skipped files `bor check` names (the most recent first).
const CHECK_SKIPPED_SHOWN: i64 = 20;

/// What the watcher (`bor watch`, `BOR_WATCH`) last did with the files it watches, when
/// it has watched any: the counts, then each file skipped with why.
async fn print_watched_files(conn: &mut diesel_async::AsyncPgConnection) {
    let Ok(counts) = watched_files::counts(conn).await else {
        return;
    };
    if counts.is_empty() {
        return;
    }
    let counts: Vec<String> = counts
        .iter()
        .map(|(state, count)| format!("{count} {state}"))
        .collect();
    println!("ok       {:<14} {}", "watched files", counts.join(", "));
    for (path, reason) in watched_files::skipped(conn, CHECK_SKIPPED_SHOWN)
        .await
        .unwrap_or_default()
    {
        let reason = reason.unwrap_or_default();
        println!("{:<8} {:<14} {path}: {reason}", "", "skipped");
    }
}

/// Connections `bor check` needs: its probes run at once.
const CHECK_POOL_SIZE: usize = 2;

fn database_line(database: &DatabaseHealth) -> Result<String, String> {
    let url = &database.url;
    let Some(migrations) = &database.migrations else {
        return Err(format!(
            "{url} is not reachable ({}). Start PostgreSQL (`make run` does) or set BOR_DATABASE_URL.",
            database.error.as_deref().unwrap_or("no answer")
        ));
    };
    if migrations.pending.is_empty() {
        Ok(format!(
            "{url} answers in {} ms (migrations: {} applied)",
            database.latency_ms.unwrap_or_default(),
            migrations.applied
        ))
    } else {
        Err(format!(
            "{url} has {} pending migration(s); run `bor migrate` (or start `bor serve`)",
            migrations.pending.len()
        ))
    }
}

fn knowledge_line(knowledge: &KnowledgeHealth) -> Result<String, String> {
    match (knowledge.documents, knowledge.chunks) {
        (Some(documents), Some(chunks)) => {
            let mut line = format!("{documents} documents, {chunks} chunks");
            if let Some(dimension) = knowledge.embedding_dimension {
                line.push_str(&format!(", embeddings of {dimension} dimensions"));
            }
            Ok(line)
        }
        _ => Err(format!(
            "cannot be read ({})",
            knowledge.error.as_deref().unwrap_or("no answer")
        )),
    }
}
