//! The retry policy (docs/PROTOCOL.md, "Retry policy").

use std::time::{Duration, Instant};

use bor_actors::llm::{AttemptError, LlmError, LlmEvent};
use serde_json::json;

use super::*;

#[actix::test]
async fn failed_attempts_are_retried_with_notices_before_each_wait() {
    let mock = mock();
    let events = run(
        settings(mock.base_url()),
        chat(json!({"status": 503, "times": 2, "reply": "Fine now."})),
    )
    .await;
    assert_eq!(retries(&events), vec![(1, 3), (2, 3)]);
    assert!(
        matches!(events[0], LlmEvent::Retrying { attempt: 1, .. }),
        "notices come first"
    );
    assert_eq!(content(&events), "Fine now.");
    assert!(matches!(events.last(), Some(LlmEvent::ChatDone(_))));
    let bodies = mock.requests();
    assert_eq!(bodies.len(), 3);
    assert!(
        bodies
            .windows(2)
            .all(|pair| pair[0].raw_body == pair[1].raw_body),
        "a retry sends the identical body"
    );
}

#[actix::test]
async fn exhaustion_comes_after_exactly_n_retries() {
    let mock = mock();
    let mut limited = settings(mock.base_url());
    limited.retries = 2;
    let events = run(limited, chat(json!({"status": 503}))).await;
    assert_eq!(retries(&events), vec![(1, 2), (2, 2)]);
    match events.last() {
        Some(LlmEvent::Failed(LlmError::Unavailable { attempts, last })) => {
            assert_eq!(*attempts, 3);
            assert!(
                matches!(last, AttemptError::Status { status: 503, .. }),
                "{last:?}"
            );
        }
        other => panic!("expected exhaustion, got {other:?}"),
    }
    assert_eq!(mock.chat_requests().len(), 3);
}

#[actix::test]
async fn zero_retries_fails_at_once() {
    let mock = mock();
    let mut once = settings(mock.base_url());
    once.retries = 0;
    let events = run(once, chat(json!({"status": 500}))).await;
    assert!(retries(&events).is_empty());
    assert!(matches!(
        events.last(),
        Some(LlmEvent::Failed(LlmError::Unavailable { attempts: 1, .. }))
    ));
    assert_eq!(mock.chat_requests().len(), 1);
}

#[actix::test]
async fn client_errors_are_rejected_without_retry() {
    for status in [400, 401, 404, 422] {
        let mock = mock();
        let events = run(settings(mock.base_url()), chat(json!({"status": status}))).await;
        assert_eq!(events.len(), 1, "{status}: {events:?}");
        match &events[0] {
            LlmEvent::Failed(LlmError::Rejected(AttemptError::Status { status: got, .. })) => {
                assert_eq!(*got, status)
            }
            other => panic!("{status}: {other:?}"),
        }
        assert_eq!(mock.chat_requests().len(), 1);
    }
}

#[actix::test]
async fn throttling_server_errors_and_timeouts_are_retried() {
    for status in [408, 429, 500, 502, 504] {
        let mock = mock();
        let events = run(
            settings(mock.base_url()),
            chat(json!({"status": status, "times": 1})),
        )
        .await;
        assert_eq!(retries(&events), vec![(1, 3)], "{status}");
        assert!(
            matches!(events.last(), Some(LlmEvent::ChatDone(_))),
            "{status}"
        );
    }
}

#[actix::test]
async fn refused_connections_are_retried_then_unavailable() {
    let port = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        listener.local_addr().unwrap().port()
    };
    let mut refused = settings(format!("http://127.0.0.1:{port}/v1"));
    refused.retries = 2;
    let events = run(refused, chat(json!({}))).await;
    assert_eq!(retries(&events), vec![(1, 2), (2, 2)]);
    assert!(matches!(
        events.last(),
        Some(LlmEvent::Failed(LlmError::Unavailable {
            attempts: 3,
            last: AttemptError::Connect(_)
        }))
    ));
}

#[actix::test]
async fn a_dropped_connection_or_a_hang_is_retried() {
    let mock = mock();
    let events = run(
        settings(mock.base_url()),
        chat(json!({"drop": true, "times": 2})),
    )
    .await;
    assert_eq!(retries(&events).len(), 2);
    assert!(matches!(events.last(), Some(LlmEvent::ChatDone(_))));

    let mock = bor_mock_llm::MockLlm::start().unwrap();
    let mut impatient = settings(mock.base_url());
    impatient.read_timeout = Duration::from_millis(300);
    let events = run(impatient, chat(json!({"hang": true, "times": 1}))).await;
    assert_eq!(retries(&events), vec![(1, 3)]);
    assert!(matches!(events.last(), Some(LlmEvent::ChatDone(_))));
}

