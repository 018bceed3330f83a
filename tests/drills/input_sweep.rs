//! A sweep of malformed and odd `POST /api/chat` requests (random JSON shapes, odd
//! Unicode, control characters, escaped lone surrogates, deep nesting, wrong content
//! types): none may get a 5xx, and none may hang.

use proptest::prelude::*;
use proptest::strategy::ValueTree;
use proptest::test_runner::{Config, TestRunner};
use serde_json::{Map, Value, json};

use crate::scale;

/// Requests of the sweep: a content type (or none) and raw body bytes.
type Request = (Option<String>, Vec<u8>);

fn odd_text() -> impl Strategy<Value = String> {
    prop_oneof![
        any::<String>(),
        "[\\x00-\\x1f\\x7f]{0,24}",
        "[a-z \\u{0300}\\u{200b}\\u{202e}\\u{feff}\\u{fffd}\\u{1f600}\\u{10ffff}]{0,40}",
        Just(" \t\n\r ".to_owned()),
        "[a-z ]{1,20}",
    ]
}

fn json_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::from),
        any::<i64>().prop_map(Value::from),
        any::<f64>().prop_map(|x| json!(x)),
        odd_text().prop_map(Value::from),
    ];
    leaf.prop_recursive(4, 32, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
            prop::collection::vec((key(), inner), 0..6)
                .prop_map(|entries| Value::Object(entries.into_iter().collect::<Map<_, _>>())),
        ]
    })
}

fn key() -> impl Strategy<Value = String> {
    prop_oneof![
        Just("message".to_owned()),
        Just("history".to_owned()),
        Just("role".to_owned()),
        Just("content".to_owned()),
        odd_text(),
    ]
}

/// Bodies shaped like a chat request, with odd values in every place.
fn chat_shaped() -> impl Strategy<Value = Value> {
    let role = prop_oneof![
        Just(json!("user")),
        Just(json!("assistant")),
        Just(json!("system")),
        json_value(),
    ];
    let entry = (
        role,
        prop_oneof![odd_text().prop_map(Value::from), json_value()],
    )
        .prop_map(|(role, content)| json!({"role": role, "content": content}));
    let history = prop_oneof![
        Just(None),
        prop::collection::vec(entry, 0..24).prop_map(|h| Some(Value::Array(h))),
        json_value().prop_map(Some),
    ];
    (
        prop_oneof![odd_text().prop_map(Value::from), json_value()],
        history,
    )
        .prop_map(|(message, history)| {
            let mut body = json!({ "message": message });
            if let Some(history) = history {
                body["history"] = history;
            }
            body
        })
}

fn content_type() -> impl Strategy<Value = Option<String>> {
    prop_oneof![
        6 => Just(Some("application/json".to_owned())),
        1 => Just(Some("application/json; charset=utf-8".to_owned())),
        1 => Just(Some("APPLICATION/JSON".to_owned())),
        1 => Just(Some("application/problem+json".to_owned())),
        1 => Just(Some("text/plain".to_owned())),
        1 => Just(None),
        1 => "[ -~]{0,30}".prop_map(Some),
    ]
}

fn request() -> impl Strategy<Value = Request> {
    let body = prop_oneof![
        3 => chat_shaped().prop_map(|v| v.to_string().into_bytes()),
        2 => json_value().prop_map(|v| v.to_string().into_bytes()),
        1 => prop::collection::vec(any::<u8>(), 0..512),
        1 => "[\\[\\]{}\":,a-z0-9\\\\ ]{0,64}".prop_map(String::into_bytes),
    ];
    (content_type(), body)
}

/// Hand-picked bodies that random generation rarely hits.
fn edge_cases() -> Vec<Request> {
    let json_type = || Some("application/json".to_owned());
    let mut bodies: Vec<Vec<u8>> = vec![
        br#"{"message":"\ud800"}"#.to_vec(),
        br#"{"message":"x\udc00y"}"#.to_vec(),
        br#"{"message":"\ud800\u0041"}"#.to_vec(),
        br#"{"message":"ok","history":[{"role":"user","content":"\udfff"}]}"#.to_vec(),
        br#"{"message":"\u0000\u0001\u001f"}"#.to_vec(),
        br#"{"message":"a","message":"b"}"#.to_vec(),
        br#"{"message":1e400}"#.to_vec(),
        b"\xef\xbb\xbf{\"message\":\"bom\"}".to_vec(),
        b"{\"message\":\"\xff\xfe invalid utf-8\"}".to_vec(),
        b"{\"message\":\"\xed\xa0\x80 raw surrogate\"}".to_vec(),
        "[".repeat(100_000).into_bytes(),
        format!("{}\"x\"{}", "{\"a\":".repeat(20_000), "}".repeat(20_000)).into_bytes(),
        format!(r#"{{"message":"{}"}}"#, "é".repeat(9_000)).into_bytes(),
        format!(r#"{{"message":"{}"}}"#, "x".repeat(300 * 1024)).into_bytes(),
        format!(r#"{{"message":"{}"}}"#, "\u{1f600}".repeat(7_999)).into_bytes(),
        Vec::new(),
    ];
    bodies.push(
        json!({"message": "q", "history": vec![json!({"role": "user", "content": "c"}); 21]})
            .to_string()
            .into_bytes(),
    );
    bodies.into_iter().map(|body| (json_type(), body)).collect()
}

#[actix_web::test]
async fn malformed_chat_requests_never_get_a_5xx_or_hang() {
    let app = crate::drill_app(&[]).await;
    let mut runner = TestRunner::new(Config::default());
    let strategy = request();
    let mut requests = edge_cases();
    for _ in 0..150 * scale() {
        requests.push(strategy.new_tree(&mut runner).unwrap().current());
    }
    for (content_type, body) in requests {
        let shown = String::from_utf8_lossy(&body[..body.len().min(200)]).into_owned();
        let response = app.post_chat(content_type.as_deref(), body).await;
        assert!(
            response.status < 500,
            "{content_type:?} {shown}: HTTP {}",
            response.status
        );
        if response.status == 200 {
            response.assert_one_terminal_frame();
        } else {
            assert!(
                !response.error_code().is_empty(),
                "{content_type:?} {shown}: a refusal has an error code"
            );
        }
    }
}
