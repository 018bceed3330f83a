use std::process::ExitCode;

use clap::Parser;

/// glibc's allocator took a fifth of bor's processor time under a full load of turns;
/// jemalloc takes far less, for a little more memory per turn (docs/ARCHITECTURE.md,
/// "Memory allocator").
#[global_allocator]
static ALLOCATOR: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;

#[actix_web::main]
async fn main() -> ExitCode {
    bor::cli::run(bor::cli::Cli::parse()).await
}