#[actix::test]
async fn a_stream_that_breaks_before_its_first_piece_is_retried() {
    let mock = mock();
    let events = run(
        settings(mock.base_url()),
        chat(json!({"drop_after": 0, "times": 1, "reply": "whole"})),
    )
    .await;
    assert_eq!(retries(&events), vec![(1, 3)]);
    assert_eq!(content(&events), "whole");

    let events = run(
        settings(mock.base_url()),
        chat(json!({"error_after": 0, "times": 1, "reply": "again"})),
    )
    .await;
    assert_eq!(retries(&events), vec![(1, 3)]);
    assert_eq!(content(&events), "again");
}

#[actix::test]
async fn no_retry_once_a_piece_was_forwarded() {
    let mock = mock();
    let events = run(
        settings(mock.base_url()),
        chat(json!({"drop_after": 2, "reply": "one two three four"})),
    )
    .await;
    assert!(retries(&events).is_empty());
    assert_eq!(content(&events), "one two ");
    assert!(matches!(
        events.last(),
        Some(LlmEvent::Failed(LlmError::Interrupted(
            AttemptError::Broken(_)
        )))
    ));
    assert_eq!(mock.chat_requests().len(), 1);

    let events = run(
        settings(mock.base_url()),
        chat(json!({"error_after": 1, "reply": "one two"})),
    )
    .await;
    assert!(matches!(
        events.last(),
        Some(LlmEvent::Failed(LlmError::Interrupted(
            AttemptError::InStream(_)
        )))
    ));
}

#[actix::test]
async fn a_read_timeout_mid_stream_is_terminal() {
    let mock = mock();
    let mut impatient = settings(mock.base_url());
    impatient.read_timeout = Duration::from_millis(300);
    let events = run(
        impatient,
        chat(json!({"stall_after": 1, "reply": "one two"})),
    )
    .await;
    assert_eq!(content(&events), "one ");
    assert!(matches!(
        events.last(),
        Some(LlmEvent::Failed(LlmError::Interrupted(
            AttemptError::ReadTimeout(_)
        )))
    ));
    assert_eq!(mock.chat_requests().len(), 1);
}

#[actix::test]
async fn keep_alive_comments_do_not_hold_off_the_read_timeout() {
    let mock = mock();
    let mut impatient = settings(mock.base_url());
    impatient.read_timeout = Duration::from_millis(300);
    let started = Instant::now();
    let events = run(
        impatient,
        chat(json!({"keepalive_after": 1, "reply": "one two"})),
    )
    .await;
    assert_eq!(content(&events), "one ");
    assert!(
        matches!(
            events.last(),
            Some(LlmEvent::Failed(LlmError::Interrupted(
                AttemptError::ReadTimeout(_)
            )))
        ),
        "{:?}",
        events.last()
    );
    // Comments arrive every 50 ms: a timeout they reset would never fire.
    assert!(started.elapsed() < Duration::from_secs(10));
}

/// A server that answers `times` requests with `status` and `body` as
/// `application/json`.
fn json_server(status: u16, body: Vec<u8>, times: usize) -> String {
    use std::io::{BufRead, BufReader, Read, Write};
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let address = listener.local_addr().unwrap();
    std::thread::spawn(move || {
        for stream in listener.incoming().take(times) {
            let Ok(mut stream) = stream else { return };
            let mut reader = BufReader::new(stream.try_clone().unwrap());
            let mut length = 0;
            loop {
                let mut line = String::new();
                if reader.read_line(&mut line).unwrap_or(0) == 0 || line == "\r\n" {
                    break;
                }
                if let Some(value) = line.to_ascii_lowercase().strip_prefix("content-length:") {
                    length = value.trim().parse().unwrap_or(0);
                }
            }
            let mut request = vec![0; length];
            let _ = reader.read_exact(&mut request);
            let head = format!(
                "HTTP/1.1 {status} X\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
                body.len()
            );
            let _ = stream.write_all(head.as_bytes());
            let _ = stream.write_all(&body);
        }
    });
    format!("http://{address}/v1")
}

#[actix::test]
async fn a_response_body_past_the_bound_is_not_read_whole() {
    // Valid JSON, 9 MiB: one string of `x`.
    let mut body = b"{\"data\":\"".to_vec();
    body.resize(9 * 1024 * 1024, b'x');
    body.extend_from_slice(b"\"}");
    let mut once = settings(json_server(200, body, 1));
    once.retries = 0;
    let events = run(once, embed_documents(vec!["q".into()])).await;
    match events.last() {
        Some(LlmEvent::Failed(LlmError::Unavailable {
            last: AttemptError::Invalid(message),
            ..
        })) => assert!(message.contains("longer than"), "{message}"),
        other => panic!("{other:?}"),
    }
}

