//! The `bor` binary's commands, run as a newcomer would run them.

#![expect(
    clippy::expect_used,
    reason = "a test stops at the first unexpected value"
)]

use std::process::{Command, Output};

use bor::testing::TestDatabase;
use bor_mock_llm::MockLlm;

const SECRET_KEY: &str = "sk-cli-secret-7731";
const ADMIN_TOKEN: &str = "admin-cli-secret-2209";

/// Runs `bor ARGS` with only the given `BOR_*` variables (and no `.env`).
fn bor(args: &[&str], vars: &[(&str, &str)]) -> Output {
    let scratch = std::env::temp_dir();
    let mut command = Command::new(env!("CARGO_BIN_EXE_bor"));
    command.args(args).current_dir(scratch).env_clear();
    if let Ok(path) = std::env::var("PATH") {
        command.env("PATH", path);
    }
    for (name, value) in vars {
        command.env(name, value);
    }
    command.output().expect("bor runs")
}

fn text(output: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    )
}

fn unused_port() -> u16 {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("a free port");
    listener.local_addr().expect("an address").port()
}

#[test]
fn check_names_what_is_missing() {
    let dead_db = format!(
        "postgres://postgres:hunter2@127.0.0.1:{}/bor",
        unused_port()
    );
    let dead_llm = format!("http://127.0.0.1:{}/v1", unused_port());
    let output = bor(
        &["check"],
        &[
            ("BOR_DATABASE_URL", &dead_db),
            ("BOR_LLM_BASE_URL", &dead_llm),
            ("BOR_LLM_API_KEY", SECRET_KEY),
            ("BOR_ADMIN_TOKEN", ADMIN_TOKEN),
        ],
    );
    let shown = text(&output);
    assert_eq!(output.status.code(), Some(1), "{shown}");
    assert!(shown.contains("MISSING  database"), "{shown}");
    assert!(shown.contains("MISSING  knowledge base"), "{shown}");
    assert!(
        shown.contains("status   down: the database is unreachable; the LLM server is unreachable"),
        "{shown}"
    );
    assert!(
        shown.contains("config         BOR_LLM_API_KEY=set"),
        "{shown}"
    );
    assert!(
        !shown.contains(ADMIN_TOKEN),
        "the admin token is never shown: {shown}"
    );
    assert!(shown.contains("Start PostgreSQL"), "{shown}");
    assert!(shown.contains("MISSING  LLM server"), "{shown}");
    assert!(shown.contains(&dead_llm), "{shown}");
    assert!(shown.contains("BOR_LLM_BASE_URL"), "{shown}");
    assert!(
        !shown.contains("hunter2"),
        "the database password is hidden: {shown}"
    );
    assert!(
        !shown.contains(SECRET_KEY),
        "the API key is never shown: {shown}"
    );
}

#[test]
fn check_says_whether_ocr_can_read_and_what_to_install() {
    let dead_db = format!("postgres://postgres@127.0.0.1:{}/bor", unused_port());
    let dead_llm = format!("http://127.0.0.1:{}/v1", unused_port());
    let check = |ocr: &[(&'static str, &'static str)]| {
        let mut vars = vec![
            ("BOR_DATABASE_URL", dead_db.as_str()),
            ("BOR_LLM_BASE_URL", dead_llm.as_str()),
        ];
        vars.extend(ocr.iter().copied());
        text(&bor(&["check"], &vars))
    };
    let missing = check(&[("BOR_OCR_LANGUAGES", "eng+xyz")]);
    assert!(
        missing.contains("MISSING  OCR            Tesseract has no data for xyz (Debian: apt-get install tesseract-ocr-xyz)"),
        "{missing}"
    );
    let off = check(&[("BOR_OCR", "off")]);
    assert!(
        off.contains("ok       OCR            off (BOR_OCR=off)"),
        "{off}"
    );
    let vision = check(&[("BOR_OCR", "vision"), ("BOR_OCR_MODEL", "qwen2-vl")]);
    assert!(
        vision.contains("ok       OCR            the vision model qwen2-vl transcribes scanned PDF pages (rendered by pdftoppm version"),
        "{vision}"
    );
    let refused = bor(
        &["check"],
        &[("BOR_OCR", "easyocr"), ("BOR_OCR_DPI", "1200")],
    );
    let shown = text(&refused);
    assert_eq!(refused.status.code(), Some(2), "{shown}");
    assert!(
        shown.contains("BOR_OCR=\"easyocr\" is invalid: expected tesseract, vision or off"),
        "{shown}"
    );
    assert!(
        shown.contains("BOR_OCR_DPI=\"1200\" is invalid: expected an integer from 72 to 600"),
        "{shown}"
    );
    let unnamed = text(&bor(&["check"], &[("BOR_OCR", "vision")]));
    assert!(
        unnamed.contains("BOR_OCR=vision but BOR_OCR_MODEL is unset"),
        "{unnamed}"
    );
}

