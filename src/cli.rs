//! The `bor` command line: `serve` (the default), `migrate`, `check`, `import`, `watch`,
//! `eval`, `reembed` and `user`.

use std::process::ExitCode;

use clap::{Parser, Subcommand};

use crate::config::Config;
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
    /// Probe the database, the LLM server and the knowledge base, and say what is missing.
    Check,
    /// Import Markdown, plain-text, PDF, HTML and Word files, images of pages (PNG,
    /// JPEG, TIFF, WebP, read by OCR), and web pages, into the knowledge base; folders are read recursively (hidden entries left out). Other
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
        /// The collection's folder (not with --feedback).
        #[arg(required_unless_present = "feedback", conflicts_with = "feedback")]
        dir: Option<std::path::PathBuf>,
        /// Measure on this instance's own evaluation set instead: the rated turns an
        /// admin named the passages for (each run kept, the runs before it shown).
        #[arg(long, conflicts_with_all = ["qrels", "collection"])]
        feedback: bool,
        /// With --feedback: write the evaluation set in the BEIR layout to this folder
        /// instead of running it.
        #[arg(long, value_name = "DIR", requires = "feedback")]
        export: Option<std::path::PathBuf>,
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
        Command::Serve => crate::startup::serve(config).await,
        Command::Migrate => crate::migrate::run(&config).await,
        Command::Check => crate::check::run(&config).await,
        Command::Import {
            paths,
            sync,
            crawl,
            collection,
        } => {
            let options = crate::import::ImportOptions {
                sync,
                limits: crate::knowledge::read_limits(&config),
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
            feedback,
            export,
            qrels,
            collection,
            json,
        } => match dir {
            Some(dir) if !feedback => {
                crate::eval::run(&config, &dir, qrels.as_deref(), collection.as_deref(), json).await
            }
            _ => crate::eval::run_feedback(&config, export.as_deref(), json).await,
        },
        Command::Reembed => crate::reembed::run(&config).await,
        Command::User { command } => crate::user_command::run(&config, command).await,
    }
}

#[cfg(test)]
mod tests {
    use clap::CommandFactory;

    use super::Cli;

    /// clap's checks of the definitions (names, conflicts, value parsers) run otherwise
    /// only as a command line is parsed in a debug build, for the subcommand given; this
    /// runs them for every subcommand.
    #[test]
    fn the_command_line_is_well_formed() {
        Cli::command().debug_assert();
    }
}
