//! `make bench-conversations`: listing and searching conversations at scale (10,000
//! conversations of 50 turns each by default), p50 and p99 of each query through the
//! same functions the API calls, written to the conversations section of
//! `bench/RESULTS.md`.
//!
//! `cargo bench --bench conversations -- [--conversations N] [--turns N] [--no-write]`.
//! Needs PostgreSQL at `BOR_TEST_DATABASE_URL`, as the tests do.

#![expect(
    clippy::expect_used,
    reason = "a test stops at the first unexpected value"
)]

use std::path::Path;
use std::time::{Duration, Instant};

use bor::db::conversations;
use bor::testing::TestDatabase;
use diesel::sql_query;
use diesel::sql_types::Integer;
use diesel_async::RunQueryDsl;

const START: &str = "<!-- conversations-bench:start -->";
const END: &str = "<!-- conversations-bench:end -->";
/// Times each query is run.
const RUNS: usize = 200;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let number = |flag: &str, default: i32| {
        args.iter()
            .position(|arg| arg == flag)
            .and_then(|i| args.get(i + 1))
            .and_then(|value| value.parse().ok())
            .unwrap_or(default)
    };
    let conversations = number("--conversations", 10_000);
    let turns = number("--turns", 50);
    let write = !args.iter().any(|arg| arg == "--no-write");
    let rows = actix_web::rt::System::new().block_on(run(conversations, turns));
    let section = section(conversations, turns, &rows);
    println!("{section}");
    if write {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("bench/RESULTS.md");
        match bor_test_support::write_results_section(&path, START, END, &section) {
            Ok(()) => eprintln!("written to {}", path.display()),
            Err(error) => eprintln!("cannot write {}: {error}", path.display()),
        }
    }
}

/// A query to measure: its label, the search words and the page cursor.
struct Case {
    query: &'static str,
    words: Vec<String>,
    before: Option<conversations::PageStart>,
}

/// One measured query: its label, p50 and p99, and how many conversations it found.
struct Row {
    query: &'static str,
    p50: Duration,
    p99: Duration,
    found: usize,
}

/// The one person whose conversations are listed: everyone's list is theirs alone.
const OWNER: uuid::Uuid = uuid::Uuid::from_u128(0xb0b);