#[tokio::test]
async fn check_passes_when_everything_is_there() {
    let db = TestDatabase::migrated().await;
    let mock = MockLlm::start().unwrap();
    let output = bor(
        &["check"],
        &[
            ("BOR_DATABASE_URL", db.url()),
            ("BOR_LLM_BASE_URL", &mock.base_url()),
        ],
    );
    let shown = text(&output);
    assert_eq!(output.status.code(), Some(0), "{shown}");
    for line in [
        "ok       database",
        "ok       LLM server",
        "ok       chat model",
        "ok       embed model",
        "ok       embeddings",
        "ok       knowledge base 0 documents, 0 chunks",
        "ok       OCR            tesseract 5",
        "config         BOR_OCR=tesseract",
        "config         BOR_LLM_CHAT_MODEL=smollm2",
        "config         BOR_SHUTDOWN_GRACE=30",
        concat!("version        ", env!("CARGO_PKG_VERSION")),
    ] {
        assert!(shown.contains(line), "{line}: {shown}");
    }
    assert!(shown.contains("64 dimensions"), "{shown}");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(stdout.trim_end().ends_with("status   ok"), "{shown}");
}

#[tokio::test]
async fn check_names_a_model_the_server_does_not_list() {
    let db = TestDatabase::migrated().await;
    let mock = MockLlm::start().unwrap();
    let output = bor(
        &["check"],
        &[
            ("BOR_DATABASE_URL", db.url()),
            ("BOR_LLM_BASE_URL", &mock.base_url()),
            ("BOR_LLM_CHAT_MODEL", "no-such-model"),
        ],
    );
    let shown = text(&output);
    assert_eq!(output.status.code(), Some(1), "{shown}");
    assert!(shown.contains("MISSING  chat model"), "{shown}");
    assert!(shown.contains("BOR_LLM_CHAT_MODEL"), "{shown}");
    assert!(
        shown.contains(
            "status   degraded: the chat model no-such-model is not listed by the LLM server"
        ),
        "{shown}"
    );
}

#[test]
fn invalid_configuration_stops_before_anything_starts() {
    let output = bor(
        &["serve"],
        &[("BOR_DB_POOL_SIZE", "0"), ("BOR_LLM_RETRIES", "eleven")],
    );
    let shown = text(&output);
    assert_eq!(output.status.code(), Some(2), "{shown}");
    assert!(shown.contains("BOR_DB_POOL_SIZE"), "{shown}");
    assert!(shown.contains("BOR_LLM_RETRIES"), "{shown}");
}

#[tokio::test]
async fn migrate_applies_then_reports_up_to_date() {
    let db = TestDatabase::empty().await;
    let first = bor(&["migrate"], &[("BOR_DATABASE_URL", db.url())]);
    assert_eq!(first.status.code(), Some(0), "{}", text(&first));
    assert!(text(&first).contains("applied "), "{}", text(&first));
    let second = bor(&["migrate"], &[("BOR_DATABASE_URL", db.url())]);
    assert!(text(&second).contains("up to date"), "{}", text(&second));
}

