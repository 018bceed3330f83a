//! `bor migrate`: applies the pending database migrations, then exits.

use std::process::ExitCode;

use bor_actors::error_chain;

use crate::config::Config;
use crate::db;

/// The command: a line per migration applied, exit code non-zero when one fails.
pub async fn run(config: &Config) -> ExitCode {
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
