//! Fault drills: bor in front of an LLM server that dies mid-stream and comes back, or
//! answers garbage; through a database outage; with a database slower than the turns
//! or paused; with clients that leave mid-stream and come back, or stop reading; with
//! the instance serving readers dying under them; and under a sweep of malformed chat
//! requests. Each drill checks that
//! every turn ends with the right frame, none hangs, and nothing is left behind (turn
//! slots, LLM actors, upstream requests).
//!
//! The default scale keeps the drills to well under a minute; `BOR_DRILLS=long` runs
//! each at ten times the scale.

mod clients;
mod database;
mod input_sweep;
mod instances;
mod llm_garbage;
mod llm_restart;
mod long_conversation;
mod slow_database;

use bor_test_support as support;

use std::sync::Arc;
use std::time::Duration;

use support::{TestApp, eventually};

/// The app a drill runs against, with `vars`: people sign in (`BOR_AUTH=accounts`) and
/// the drill asks as a member with an API key, as a team's scripts do.
pub async fn drill_app(vars: &[(&str, &str)]) -> TestApp {
    TestApp::spawn_with(&with_accounts(vars))
        .await
        .asking_with_a_key("driller")
        .await
}

/// `vars` with `BOR_AUTH=accounts` first (a drill's own setting wins).
pub fn with_accounts<'a>(vars: &[(&'a str, &'a str)]) -> Vec<(&'a str, &'a str)> {
    std::iter::once(("BOR_AUTH", "accounts"))
        .chain(vars.iter().copied())
        .collect()
}

/// How many times the default size each drill runs at (`BOR_DRILLS=long`: 10).
pub fn scale() -> usize {
    match std::env::var("BOR_DRILLS").as_deref() {
        Ok("long") => 10,
        _ => 1,
    }
}

/// Nothing of any turn is left: every slot is free and every LLM actor has stopped
/// (each holds a reference to the shared LLM settings while it lives), and the LLM
/// server is answering nothing.
pub async fn assert_nothing_left(app: &TestApp, mock: &bor_mock_llm::MockLlm) {
    let settled = support::eventually_within(Duration::from_secs(15), async || {
        app.turns_in_flight() == 0
            && Arc::strong_count(&app.state.llm) == 1
            && Arc::strong_count(&app.state.turn) == 1
            && mock.responses_in_progress() == 0
    })
    .await;
    assert!(
        settled,
        "left behind: {} turns in flight, {} LLM actors, {} turn actors, {} upstream responses",
        app.turns_in_flight(),
        Arc::strong_count(&app.state.llm) - 1,
        Arc::strong_count(&app.state.turn) - 1,
        mock.responses_in_progress()
    );
}

#[actix_web::test]
async fn a_quiet_app_has_nothing_in_flight() {
    let app = drill_app(&[]).await;
    assert_eq!(app.turns_in_flight(), 0);
    let response = app.chat("Hello?").await;
    assert_eq!(response.last().event, "done");
    assert!(eventually(async || app.turns_in_flight() == 0).await);
    assert_nothing_left(&app, &app.mock).await;
}