#[tokio::test]
async fn check_covers_a_separate_embeddings_server() {
    let db = TestDatabase::migrated().await;
    let (chat, embeddings) = (MockLlm::start().unwrap(), MockLlm::start().unwrap());
    let output = bor(
        &["check"],
        &[
            ("BOR_DATABASE_URL", db.url()),
            ("BOR_LLM_BASE_URL", &chat.base_url()),
            ("BOR_LLM_EMBED_BASE_URL", &embeddings.base_url()),
        ],
    );
    let shown = text(&output);
    assert_eq!(output.status.code(), Some(0), "{shown}");
    for line in [
        format!("ok       LLM server     {}", chat.base_url()),
        format!("ok       embed server   {}", embeddings.base_url()),
        "ok       chat model".to_owned(),
        "ok       embed model".to_owned(),
        "ok       embeddings".to_owned(),
        format!("BOR_LLM_EMBED_BASE_URL={}", embeddings.base_url()),
    ] {
        assert!(shown.contains(&line), "{line}: {shown}");
    }
    assert_eq!(embeddings.embedding_requests().len(), 1, "{shown}");
    assert!(chat.embedding_requests().is_empty());

    let dead = format!("http://127.0.0.1:{}/v1", unused_port());
    let output = bor(
        &["check"],
        &[
            ("BOR_DATABASE_URL", db.url()),
            ("BOR_LLM_BASE_URL", &chat.base_url()),
            ("BOR_LLM_EMBED_BASE_URL", &dead),
        ],
    );
    let shown = text(&output);
    assert_eq!(output.status.code(), Some(1), "{shown}");
    assert!(
        shown.contains(&format!("MISSING  embed server   {dead} does not answer")),
        "{shown}"
    );
    assert!(shown.contains("set BOR_LLM_EMBED_BASE_URL"), "{shown}");
    assert!(
        shown.contains("status   degraded: the embeddings server is unreachable"),
        "{shown}"
    );
}

