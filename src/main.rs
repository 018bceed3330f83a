use std::process::ExitCode;

use clap::Parser;

/// glibc's allocator took a fifth of bor's processor time under a full load of turns
/// (docs/ARCHITECTURE.md, "Memory allocator"); mimalloc takes far less of it.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

#[actix_web::main]
async fn main() -> ExitCode {
    bor::cli::run(bor::cli::Cli::parse()).await
}
