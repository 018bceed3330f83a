use std::process::ExitCode;

use clap::Parser;

#[actix_web::main]
async fn main() -> ExitCode {
    bor::cli::run(bor::cli::Cli::parse()).await
}