#[tokio::test]
async fn user_commands_make_list_reset_and_disable_people() {
    let db = TestDatabase::migrated().await;
    let vars = [("BOR_DATABASE_URL", db.url())];
    let made = bor(&["user", "add", "Ann", "--admin"], &vars);
    let shown = text(&made);
    assert_eq!(made.status.code(), Some(0), "{shown}");
    assert!(shown.contains("made admin Ann"), "{shown}");
    let password = shown
        .lines()
        .find_map(|line| line.strip_prefix("password: "))
        .expect("the generated password is printed");
    assert_eq!(password.len(), 24, "{shown}");

    let again = bor(&["user", "add", "ann"], &vars);
    assert_eq!(again.status.code(), Some(1), "{}", text(&again));
    assert!(
        text(&again).contains("that username is taken"),
        "{}",
        text(&again)
    );
    let bad = bor(&["user", "add", "no spaces"], &vars);
    assert_eq!(bad.status.code(), Some(1), "{}", text(&bad));

    assert_eq!(bor(&["user", "add", "bob"], &vars).status.code(), Some(0));
    let listed = text(&bor(&["user", "list"], &vars));
    let lines: Vec<&str> = listed.lines().collect();
    assert_eq!(lines.len(), 2, "{listed}");
    assert!(
        lines[0].starts_with("Ann") && lines[0].contains("admin") && lines[0].contains("active"),
        "{listed}"
    );
    assert!(
        lines[1].starts_with("bob") && lines[1].contains("member"),
        "{listed}"
    );

    // A key each, which a new password and a disable revoke for good.
    let mut conn = db.connect().await;
    for name in ["ann", "bob"] {
        let user = bor::db::users::find_by_username(&mut conn, name)
            .await
            .expect("a query")
            .expect("the user");
        let key = bor::db::api_keys::NewApiKey {
            id: uuid::Uuid::new_v4(),
            user_id: user.id,
            name: "k",
            prefix: "bor_0000",
            key_sha256: &format!("{:064}", user.id.as_u128() % 1000),
            expires_at: None,
        };
        bor::db::api_keys::insert(&mut conn, &key)
            .await
            .expect("the key is stored");
    }
    let keys_of = async |conn: &mut diesel_async::AsyncPgConnection, name: &str| {
        let user = bor::db::users::find_by_username(conn, name)
            .await
            .expect("a query")
            .expect("the user");
        bor::db::api_keys::of_user(conn, user.id)
            .await
            .expect("a query")
            .len()
    };

    let reset = bor(&["user", "passwd", "ann"], &vars);
    assert_eq!(reset.status.code(), Some(0), "{}", text(&reset));
    let new_password = text(&reset)
        .lines()
        .find_map(|line| line.strip_prefix("password: ").map(str::to_owned))
        .expect("the new password is printed");
    assert_ne!(new_password, password);
    assert_eq!(
        keys_of(&mut conn, "ann").await,
        0,
        "a new password revokes keys"
    );
    assert_eq!(keys_of(&mut conn, "bob").await, 1);

    assert_eq!(
        bor(&["user", "disable", "bob"], &vars).status.code(),
        Some(0)
    );
    assert!(
        text(&bor(&["user", "list"], &vars))
            .lines()
            .nth(1)
            .is_some_and(|line| line.contains("disabled"))
    );
    assert_eq!(keys_of(&mut conn, "bob").await, 0, "a disable revokes keys");
    // Ann is the last admin who is not disabled: the admin API's rule holds here too.
    let last = bor(&["user", "disable", "ann"], &vars);
    assert_eq!(last.status.code(), Some(1), "{}", text(&last));
    assert!(
        text(&last).contains("bor needs an admin who is not disabled"),
        "{}",
        text(&last)
    );
    assert!(
        text(&bor(&["user", "list"], &vars))
            .lines()
            .next()
            .is_some_and(|line| line.starts_with("Ann") && line.contains("active"))
    );
    assert_eq!(
        bor(&["user", "add", "cy", "--admin"], &vars).status.code(),
        Some(0)
    );
    let now_not_last = bor(&["user", "disable", "ann"], &vars);
    assert_eq!(
        now_not_last.status.code(),
        Some(0),
        "{}",
        text(&now_not_last)
    );
    let missing = bor(&["user", "disable", "nobody"], &vars);
    assert_eq!(missing.status.code(), Some(1));
    assert!(
        text(&missing).contains("there is no user nobody"),
        "{}",
        text(&missing)
    );
}

/// A tiny collection in the BEIR layout: three abstracts, two judged queries (one with
/// two grades) and one query without judgements.
fn beir_folder(name: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("bor-eval-{name}-{}", std::process::id()));
    std::fs::create_dir_all(dir.join("qrels")).expect("a scratch folder");
    let corpus = [
        r#"{"_id": "d1", "title": "Oolong tea", "text": "Oolong is a partly oxidised tea."}"#,
        r#"{"_id": "d2", "title": "Granite", "text": "Granite is an igneous rock rich in quartz.", "metadata": {}}"#,
        r#"{"_id": "d3", "title": "Comets", "text": "Comets are icy bodies that orbit the sun."}"#,
    ];
    let queries = [
        r#"{"_id": "q1", "text": "oxidised oolong"}"#,
        r#"{"_id": "q2", "text": "quartz granite"}"#,
        r#"{"_id": "q3", "text": "comets"}"#,
    ];
    std::fs::write(dir.join("corpus.jsonl"), corpus.join("\n")).expect("written");
    std::fs::write(dir.join("queries.jsonl"), queries.join("\n")).expect("written");
    std::fs::write(
        dir.join("qrels/test.tsv"),
        "query-id\tcorpus-id\tscore\nq1\td1\t1\nq2\td2\t2\nq2\td3\t1\n",
    )
    .expect("written");
    dir
}

