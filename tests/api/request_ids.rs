//! Every request gets an id: on its span (so on its log lines, a turn's included) and
//! in the `X-Request-Id` response header.

use uuid::Uuid;

use crate::support::*;

fn request_id(reply_headers: &awc::http::header::HeaderMap) -> String {
    reply_headers
        .get("x-request-id")
        .expect("an X-Request-Id header")
        .to_str()
        .expect("a text header")
        .to_owned()
}

#[actix_web::test]
async fn every_response_carries_a_fresh_request_id() {
    let app = TestApp::spawn().await;
    let first = request_id(&app.get("/api/health", None).await.headers);
    let second = request_id(&app.get("/no/such/page", None).await.headers);
    assert!(Uuid::parse_str(&first).is_ok(), "{first}");
    assert!(Uuid::parse_str(&second).is_ok(), "{second}");
    assert_ne!(first, second);
}

#[actix_web::test]
async fn a_sane_incoming_request_id_is_kept() {
    let app = TestApp::spawn().await;
    let send = |id: &'static str| {
        TestApp::client()
            .get(format!("{}/api/health", app.address))
            .insert_header(("X-Request-Id", id))
            .send()
    };
    let kept = send("edge-7f3a.2").await.unwrap();
    assert_eq!(request_id(kept.headers()), "edge-7f3a.2");
    let replaced = send("two words").await.unwrap();
    assert!(Uuid::parse_str(&request_id(replaced.headers())).is_ok());
}

#[actix_web::test]
async fn a_turn_logs_with_its_request_id_and_turn_id() {
    let app = TestApp::spawn().await;
    let response = app.chat("What is bor?").await;
    let id = request_id(&response.headers);
    let turn_id = response.turn_id();
    let logged = eventually(async || !turn_log_lines(&turn_id).is_empty()).await;
    assert!(logged);
    let line = &turn_log_lines(&turn_id)[0];
    assert!(
        line.contains(&format!("request{{request_id={id}")),
        "{line}"
    );
    assert!(
        line.contains(&format!("turn{{turn_id={turn_id}}}")),
        "{line}"
    );
    let answered = all_logs()
        .lines()
        .any(|line| line.contains("request answered") && line.contains(&id));
    assert!(answered, "the request's own line has its id");
}

#[actix_web::test]
async fn the_llm_actor_of_a_turn_logs_inside_the_turn() {
    let app = TestApp::spawn().await;
    let response = app
        .chat(&directed(
            "Hello?",
            serde_json::json!({"status": 503, "times": 1}),
        ))
        .await;
    assert_eq!(response.last().data["retries"], 1);
    let turn_id = response.turn_id();
    let retry_line = all_logs()
        .lines()
        .find(|line| line.contains("retrying") && line.contains(&turn_id))
        .map(str::to_owned);
    let line = retry_line.expect("the retry warning names the turn");
    assert!(
        line.contains(&format!("turn{{turn_id={turn_id}}}:llm:")),
        "{line}"
    );
}
