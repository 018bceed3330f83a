//! `GET /api/admin/health` with each dependency up, down and hanging; its status rules
//! and its guard.

use std::io::Read;
use std::net::TcpListener;
use std::time::Duration;

use serde_json::Value;

use crate::support::*;

const TOKEN: &str = "admin-token-5521";
const API_KEY: &str = "sk-health-secret-9034";

async fn health(app: &TestApp) -> (u16, Value) {
    let reply = app.get("/api/admin/health", Some(TOKEN)).await;
    (reply.status, reply.json())
}

fn unused_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .expect("a free port")
        .local_addr()
        .expect("an address")
        .port()
}

#[actix_web::test]
async fn the_admin_token_is_required() {
    let disabled = TestApp::spawn().await;
    let reply = disabled.get("/api/admin/health", Some(TOKEN)).await;
    assert_eq!(reply.status, 403);
    assert_eq!(reply.json()["error"]["code"], "admin_disabled");

    let app = TestApp::spawn_with(&[("BOR_ADMIN_TOKEN", TOKEN)]).await;
    for token in [None, Some("wrong-token")] {
        let reply = app.get("/api/admin/health", token).await;
        assert_eq!(reply.status, 401, "{token:?}");
        assert_eq!(reply.json()["error"]["code"], "unauthorized");
    }
    assert_eq!(app.get("/api/admin/health", Some(TOKEN)).await.status, 200);
}

#[actix_web::test]
async fn everything_up_is_ok_and_the_report_is_complete() {
    let app =
        TestApp::spawn_with(&[("BOR_ADMIN_TOKEN", TOKEN), ("BOR_LLM_API_KEY", API_KEY)]).await;
    app.insert_document("Otters", "Otters hold hands while they sleep.")
        .await;
    let turn = app.chat("What is bor?").await;
    assert_eq!(turn.last().event, "done");
    app.wait_for_rows(1).await;
    // The report counts the LogActor's queue, which empties just after the row lands.
    app.drained_log_stats().await;

    let reply = app.get("/api/admin/health", Some(TOKEN)).await;
    assert_eq!(reply.status, 200);
    let text = reply.text();
    for secret in [TOKEN, API_KEY] {
        assert!(!text.contains(secret), "a secret is shown: {text}");
    }
    let report = reply.json();
    assert_eq!(report["status"], "ok", "{report:#}");
    assert_eq!(report["problems"], serde_json::json!([]));
    assert_eq!(report["version"], env!("CARGO_PKG_VERSION"));
    assert!(report["uptime_seconds"].is_u64());

    let database = &report["database"];
    assert_eq!(database["reachable"], true);
    assert!(database["latency_ms"].as_f64().is_some_and(|ms| ms >= 0.0));
    assert!(database["migrations"]["applied"].as_u64().unwrap() >= 1);
    assert_eq!(database["migrations"]["pending"], serde_json::json!([]));

    let llm = &report["llm"];
    assert_eq!(llm["reachable"], true);
    assert_eq!(llm["url"], app.mock.base_url());
    assert_eq!(llm["chat_model"]["listed"], true);
    assert_eq!(llm["embed_model"]["listed"], true);

    let knowledge = &report["knowledge"];
    assert_eq!(knowledge["documents"], 1);
    assert_eq!(knowledge["chunks"], 1);
    assert_eq!(knowledge["embedding_dimension"], 64);
    assert_eq!(knowledge["other_embedder"], 0);

    let turns = &report["turns"];
    assert_eq!(turns["in_flight"], 0);
    assert_eq!(turns["accepting"], true);
    assert_eq!(turns["ended"]["done"], 1);
    assert_eq!(turns["ended"]["error"], 0);
    let path = turn.last().data["path"].as_str().unwrap().to_owned();
    assert_eq!(turns["ended"]["by_path"][&path], 1);

    assert_eq!(report["log"]["queued"], 0);
    assert_eq!(report["log"]["written"], 1);
    assert_eq!(report["log"]["failed_writes"], 0);

    let config = &report["config"];
    assert_eq!(config["llm_api_key"], "set");
    assert_eq!(config["llm_chat_model"], "smollm2");
    assert_eq!(config["admin_token"], "set");
    let shown = report.to_string();
    assert!(
        !shown.contains(TOKEN) && !shown.contains(API_KEY),
        "no secret is shown"
    );
}