async fn run(conversations: i32, turns: i32) -> Vec<Row> {
    let db = TestDatabase::migrated().await;
    let mut conn = db.connect().await;
    let started = Instant::now();
    sql_query("INSERT INTO users (id, username, display_name, role) VALUES ($1, 'bench', 'Bench', 'member')")
        .bind::<diesel::sql_types::Uuid, _>(OWNER)
        .execute(&mut conn)
        .await
        .expect("the owner is written");
    // Words drawn from a small vocabulary, so that some are common and one is rare.
    sql_query(
        "INSERT INTO conversations (id, title, created_at, updated_at, user_id)
         SELECT md5('c' || c)::uuid, 'Conversation ' || c || ' about ' || (ARRAY['kettles','gardens','invoices','tiles','printers'])[1 + c % 5],
                now() - (c || ' minutes')::interval, now() - (c || ' minutes')::interval, $2
         FROM generate_series(1, $1) AS c",
    )
    .bind::<Integer, _>(conversations)
    .bind::<diesel::sql_types::Uuid, _>(OWNER)
    .execute(&mut conn)
    .await
    .expect("conversations are written");
    sql_query(
        "INSERT INTO query_log (turn_id, created_at, question, answer, path, status, chat_model,
                                rounds, tool_calls, retries, scaffold_stripped, recovered, sources,
                                first_token_ms, elapsed_ms, conversation_id)
         SELECT md5('t' || c || '-' || t)::uuid,
                now() - (c || ' minutes')::interval + (t || ' seconds')::interval,
                'Question ' || t || ' on ' || (ARRAY['refunds','shipping','kettles','warranty','returns'])[1 + (c + t) % 5],
                'An answer of some length that mentions ' || (ARRAY['policy','delivery','boiling','repairs','labels'])[1 + (c * t) % 5]
                    || CASE WHEN c = 4242 AND t = 7 THEN ' zanzibar' ELSE '' END
                    || ' and repeats itself to be as long as a real answer would be, more or less.',
                'grounded', 'done', 'bench', 1, 0, 0, 0, false, '[]'::jsonb, 100, 1000,
                md5('c' || c)::uuid
         FROM generate_series(1, $1) AS c, generate_series(1, $2) AS t",
    )
    .bind::<Integer, _>(conversations)
    .bind::<Integer, _>(turns)
    .execute(&mut conn)
    .await
    .expect("turns are written");
    // The search words, as the writes of the turns would have made them: these
    // conversations are short enough for one part each.
    sql_query(
        "INSERT INTO conversation_search (conversation_id, part, words)
         SELECT c.id, 0, strip(to_tsvector('simple',
             (SELECT string_agg(q.question || ' ' || q.answer, ' ')
              FROM query_log AS q WHERE q.conversation_id = c.id)))
         FROM conversations AS c",
    )
    .execute(&mut conn)
    .await
    .expect("search documents");
    sql_query("ANALYZE")
        .execute(&mut conn)
        .await
        .expect("statistics");
    eprintln!(
        "{} conversations of {turns} turns written in {:.1} s",
        conversations,
        started.elapsed().as_secs_f64()
    );

    let first_page = conversations::list(&mut conn, OWNER, Default::default(), &[], 50, None)
        .await
        .expect("a page");
    let before = first_page.last().map(|c| conversations::PageStart {
        updated_at: c.updated_at,
        id: Some(c.id),
    });
    let words =
        |text: &str| -> Vec<String> { text.split_whitespace().map(str::to_owned).collect() };
    let case = |query, words, before| Case {
        query,
        words,
        before,
    };
    let cases = vec![
        case("first page (50)", Vec::new(), None),
        case("next page (`before`, `before_id`)", Vec::new(), before),
        case("search, a title word (`kettles`)", words("kettles"), None),
        case("search, a word being typed (`kett`)", words("kett"), None),
        case(
            "search, an answer word (`delivery`)",
            words("delivery"),
            None,
        ),
        case(
            "search, two words (`invoices boiling`)",
            words("invoices boiling"),
            None,
        ),
        case(
            "search, a word in one answer (`zanzibar`)",
            words("zanzibar"),
            None,
        ),
        case("search, no match (`xylophone`)", words("xylophone"), None),
    ];
    let mut rows = Vec::new();
    for Case {
        query,
        words,
        before,
    } in cases
    {
        let mut times = Vec::with_capacity(RUNS);
        let mut found = 0;
        for _ in 0..RUNS {
            let started = Instant::now();
            let listed =
                conversations::list(&mut conn, OWNER, Default::default(), &words, 50, before)
                    .await
                    .expect("the query runs");
            times.push(started.elapsed());
            found = listed.len();
        }
        times.sort();
        let row = Row {
            query,
            p50: times[RUNS / 2],
            p99: times[RUNS * 99 / 100],
            found,
        };
        eprintln!(
            "{:<45} p50 {:>8.2} ms  p99 {:>8.2} ms  found {}",
            row.query,
            ms(row.p50),
            ms(row.p99),
            row.found
        );
        rows.push(row);
    }
    rows
}

fn ms(duration: Duration) -> f64 {
    duration.as_secs_f64() * 1000.0
}

fn section(conversations: i32, turns: i32, rows: &[Row]) -> String {
    let mut text = format!(
        "{START}\n## Conversations: list and search (`make bench-conversations`)\n\n\
         {conversations} conversations of {turns} turns each ({} `query_log` rows), one query at a \
         time through `db::conversations::list` (what `GET /api/conversations` runs), {RUNS} runs \
         each, on a machine of {} cores.\n\n\
         | query | p50 | p99 | conversations found (page of 50) |\n|---|---|---|---|\n",
        i64::from(conversations) * i64::from(turns),
        std::thread::available_parallelism().map_or(1, usize::from),
    );
    for row in rows {
        text.push_str(&format!(
            "| {} | {:.2} ms | {:.2} ms | {} |\n",
            row.query,
            ms(row.p50),
            ms(row.p99),
            row.found
        ));
    }
    text.push_str(END);
    text.push('\n');
    text
}