#[actix::test]
async fn garbage_answers_are_retried_then_unavailable() {
    for garbage in ["invalid_json", "huge_line", "html"] {
        let mock = mock();
        let mut few = settings(mock.base_url());
        few.retries = 1;
        let events = run(few, chat(json!({"garbage": garbage}))).await;
        assert_eq!(retries(&events), vec![(1, 1)], "{garbage}");
        assert!(
            matches!(
                events.last(),
                Some(LlmEvent::Failed(LlmError::Unavailable {
                    last: AttemptError::Invalid(_),
                    ..
                }))
            ),
            "{garbage}: {:?}",
            events.last()
        );
    }
}

#[actix::test]
async fn the_delay_between_attempts_is_honoured() {
    let mock = mock();
    let mut delayed = settings(mock.base_url());
    delayed.retries = 2;
    delayed.retry_delay = Duration::from_millis(200);
    let started = Instant::now();
    let events = run(delayed, chat(json!({"status": 503}))).await;
    assert_eq!(retries(&events).len(), 2);
    assert!(
        started.elapsed() >= Duration::from_millis(400),
        "two waits of 200 ms"
    );
}

#[actix::test]
async fn embeddings_are_retried_under_the_same_policy() {
    let mock = mock();
    let events = run(
        settings(mock.base_url()),
        embed_documents(vec![
            "refund policy".into(),
            format!(
                "shipping\nMOCK {}",
                json!({"status": 502, "times": 1, "on": "embeddings"})
            ),
        ]),
    )
    .await;
    assert_eq!(retries(&events), vec![(1, 3)]);
    match events.last() {
        Some(LlmEvent::Embedded(vectors)) => {
            assert_eq!(vectors.len(), 2);
            for vector in vectors {
                let norm: f32 = vector.iter().map(|x| x * x).sum::<f32>().sqrt();
                assert!((norm - 1.0).abs() < 1e-3);
            }
            assert_ne!(vectors[0], vectors[1]);
        }
        other => panic!("{other:?}"),
    }
    let body = &mock.embedding_requests()[0];
    assert_eq!(body["model"], "smollm2");
    assert_eq!(
        body["input"].as_array().unwrap().len(),
        2,
        "one batched request"
    );
}

#[actix::test]
async fn https_base_urls_speak_tls() {
    // A server that answers in plain HTTP: a TLS client fails its handshake there,
    // which shows that bor's client speaks TLS (instead of refusing `https://`).
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        use std::io::Write;
        for stream in listener.incoming().flatten() {
            let mut stream = stream;
            let _ = stream.write_all(b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n");
        }
    });
    let mut tls = settings(format!("https://127.0.0.1:{port}/v1"));
    tls.retries = 0;
    let events = run(tls, chat(json!({}))).await;
    match events.last() {
        Some(LlmEvent::Failed(LlmError::Unavailable {
            last: AttemptError::Connect(cause),
            ..
        })) => {
            assert!(!cause.contains("SSL is not supported"), "{cause}");
            assert!(
                cause.contains("corrupt message"),
                "a TLS handshake error: {cause}"
            );
        }
        other => panic!("expected a failed TLS handshake, got {other:?}"),
    }
}

#[actix::test]
async fn an_api_key_echoed_in_an_error_body_is_not_reported() {
    let body = format!(r#"{{"error":{{"message":"invalid key {API_KEY} for this model"}}}}"#);
    let events = run(
        settings(json_server(401, body.into_bytes(), 1)),
        chat(json!({})),
    )
    .await;
    match events.last() {
        Some(LlmEvent::Failed(failure @ LlmError::Rejected(AttemptError::Status { .. }))) => {
            let shown = failure.to_string();
            assert!(!shown.contains(API_KEY), "{shown}");
            assert!(
                shown.contains("invalid key [redacted] for this model"),
                "{shown}"
            );
        }
        other => panic!("{other:?}"),
    }
}

#[actix::test]
async fn an_embeddings_server_that_serves_none_is_asked_once_and_named_with_the_fix() {
    let mock = MockLlm::builder()
        .without_embeddings()
        .start()
        .expect("the mock LLM starts");
    let events = run(
        settings(mock.base_url()),
        embed_documents(vec!["refund policy".into()]),
    )
    .await;
    assert!(retries(&events).is_empty(), "a refusal no retry changes");
    assert_eq!(mock.embedding_requests().len(), 1, "one attempt only");
    match events.last() {
        Some(LlmEvent::Failed(
            failure @ LlmError::Rejected(AttemptError::EmbeddingsNotServed { status: 500, .. }),
        )) => {
            let shown = failure.to_string();
            assert!(shown.contains("does not serve embeddings"), "{shown}");
            assert!(
                shown.contains("must be created with embedding=True"),
                "the server's own words: {shown}"
            );
            assert!(shown.contains(EMBEDDINGS_FIX), "the fix: {shown}");
        }
        other => panic!("expected a refusal of embeddings, got {other:?}"),
    }
}
