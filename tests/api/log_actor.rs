//! The LogActor against real PostgreSQL: through an outage of the database, and with
//! rows the database would refuse.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use actix::Actor;
use bor::db::DbPool;
use bor::db::PoolTimeouts;
use bor::db::schema::query_log;
use bor::history_cache::HistoryCache;
use bor::query_log_store::PgQueryLogStore;
use bor::testing::{TestDatabase, query_log_rows};
use bor_actors::log::{
    DEFAULT_HIGH_WATER, Flush, GetLogStats, LogActor, QueryLogStore, QueueBounds, TurnFinished,
    WriteError,
};
use bor_actors::record::{ErrorCode, Source, TurnOutcome, TurnPath, TurnRecord};
use chrono::Utc;
use diesel::prelude::*;
use diesel_async::RunQueryDsl;
use uuid::Uuid;

use crate::support::*;

fn record(outcome: TurnOutcome) -> TurnRecord {
    TurnRecord {
        turn_id: Uuid::new_v4(),
        conversation_id: None,
        user_id: None,
        created_at: Utc::now(),
        question: "q".into(),
        query: "q".into(),
        answer: "partial".into(),
        path: TurnPath::Deflected,
        outcome,
        chat_model: "smollm2".into(),
        rounds: 1,
        tool_calls: 0,
        retries: 0,
        scaffold_stripped: 0,
        recovered: false,
        sources: Vec::new(),
        first_token_ms: Some(3),
        elapsed_ms: 10,
        key_id: None,
        usage: Default::default(),
        version_of: None,
    }
}

/// A history cache that is off, as one is without a listener.
fn no_cache() -> Arc<HistoryCache> {
    Arc::new(HistoryCache::new(bor::conversations::HISTORY_LIMIT))
}

/// The test database reached through `proxy`.
fn pool_through(db: &TestDatabase, proxy: &TcpProxy) -> DbPool {
    let url = db
        .url()
        .replacen("127.0.0.1:5432", &format!("127.0.0.1:{}", proxy.port()), 1);
    assert_ne!(url, db.url(), "the test database is on 127.0.0.1:5432");
    let quick = PoolTimeouts {
        wait: Duration::from_millis(500),
        create: Duration::from_millis(500),
        recycle: Duration::from_millis(500),
    };
    DbPool::with_timeouts(&url, 2, quick).expect("a pool")
}

#[actix_web::test]
async fn rows_written_while_the_database_is_down_arrive_once_it_is_back() {
    let db = TestDatabase::migrated().await;
    let postgres: SocketAddr = "127.0.0.1:5432".parse().unwrap();
    let proxy = TcpProxy::start(postgres);
    let store = PgQueryLogStore::new(pool_through(&db, &proxy), no_cache());
    let log = LogActor::new(
        Arc::new(store),
        QueueBounds::for_turns(DEFAULT_HIGH_WATER, 256),
    )
    .start();
    let direct = db.pool();
    let count = || async {
        let mut conn = direct.get().await.unwrap();
        query_log::table
            .count()
            .get_result::<i64>(&mut conn)
            .await
            .unwrap()
    };

    let before = record(TurnOutcome::Done);
    log.send(TurnFinished::new(before.clone())).await.unwrap();
    // Written, as the actor knows it: its write has come back (a cut before the commit's
    // answer arrived would have the row written again, which is no error but another
    // case).
    assert!(
        eventually(async || log.send(GetLogStats).await.unwrap().written == 1).await,
        "written while up"
    );
    assert_eq!(count().await, 1);

    proxy.cut();
    let during: Vec<TurnRecord> = vec![
        record(TurnOutcome::Done),
        record(TurnOutcome::Stopped),
        record(TurnOutcome::Error(ErrorCode::LlmUnavailable)),
    ];
    for r in &during {
        log.send(TurnFinished::new(r.clone())).await.unwrap();
    }
    assert!(
        eventually(async || log.send(GetLogStats).await.unwrap().failed_writes > 0).await,
        "the write failed while the database was away"
    );
    let stats = log.send(GetLogStats).await.unwrap();
    assert_eq!(stats.queued, 2, "rows wait; the error turn has none");
    assert_eq!(count().await, 1);

    proxy.restore();
    let flushed = tokio::time::timeout(Duration::from_secs(15), log.send(Flush))
        .await
        .expect("the queue empties once the database is back")
        .unwrap();
    assert_eq!(flushed, 0);
    assert_eq!(count().await, 3, "every row once, none twice");
    let stats = log.send(GetLogStats).await.unwrap();
    assert_eq!((stats.queued, stats.written), (0, 3));
}