#[tokio::test]
async fn eval_measures_the_re_ranked_order_and_counts_failed_re_ranks_in_fused_order() {
    let db = TestDatabase::migrated().await;
    let mock = MockLlm::start().expect("the mock LLM");
    let dir = beir_folder("rerank");
    let folder = dir.to_str().expect("a UTF-8 path");
    let vars = [
        ("BOR_DATABASE_URL", db.url()),
        ("BOR_LLM_BASE_URL", &mock.base_url()),
        ("BOR_RERANK_BASE_URL", &mock.base_url()),
    ];
    let output = bor(&["eval", folder, "--json"], &vars);
    assert_eq!(output.status.code(), Some(0), "{}", text(&output));
    let report: serde_json::Value = serde_json::from_slice(&output.stdout).expect("JSON");
    assert_eq!(report["rerank_failures"], 0, "{report}");
    // The mock's cross-encoder puts the abstract holding every word of the query first.
    assert_eq!(report["reranked"]["mrr_at_10"], 1.0, "{report}");
    assert_eq!(report["reranked"]["recall_at_10"], 1.0, "{report}");
    assert!(report["rerank_ms"]["p50"].as_f64().expect("a number") >= 0.0);
    let reranks = mock.rerank_requests();
    assert_eq!(reranks.len(), 2, "one per judged query");
    assert_eq!(reranks[0]["query"], "oxidised oolong");
    assert_eq!(
        reranks[0]["documents"].as_array().expect("documents").len(),
        3
    );

    let closed = std::net::TcpListener::bind("127.0.0.1:0").expect("a port");
    let unreachable = format!("http://{}/v1", closed.local_addr().expect("an address"));
    drop(closed);
    let down = [
        ("BOR_DATABASE_URL", db.url()),
        ("BOR_LLM_BASE_URL", &mock.base_url()),
        ("BOR_RERANK_BASE_URL", &unreachable),
    ];
    let output = bor(&["eval", folder, "--json"], &down);
    assert_eq!(output.status.code(), Some(0), "{}", text(&output));
    let fallen_back: serde_json::Value = serde_json::from_slice(&output.stdout).expect("JSON");
    assert_eq!(fallen_back["rerank_failures"], 2, "{fallen_back}");
    assert_eq!(
        fallen_back["reranked"], fallen_back["fused"],
        "the fused order counts"
    );
    let table = text(&bor(&["eval", folder], &vars));
    assert!(table.contains("re-ranked "), "{table}");
    assert!(table.contains("re-ranking p50"), "{table}");
    std::fs::remove_dir_all(&dir).expect("cleaned up");
}

