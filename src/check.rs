//! `bor check`: the readiness report of `GET /api/admin/health` on the command line, one
//! line per dependency (what was found, or what to do when it is missing), the watched
//! files' states, then the configuration and the status.

use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use bor_actors::error_chain;
use bor_actors::llm::{EmbedPurpose, LlmClient};

use crate::config::{Config, ConfigView, OcrMode};
use crate::db::{DbPool, watched_files};
use crate::health::{DatabaseHealth, Dependencies, KnowledgeHealth};
use crate::knowledge::formats;
use crate::state::llm_settings;

/// How long each probe of `bor check` may take.
const CHECK_TIMEOUT: Duration = Duration::from_secs(5);

/// The command: exit code non-zero when something is missing.
pub async fn run(config: &Config) -> ExitCode {
    let mut healthy = true;
    let mut report = |name: &str, outcome: Result<String, String>| match outcome {
        Ok(found) => println!("ok       {name:<14} {found}"),
        Err(problem) => {
            healthy = false;
            println!("MISSING  {name:<14} {problem}");
        }
    };

    let llm = LlmClient::new(Arc::new(llm_settings(config)));
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
    // The model's dimension is not known before the probe: chunks of the dimension most
    // have are counted.
    let dependencies = Dependencies::probe(config, &pool, &llm, None, CHECK_TIMEOUT).await;
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
            llm.embed(EmbedPurpose::Query, vec!["bor check".to_owned()], |_, _| {})
                .await
                .map(|vectors| {
                    let dimension = vectors.first().map_or(0, Vec::len);
                    format!("{dimension} dimensions")
                })
                .map_err(|error| format!("the server cannot embed: {error}")),
        );
    }
    report("knowledge base", knowledge_line(knowledge));
    report("OCR", ocr_line(config).await);
    if let Ok(mut conn) = pool.get().await {
        print_watched_files(&mut conn).await;
    }

    println!("{:<8} {:<14} {}", "", "version", env!("CARGO_PKG_VERSION"));
    for (variable, value) in ConfigView::from(config).variables() {
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

/// Whether scanned pages and images can be read as `BOR_OCR` says; what to do when not.
async fn ocr_line(config: &Config) -> Result<String, String> {
    match config.ocr {
        OcrMode::Off => Ok(
            "off (BOR_OCR=off): scanned PDF pages and images are skipped with the reason"
                .to_owned(),
        ),
        OcrMode::Vision => {
            let checked = tokio::task::spawn_blocking(formats::check_renderer)
                .await
                .unwrap_or_else(|error| Err(format!("the check failed ({error})")));
            checked
                .map(|version| {
                    format!(
                        "the vision model {} transcribes scanned PDF pages (rendered by {version}) and images",
                        config.ocr_model.as_deref().unwrap_or_default()
                    )
                })
                .map_err(|problem| {
                    format!(
                        "{problem}: scanned PDF pages are skipped. Install Debian's poppler-utils (`make run` does), or set BOR_OCR=off"
                    )
                })
        }
        OcrMode::Tesseract => {
            let languages = config.ocr_languages.clone();
            let checked = tokio::task::spawn_blocking(move || formats::check_tesseract(&languages))
                .await
                .unwrap_or_else(|error| Err(format!("the check failed ({error})")));
            checked
                .map(|version| {
                    format!(
                        "{version} ({}), with Poppler's pdftoppm: pages with fewer than {} characters of text are read at {} DPI",
                        config.ocr_languages, config.ocr_min_chars, config.ocr_dpi
                    )
                })
                .map_err(|problem| {
                    format!(
                        "{problem}: scanned PDF pages and images are skipped. Install Debian's tesseract-ocr, tesseract-ocr-eng and poppler-utils (`make run` does), or set BOR_OCR=off"
                    )
                })
        }
    }
}

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
            // Retrieval still works, so the line stays ok; the status says `degraded`.
            if let Some(count) = knowledge.other_embedder.filter(|count| *count > 0) {
                line.push_str(&format!(
                    " ({count} embedded by another model or document prefix: run `bor reembed`)"
                ));
            }
            Ok(line)
        }
        _ => Err(format!(
            "cannot be read ({})",
            knowledge.error.as_deref().unwrap_or("no answer")
        )),
    }
}