#[actix_web::test]
async fn turns_in_flight_are_counted() {
    let app = TestApp::spawn_with(&[("BOR_ADMIN_TOKEN", TOKEN)]).await;
    let question = directed(
        "Tell me slowly",
        serde_json::json!({"reply": "one two three four five six", "token_delay_ms": 300}),
    );
    let turn = app.chat(&question);
    let observed = async {
        let seen = eventually(async || health(&app).await.1["turns"]["in_flight"] == 1).await;
        assert!(seen, "the running turn is counted");
    };
    let (response, ()) = futures_util::join!(turn, observed);
    assert_eq!(response.last().event, "done");
    assert!(eventually(async || health(&app).await.1["turns"]["in_flight"] == 0).await);
}

#[actix_web::test]
async fn an_unreachable_llm_server_degrades() {
    let dead = format!("http://127.0.0.1:{}/v1", unused_port());
    let app = TestApp::spawn_with(&[("BOR_ADMIN_TOKEN", TOKEN), ("BOR_LLM_BASE_URL", &dead)]).await;
    let (status, report) = health(&app).await;
    assert_eq!(status, 200);
    assert_eq!(report["status"], "degraded");
    assert_eq!(report["llm"]["reachable"], false);
    assert!(report["llm"]["error"].as_str().is_some());
    assert_eq!(report["llm"]["chat_model"]["listed"], Value::Null);
    assert_eq!(report["database"]["reachable"], true);
    assert_eq!(
        report["problems"],
        serde_json::json!(["the LLM server is unreachable"])
    );
}

#[actix_web::test]
async fn a_hanging_llm_server_is_reported_after_the_probe_timeout_and_released() {
    // Accepts connections and never answers.
    let silent = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/v1", silent.local_addr().unwrap());
    let app = TestApp::spawn_with(&[
        ("BOR_ADMIN_TOKEN", TOKEN),
        ("BOR_LLM_BASE_URL", &url),
        // Longer than the test client waits: only the probe's own timeout can answer.
        ("BOR_LLM_READ_TIMEOUT", "120"),
        ("BOR_LLM_CONNECT_TIMEOUT", "120"),
    ])
    .await;
    let (status, report) = health(&app).await;
    assert_eq!(status, 200);
    assert_eq!(report["status"], "degraded");
    assert_eq!(report["llm"]["reachable"], false);
    let error = report["llm"]["error"].as_str().unwrap();
    assert!(error.starts_with("no answer within"), "{error}");
    assert_eq!(report["database"]["reachable"], true);

    // The abandoned request is cancelled: its connection is closed.
    let (mut connection, _) = silent.accept().unwrap();
    connection
        .set_read_timeout(Some(Duration::from_secs(20)))
        .unwrap();
    let mut request = Vec::new();
    let read = connection.read_to_end(&mut request);
    assert!(read.is_ok(), "the probe closed its connection: {read:?}");
    assert!(String::from_utf8_lossy(&request).starts_with("GET /v1/models"));
}

#[actix_web::test]
async fn a_model_the_server_does_not_list_degrades() {
    let app = TestApp::spawn_with(&[
        ("BOR_ADMIN_TOKEN", TOKEN),
        ("BOR_LLM_CHAT_MODEL", "no-such-model"),
    ])
    .await;
    let (status, report) = health(&app).await;
    assert_eq!(status, 200);
    assert_eq!(report["status"], "degraded");
    assert_eq!(report["llm"]["reachable"], true);
    assert_eq!(report["llm"]["chat_model"]["listed"], false);
    assert_eq!(report["llm"]["embed_model"]["listed"], true);
}