#[tokio::test]
async fn eval_measures_each_ranking_on_a_beir_folder_and_imports_once() {
    let db = TestDatabase::migrated().await;
    let mock = MockLlm::start().expect("the mock LLM");
    let dir = beir_folder("measures");
    let vars = [
        ("BOR_DATABASE_URL", db.url()),
        ("BOR_LLM_BASE_URL", &mock.base_url()),
    ];
    let folder = dir.to_str().expect("a UTF-8 path");
    let output = bor(&["eval", folder, "--json"], &vars);
    assert_eq!(output.status.code(), Some(0), "{}", text(&output));
    let report: serde_json::Value =
        serde_json::from_slice(&output.stdout).expect("one JSON object");
    assert_eq!(report["queries"], 2, "q3 has no judgements: {report}");
    assert_eq!(report["corpus"]["imported"], 3, "{report}");
    assert!(
        report["qrels"]
            .as_str()
            .expect("a path")
            .ends_with("test.tsv")
    );

    // Full text ranks d1 alone for q1 (all measures 1) and d2 alone for q2: DCG 2 of an
    // ideal 2 + 1/log2(3), half the relevant found, the first relevant at rank 1.
    let q2_ndcg = 2.0 / (2.0 + 1.0 / 3f64.log2());
    let full_text = &report["full_text"];
    for (measure, expected) in [
        ("ndcg_at_10", (1.0 + q2_ndcg) / 2.0),
        ("recall_at_10", 0.75),
        ("recall_at_5", 0.75),
        ("mrr_at_10", 1.0),
    ] {
        let actual = full_text[measure].as_f64().expect("a number");
        assert!(
            (actual - expected).abs() < 1e-9,
            "{measure}: {actual} vs {expected}"
        );
    }
    // The vectors rank every chunk of so small a corpus: all relevant are found.
    assert_eq!(report["vectors"]["recall_at_10"], 1.0, "{report}");
    assert_eq!(report["fused"]["recall_at_10"], 1.0, "{report}");
    assert_eq!(report["fused"]["mrr_at_10"], 1.0, "{report}");
    assert!(report["retrieval_ms"]["p99"].as_f64().expect("a number") >= 0.0);
    assert_eq!(
        report["reranked"],
        serde_json::Value::Null,
        "re-ranking is off"
    );

    // Again, as a table: nothing is imported twice.
    let again = bor(&["eval", folder], &vars);
    let shown = text(&again);
    assert_eq!(again.status.code(), Some(0), "{shown}");
    assert!(
        shown.contains("0 imported (0 chunks), 3 unchanged"),
        "{shown}"
    );
    assert!(shown.contains("nDCG@10"), "{shown}");
    assert!(shown.contains("full text    0.8801"), "{shown}");

    // Into a collection of its own: imported anew there, ranked among its documents only
    // (the copies in `default` are not seen), so the figures are the same.
    let scoped = bor(
        &["eval", folder, "--collection", "scifact", "--json"],
        &vars,
    );
    assert_eq!(scoped.status.code(), Some(0), "{}", text(&scoped));
    let scoped: serde_json::Value = serde_json::from_slice(&scoped.stdout).expect("JSON");
    assert_eq!(scoped["corpus"]["imported"], 3, "{scoped}");
    for ranking in ["full_text", "vectors", "fused"] {
        assert_eq!(scoped[ranking], report[ranking], "{ranking}");
    }
    let refused = bor(&["eval", folder, "--collection", "No Good"], &vars);
    assert_eq!(refused.status.code(), Some(2), "{}", text(&refused));

    let help = text(&bor(&["eval", "--help"], &[]));
    assert!(
        help.contains("qrels/train.tsv") && help.contains("--qrels"),
        "{help}"
    );

    std::fs::remove_file(dir.join("qrels/test.tsv")).expect("removed");
    let without = bor(&["eval", folder], &vars);
    assert_eq!(without.status.code(), Some(2), "{}", text(&without));
    assert!(text(&without).contains("--qrels"), "{}", text(&without));
    std::fs::remove_dir_all(&dir).expect("cleaned up");
}

