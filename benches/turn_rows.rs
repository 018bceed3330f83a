//! `make bench-turn-rows`: how fast the LogActor's store writes turns' rows, written to
//! the "Writing turns" section of `bench/RESULTS.md`.
//!
//! Two measurements, on a fresh database each:
//! - the `query_log` statement alone, the way bor writes it (one `INSERT … SELECT FROM
//!   unnest(…)` of one array per column) against `COPY` (text format into a temporary
//!   table, then `INSERT … SELECT … ON CONFLICT DO NOTHING`, since a row written twice
//!   must be skipped), in batches of 100, 500 and 2,000 rows;
//! - the whole write of a batch (`query_log_store::write_turns`: the conversations, their
//!   search words and the rows in one transaction) with a new conversation per turn,
//!   with every turn in one of 100 conversations, and the same with every tenth row a
//!   new version of its conversation's last turn (whose conversation's search words are
//!   then made again).
//!
//! `cargo bench --bench turn_rows -- [--turns N] [--no-write]`. Needs PostgreSQL at
//! `BOR_TEST_DATABASE_URL`, as the tests do.

#![expect(
    clippy::expect_used,
    reason = "a benchmark stops at the first unexpected value"
)]

use std::fmt::Write as _;
use std::path::Path;
use std::time::{Duration, Instant};

use bor::db::query_log::{self, NewQueryLogEntry};
use bor::query_log_store::write_turns;
use bor::testing::{TestDatabase, query_log_entry};
use bytes::Bytes;
use futures_util::SinkExt;
use uuid::Uuid;

const START: &str = "<!-- turn-rows-bench:start -->";
const END: &str = "<!-- turn-rows-bench:end -->";
const BATCHES: [usize; 3] = [100, 500, 2_000];

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let turns = args
        .iter()
        .position(|arg| arg == "--turns")
        .and_then(|i| args.get(i + 1))
        .and_then(|value| value.parse().ok())
        .unwrap_or(60_000usize);
    let write = !args.iter().any(|arg| arg == "--no-write");
    let section = actix_web::rt::System::new().block_on(run(turns));
    println!("{section}");
    if write {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("bench/RESULTS.md");
        match bor_test_support::write_results_section(&path, START, END, &section) {
            Ok(()) => eprintln!("written to {}", path.display()),
            Err(error) => eprintln!("cannot write {}: {error}", path.display()),
        }
    }
}

/// A turn as the mock LLM's load runs make them: a short question, an answer of about
/// 200 characters, one source.
fn turn(n: usize, conversation_id: Option<Uuid>) -> NewQueryLogEntry {
    NewQueryLogEntry {
        question: format!("What does the handbook say about topic {n}?"),
        answer: format!(
            "The handbook covers topic {n} in its chapter on onboarding: who to ask, \
             which forms to fill in, and where the equipment is kept. Ask the office \
             manager for anything it leaves out [1]."
        ),
        conversation_id,
        ..query_log_entry()
    }
}

fn rate(rows: usize, elapsed: Duration) -> String {
    format!("{:.0}", rows as f64 / elapsed.as_secs_f64())
}

async fn run(turns: usize) -> String {
    let mut table = String::from(
        "| batch | `INSERT … SELECT FROM unnest` rows/s | `COPY` + `INSERT … SELECT` rows/s |\n|---|---|---|\n",
    );
    for batch in BATCHES {
        let unnest = time_batches(turns, batch, Statement::Unnest).await;
        let copy = time_batches(turns, batch, Statement::Copy).await;
        let _ = writeln!(
            table,
            "| {batch} | {} | {} |",
            rate(turns, unnest),
            rate(turns, copy)
        );
    }
    let mut whole = String::from(
        "| batch | new conversation per turn, rows/s | 100 conversations, rows/s | 100 conversations, every tenth row a version, rows/s |\n|---|---|---|---|\n",
    );
    for batch in BATCHES {
        let new = time_whole(turns, batch, None, false).await;
        let existing = time_whole(turns, batch, Some(100), false).await;
        let versions = time_whole(turns, batch, Some(100), true).await;
        let _ = writeln!(
            whole,
            "| {batch} | {} | {} | {} |",
            rate(turns, new),
            rate(turns, existing),
            rate(turns, versions)
        );
    }
    format!(
        "{START}\n## Writing turns (`make bench-turn-rows`)\n\n\
         {turns} turns of about 250 characters each, written in batches into a fresh \
         database, one batch at a time, on a machine of {cores} cores.\n\n\
         The `query_log` statement alone:\n\n{table}\n\
         The whole write of a batch (`write_turns`: conversations, their search words and \
         the rows, in one transaction):\n\n{whole}{END}",
        cores = std::thread::available_parallelism().map_or(0, usize::from),
    )
}

#[derive(Clone, Copy)]
enum Statement {
    Unnest,
    Copy,
}