#[actix_web::test]
async fn an_unreachable_database_is_down_with_503() {
    let app = TestApp::spawn_with_db_proxy(&[("BOR_ADMIN_TOKEN", TOKEN)]).await;
    assert_eq!(health(&app).await.1["status"], "ok");
    app.db_proxy.as_ref().unwrap().cut();
    let (status, report) = health(&app).await;
    assert_eq!(status, 503);
    assert_eq!(report["status"], "down");
    assert_eq!(report["database"]["reachable"], false);
    assert!(report["knowledge"]["error"].as_str().is_some());
    assert_eq!(report["llm"]["reachable"], true, "other probes still ran");

    app.db_proxy.as_ref().unwrap().restore();
    assert!(eventually(async || health(&app).await.0 == 200).await);
}

#[actix_web::test]
async fn a_hanging_database_is_down_after_the_probe_timeout() {
    let app = TestApp::spawn_with_db_proxy(&[("BOR_ADMIN_TOKEN", TOKEN)]).await;
    app.db_proxy.as_ref().unwrap().hang();
    let (status, report) = health(&app).await;
    assert_eq!(status, 503);
    assert_eq!(report["status"], "down");
    let error = report["database"]["error"].as_str().unwrap();
    assert!(error.starts_with("no answer within"), "{error}");
    assert_eq!(report["llm"]["reachable"], true);
}

#[actix_web::test]
async fn liveness_stays_cheap() {
    let app = TestApp::spawn_with_db_proxy(&[]).await;
    app.db_proxy.as_ref().unwrap().cut();
    let reply = app.get("/api/health", None).await;
    assert_eq!(reply.status, 200);
    assert_eq!(reply.json()["status"], "ok");
    assert!(app.mock.requests().is_empty());
}

#[actix_web::test]
async fn embeddings_on_a_server_of_their_own_are_probed_and_used_there() {
    let embeddings = bor_mock_llm::MockLlm::start().unwrap();
    let app = TestApp::spawn_with(&[
        ("BOR_ADMIN_TOKEN", TOKEN),
        ("BOR_LLM_EMBED_BASE_URL", &embeddings.base_url()),
    ])
    .await;
    let turn = app.chat("What is bor?").await;
    assert_eq!(turn.last().event, "done");
    app.wait_for_rows(1).await;
    // The report counts the LogActor's queue, which empties just after the row lands.
    app.drained_log_stats().await;
    assert_eq!(embeddings.embedding_requests().len(), 1, "the question");
    assert!(app.mock.embedding_requests().is_empty());
    assert_eq!(app.mock.chat_requests().len(), 1);

    let (status, report) = health(&app).await;
    assert_eq!(status, 200);
    assert_eq!(report["status"], "ok", "{report:#}");
    assert_eq!(report["llm"]["url"], app.mock.base_url());
    assert_eq!(report["llm"]["chat_model"]["listed"], true);
    assert_eq!(report["llm"]["embed_model"], Value::Null);
    let separate = &report["llm_embeddings"];
    assert_eq!(separate["url"], embeddings.base_url());
    assert_eq!(separate["reachable"], true);
    assert_eq!(separate["chat_model"], Value::Null);
    assert_eq!(separate["embed_model"]["listed"], true);
    assert_eq!(
        report["config"]["llm_embed_base_url"],
        embeddings.base_url()
    );

    drop(embeddings);
    let (_, report) = health(&app).await;
    assert_eq!(report["status"], "degraded");
    assert_eq!(
        report["problems"],
        serde_json::json!(["the embeddings server is unreachable"])
    );
}