#[actix_web::test]
async fn a_turn_whose_texts_hold_u0000_is_written_without_it_and_the_next_rows_follow() {
    let db = TestDatabase::migrated().await;
    let store = PgQueryLogStore::new(db.pool(), no_cache());
    let log = LogActor::new(
        Arc::new(store),
        QueueBounds::for_turns(DEFAULT_HIGH_WATER, 256),
    )
    .start();
    let odd = TurnRecord {
        question: "what is \0 this?".into(),
        answer: "an answer\0 with a NUL".into(),
        sources: vec![Source {
            n: 1,
            document_id: 1,
            title: "Ti\0tle".into(),
            chunk_id: 2,
            score: 0.5,
            heading: String::new(),
            snippet: String::new(),
            page: None,
            signals: Default::default(),
        }],
        ..record(TurnOutcome::Done)
    };
    let next = record(TurnOutcome::Stopped);
    log.send(TurnFinished::new(odd.clone())).await.unwrap();
    log.send(TurnFinished::new(next.clone())).await.unwrap();
    let left = tokio::time::timeout(Duration::from_secs(15), log.send(Flush))
        .await
        .expect("the queue empties")
        .unwrap();
    assert_eq!(left, 0);
    let rows = query_log_rows(&db.pool()).await;
    assert_eq!(rows.len(), 2, "{rows:?}");
    let stored = rows.iter().find(|row| row.turn_id == odd.turn_id).unwrap();
    assert_eq!(stored.question, "what is  this?");
    assert_eq!(stored.answer, "an answer with a NUL");
    assert_eq!(stored.sources[0]["title"], "Title");
    assert!(rows.iter().any(|row| row.turn_id == next.turn_id));
    let stats = log.send(GetLogStats).await.unwrap();
    assert_eq!(
        (stats.written, stats.failed_writes, stats.refused),
        (2, 0, 0)
    );
}

#[actix_web::test]
async fn the_store_tells_a_refused_statement_from_an_unreachable_database() {
    let db = TestDatabase::migrated().await;
    let postgres: SocketAddr = "127.0.0.1:5432".parse().unwrap();
    let proxy = TcpProxy::start(postgres);
    let store = PgQueryLogStore::new(pool_through(&db, &proxy), no_cache());
    store.insert(vec![record(TurnOutcome::Done)]).await.unwrap();

    proxy.cut();
    let error = store
        .insert(vec![record(TurnOutcome::Done)])
        .await
        .unwrap_err();
    assert!(matches!(error, WriteError::Unavailable(_)), "{error:?}");

    let store = PgQueryLogStore::new(db.pool(), no_cache());
    let mut conn = db.connect().await;
    diesel::sql_query(
        "ALTER TABLE query_log ADD CONSTRAINT short_answers CHECK (length(answer) < 10)",
    )
    .execute(&mut conn)
    .await
    .unwrap();
    let long = TurnRecord {
        answer: "a much longer answer".into(),
        ..record(TurnOutcome::Done)
    };
    let error = store.insert(vec![long]).await.unwrap_err();
    assert!(matches!(error, WriteError::Refused(_)), "{error:?}");
    assert!(error.to_string().contains("short_answers"), "{error}");
}
