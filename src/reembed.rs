//! `bor reembed`: embeds anew, from their stored text, the documents whose chunks were
//! embedded otherwise than the embedding model configured now embeds (another dimension,
//! or another model name or document prefix recorded with the chunks), so that
//! retrieval compares like with like. Documents that already fit
//! are left as they are; `make run` runs it after importing the sample knowledge base.

use std::process::ExitCode;
use std::sync::Arc;
use std::time::Instant;

use bor_actors::llm::LlmClient;

use crate::config::Config;
use crate::db::{self, DbError, DbPool, chunks, documents};
use crate::knowledge::ingest::{IngestError, Ingestor, ModelDimension, SourceDocument, Unobserved};
use crate::state::{chunking_settings, llm_settings};
use bor_actors::error_chain;

/// The command: exit code non-zero when it had to stop.
pub async fn run(config: &Config) -> ExitCode {
    let started = Instant::now();
    match reembed(config).await {
        Ok((documents, chunks, dimension)) => {
            if documents == 0 {
                println!(
                    "reembed: every document fits the embedding model ({dimension} dimensions)"
                );
            } else {
                println!(
                    "reembed: {documents} document(s), {chunks} chunks embedded anew for the embedding model ({dimension} dimensions) in {:.1} s",
                    started.elapsed().as_secs_f64()
                );
            }
            ExitCode::SUCCESS
        }
        Err(error) => {
            eprintln!("bor reembed: stopped: {}", error_chain(&error));
            ExitCode::FAILURE
        }
    }
}

#[derive(Debug, thiserror::Error)]
enum ReembedError {
    #[error(transparent)]
    Database(#[from] DbError),
    #[error(transparent)]
    Ingest(#[from] IngestError),
}

/// (documents re-embedded, their chunks, the model's dimension).
async fn reembed(config: &Config) -> Result<(usize, usize, usize), ReembedError> {
    db::run_migrations(&config.database_url).await?;
    let pool = DbPool::new(&config.database_url, 2)?;
    let ingestor = Ingestor::new(
        pool.clone(),
        LlmClient::new(Arc::new(llm_settings(config))),
        chunking_settings(config),
        Arc::new(ModelDimension::default()),
    );
    let dimension = ingestor.model_dimension(&Unobserved).await?;
    let stale = {
        let mut conn = pool.get().await?;
        let ids =
            chunks::documents_embedded_otherwise(&mut conn, dimension, ingestor.embedder()).await?;
        documents::documents_by_ids(&mut conn, &ids).await?
    };
    let mut chunks = 0;
    for document in &stale {
        let source = SourceDocument {
            title: document.title.clone(),
            source: document.source.clone(),
            content: document.content.clone(),
            content_type: document.content_type.clone(),
            page_starts: document
                .page_starts
                .iter()
                .filter_map(|&start| usize::try_from(start).ok())
                .collect(),
            // Only the chunks are written anew; the stored row keeps its pages' sources.
            pages: Vec::new(),
            collection_id: Some(document.collection_id),
            added_by: document.adder(),
        };
        let outcome = ingestor.ingest(&source, &Unobserved).await?;
        chunks += outcome.chunks();
        println!(
            "re-embedded {} ({} chunks)",
            document.source.as_deref().unwrap_or(&document.title),
            outcome.chunks()
        );
    }
    Ok((stale.len(), chunks, dimension))
}