#[actix_web::test]
async fn one_server_for_both_shows_no_separate_embeddings_server() {
    let app = TestApp::spawn_with(&[("BOR_ADMIN_TOKEN", TOKEN)]).await;
    let (_, report) = health(&app).await;
    assert_eq!(report["llm_embeddings"], Value::Null);
    assert_eq!(report["llm"]["embed_model"]["listed"], true);
    assert_eq!(report["config"]["llm_embed_base_url"], Value::Null);
}

/// Chunks of the model's dimension that another model or document prefix made are
/// compared with the model's vectors although they are not alike: the report counts
/// them and asks for `bor reembed`. Chunks of another dimension are counted once, as a
/// dimension mismatch, even when they are most of the knowledge base.
#[actix_web::test]
async fn chunks_another_embedder_made_degrade_with_the_command_that_fixes_them() {
    let app = TestApp::spawn_with(&[("BOR_ADMIN_TOKEN", TOKEN)]).await;
    app.insert_document("Otters", "Otters hold hands while they sleep.")
        .await;
    app.insert_document("Owls", "Owls hunt at night.").await;
    let (_, report) = health(&app).await;
    let model = report["llm"]["embed_model"]["name"]
        .as_str()
        .expect("the embedding model's name")
        .to_owned();
    let record = async |embedder: &str, titles: &[&str]| {
        let mut conn = app.pool.get().await.unwrap();
        let changed = diesel_async::RunQueryDsl::execute(
            diesel::sql_query(
                "UPDATE chunks SET embedder = $1 \
                 WHERE document_id IN (SELECT id FROM documents WHERE title = ANY($2))",
            )
            .bind::<diesel::sql_types::Text, _>(embedder)
            .bind::<diesel::sql_types::Array<diesel::sql_types::Text>, _>(
                titles
                    .iter()
                    .map(|title| title.to_string())
                    .collect::<Vec<_>>(),
            ),
            &mut conn,
        )
        .await
        .unwrap();
        assert_eq!(changed, titles.len());
    };
    // Recorded with the configured model (no document prefix): nothing to do.
    record(&model, &["Otters", "Owls"]).await;
    let (status, report) = health(&app).await;
    assert_eq!(
        (status, report["status"].as_str()),
        (200, Some("ok")),
        "{report:#}"
    );
    assert_eq!(report["knowledge"]["other_embedder"], 0);

    record("another-model", &["Owls"]).await;
    let (status, report) = health(&app).await;
    assert_eq!(status, 200);
    assert_eq!(report["status"], "degraded", "{report:#}");
    assert_eq!(report["knowledge"]["other_embedder"], 1);
    assert_eq!(report["knowledge"]["dimension_mismatch"], 0);
    let other_embedder = "1 chunks were embedded by another model or document prefix than the one configured: run `bor reembed`";
    assert_eq!(report["problems"], serde_json::json!([other_embedder]));

    // Three chunks an older model of 8 dimensions made: most of the knowledge base now,
    // left out of retrieval, and counted as a mismatch only.
    let old: Vec<String> = (0..3).map(|n| format!("Old note {n}")).collect();
    for title in &old {
        app.insert_document_with(title, &format!("{title}, kept."), vec![0.5; 8])
            .await;
    }
    record(
        "old-model",
        &old.iter().map(String::as_str).collect::<Vec<_>>(),
    )
    .await;
    assert!(eventually(async || app.state.library.index().stats().dimension_mismatch == 3).await);
    let (_, report) = health(&app).await;
    assert_eq!(report["knowledge"]["embedding_dimension"], 8, "{report:#}");
    assert_eq!(report["knowledge"]["dimension_mismatch"], 3);
    assert_eq!(
        report["knowledge"]["other_embedder"], 1,
        "of the model's dimension only: {report:#}"
    );
    let problems = report["problems"].as_array().expect("problems");
    assert_eq!(problems.len(), 2, "{problems:?}");
    assert!(problems.contains(&serde_json::json!(other_embedder)));
}