/// Writes `turns` rows without conversations, `batch` at a time, with `statement`.
async fn time_batches(turns: usize, batch: usize, statement: Statement) -> Duration {
    let db = TestDatabase::migrated().await;
    let mut diesel = db.connect().await;
    let (client, connection) = tokio_postgres::connect(db.url(), tokio_postgres::NoTls)
        .await
        .expect("a COPY connection");
    actix_web::rt::spawn(connection);
    let rows: Vec<NewQueryLogEntry> = (0..turns).map(|n| turn(n, None)).collect();
    let started = Instant::now();
    for chunk in rows.chunks(batch) {
        match statement {
            Statement::Unnest => {
                query_log::insert(&mut diesel, chunk)
                    .await
                    .expect("rows written");
            }
            Statement::Copy => copy_rows(&client, chunk).await,
        }
    }
    started.elapsed()
}

/// `COPY` in text format into a temporary table, then the rows not yet stored.
async fn copy_rows(client: &tokio_postgres::Client, rows: &[NewQueryLogEntry]) {
    const COLUMNS: &str = "turn_id, created_at, question, answer, path, status, chat_model, \
         rounds, tool_calls, retries, scaffold_stripped, recovered, sources, first_token_ms, \
         elapsed_ms, conversation_id, user_id, searched_query";
    client
        .batch_execute(
            "BEGIN; CREATE TEMPORARY TABLE IF NOT EXISTS incoming \
             (LIKE query_log INCLUDING DEFAULTS) ON COMMIT DELETE ROWS",
        )
        .await
        .expect("a temporary table");
    let sink = client
        .copy_in::<_, Bytes>(&format!("COPY incoming ({COLUMNS}) FROM STDIN"))
        .await
        .expect("COPY starts");
    let mut text = String::new();
    for row in rows {
        let fields = [
            row.turn_id.to_string(),
            row.created_at.to_rfc3339(),
            copy_text(&row.question),
            copy_text(&row.answer),
            row.path.0.as_str().to_owned(),
            row.status.0.as_str().to_owned(),
            copy_text(&row.chat_model),
            row.rounds.to_string(),
            row.tool_calls.to_string(),
            row.retries.to_string(),
            row.scaffold_stripped.to_string(),
            row.recovered.to_string(),
            copy_text(&row.sources.to_string()),
            row.first_token_ms
                .map_or_else(|| "\\N".to_owned(), |ms| ms.to_string()),
            row.elapsed_ms.to_string(),
            row.conversation_id
                .map_or_else(|| "\\N".to_owned(), |id| id.to_string()),
            row.user_id
                .map_or_else(|| "\\N".to_owned(), |id| id.to_string()),
            row.searched_query
                .as_deref()
                .map_or_else(|| "\\N".to_owned(), copy_text),
        ];
        text.push_str(&fields.join("\t"));
        text.push('\n');
    }
    let mut sink = std::pin::pin!(sink);
    sink.send(Bytes::from(text)).await.expect("rows sent");
    sink.finish().await.expect("COPY ends");
    client
        .batch_execute(&format!(
            "INSERT INTO query_log ({COLUMNS}) SELECT {COLUMNS} FROM incoming \
             ORDER BY id ON CONFLICT (turn_id) DO NOTHING; COMMIT"
        ))
        .await
        .expect("rows moved");
}

/// A text field in `COPY`'s text format.
fn copy_text(text: &str) -> String {
    text.replace('\\', "\\\\")
        .replace('\t', "\\t")
        .replace('\n', "\\n")
        .replace('\r', "\\r")
}

/// Writes `turns` turns through `write_turns`, `batch` at a time: each in a new
/// conversation, or spread over `conversations` of them; with `versions`, every tenth
/// row is a new version of its conversation's row before it.
async fn time_whole(
    turns: usize,
    batch: usize,
    conversations: Option<usize>,
    versions: bool,
) -> Duration {
    let db = TestDatabase::migrated().await;
    let mut conn = db.connect().await;
    let ids: Vec<Uuid> = (0..conversations.unwrap_or(0))
        .map(|_| Uuid::new_v4())
        .collect();
    let mut rows: Vec<NewQueryLogEntry> = Vec::with_capacity(turns);
    for n in 0..turns {
        let conversation = if ids.is_empty() {
            Uuid::new_v4()
        } else {
            ids[n % ids.len()]
        };
        let version_of = match rows.get(n.wrapping_sub(ids.len())) {
            Some(before) if versions && n % 10 == 9 => {
                Some(before.version_of.unwrap_or(before.turn_id))
            }
            _ => None,
        };
        rows.push(NewQueryLogEntry {
            version_of,
            ..turn(n, Some(conversation))
        });
    }
    let started = Instant::now();
    for chunk in rows.chunks(batch) {
        write_turns(&mut conn, chunk, None)
            .await
            .expect("turns written");
    }
    started.elapsed()
}
