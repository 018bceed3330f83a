//! `bor-mock-llm`: the mock LLM server on a fixed port, for demos and manual tests.

use std::net::SocketAddr;
use std::time::Duration;

use bor_mock_llm::MockLlm;
use clap::Parser;

/// A deterministic OpenAI-compatible server; see the crate docs for the MOCK directives.
#[derive(Parser)]
#[command(version)]
struct Args {
    /// Address to listen on.
    #[arg(long, default_value = "127.0.0.1:18089")]
    bind: SocketAddr,
    /// Pause between streamed chunks, in milliseconds.
    #[arg(long, default_value_t = 0)]
    token_delay_ms: u64,
    /// Components of each embedding.
    #[arg(long, default_value_t = 64)]
    embedding_dim: usize,
}

fn main() -> std::io::Result<()> {
    let args = Args::parse();
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info")),
        )
        .init();
    let mock = MockLlm::builder()
        .bind(args.bind)
        .token_delay(Duration::from_millis(args.token_delay_ms))
        .embedding_dim(args.embedding_dim)
        .without_request_records()
        .start()?;
    tracing::info!(base_url = %mock.base_url(), "mock LLM listening");
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?
        .block_on(tokio::signal::ctrl_c())?;
    tracing::info!("stopping");
    drop(mock);
    Ok(())
}