/// `bor eval --feedback`: the rated turns an admin named passages for, run as a query
/// set, each run kept and shown beside the ones before; `--export` writes the set in
/// the BEIR layout, which `bor eval DIR` measures on another database.
#[tokio::test]
async fn eval_feedback_runs_the_instances_own_set_and_exports_it() {
    use bor::db::schema::{chunks, documents};
    use diesel::prelude::*;
    use diesel_async::RunQueryDsl;

    let db = TestDatabase::migrated().await;
    let mock = MockLlm::start().expect("the mock LLM");
    let dir = beir_folder("feedback");
    let vars = [
        ("BOR_DATABASE_URL", db.url()),
        ("BOR_LLM_BASE_URL", &mock.base_url()),
    ];
    let folder = dir.to_str().expect("a UTF-8 path");
    // The corpus, imported through the import path as any document is.
    let imported = bor(&["eval", folder], &vars);
    assert_eq!(imported.status.code(), Some(0), "{}", text(&imported));

    let empty = bor(&["eval", "--feedback"], &vars);
    assert_eq!(empty.status.code(), Some(0), "{}", text(&empty));
    assert!(text(&empty).contains("0 queries"), "{}", text(&empty));

    let pool = db.pool();
    let mut conn = pool.get().await.expect("a connection");
    let (ann, _) = bor::auth::people::create_user(
        &mut conn,
        "ann",
        None,
        bor::db::users::Role::Member,
        Some("a long enough password".to_owned()),
    )
    .await
    .expect("ann is made");
    let granite: i64 = chunks::table
        .inner_join(documents::table)
        .filter(documents::title.eq("Granite"))
        .select(chunks::id)
        .first(&mut conn)
        .await
        .expect("the granite passage");
    let turn = bor::db::query_log::NewQueryLogEntry {
        user_id: Some(ann.id),
        question: "and which rock holds quartz?".to_owned(),
        searched_query: Some("quartz granite rock".to_owned()),
        ..bor::testing::query_log_entry()
    };
    bor::db::query_log::insert(&mut conn, std::slice::from_ref(&turn))
        .await
        .expect("the turn's row");
    let rating = bor::feedback::Feedback {
        rating: bor::feedback::Rating::Down,
        reason: Some(bor::feedback::Reason::MissingSource),
        comment: String::new(),
    };
    bor::db::feedback::upsert(&mut conn, turn.turn_id, ann.id, &rating)
        .await
        .expect("rated");
    let places = bor::db::feedback::chunk_places(&mut conn, &[granite])
        .await
        .expect("the passage's place");
    bor::db::feedback::set_expected(&mut conn, turn.turn_id, &places, None)
        .await
        .expect("named");

    let first = bor(&["eval", "--feedback", "--json"], &vars);
    assert_eq!(first.status.code(), Some(0), "{}", text(&first));
    let first: serde_json::Value = serde_json::from_slice(&first.stdout).expect("JSON");
    assert_eq!(first["run"]["queries"], 1, "{first}");
    assert_eq!(first["queries"][0]["query"], "quartz granite rock");
    assert_eq!(first["queries"][0]["passage_rank"], 1, "{first}");
    assert_eq!(
        first["run"]["measures"]["fused"]["documents"]["recall_at_10"],
        1.0
    );
    let table = text(&bor(&["eval", "--feedback"], &vars));
    assert!(table.contains("1 queries"), "{table}");
    let run_line = format!("{:>4}  ", first["run"]["id"]);
    assert!(
        table.contains(&run_line),
        "the earlier run is shown: {table}"
    );
    assert!(!table.contains("not answered"), "{table}");
    assert_eq!(first["queries"][0]["answered"], true, "{first}");

    let exported_dir = std::env::temp_dir().join(format!("bor-eval-export-{}", std::process::id()));
    let exported_to = exported_dir.to_str().expect("a UTF-8 path");
    let exported = bor(&["eval", "--feedback", "--export", exported_to], &vars);
    assert_eq!(exported.status.code(), Some(0), "{}", text(&exported));
    assert!(
        text(&exported).contains("1 queries and 3 documents"),
        "{}",
        text(&exported)
    );
    let elsewhere = TestDatabase::migrated().await;
    let there = [
        ("BOR_DATABASE_URL", elsewhere.url()),
        ("BOR_LLM_BASE_URL", &mock.base_url()),
    ];
    let measured = bor(&["eval", exported_to, "--json"], &there);
    assert_eq!(measured.status.code(), Some(0), "{}", text(&measured));
    let measured: serde_json::Value = serde_json::from_slice(&measured.stdout).expect("JSON");
    assert_eq!(measured["queries"], 1, "{measured}");
    assert_eq!(measured["corpus"]["imported"], 3, "{measured}");
    assert_eq!(measured["fused"]["recall_at_10"], 1.0, "{measured}");

    let both = bor(&["eval", folder, "--feedback"], &vars);
    assert_eq!(both.status.code(), Some(2), "{}", text(&both));
    std::fs::remove_dir_all(&dir).expect("cleaned up");
    std::fs::remove_dir_all(&exported_dir).expect("cleaned up");
}
