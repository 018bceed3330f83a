//! Property tests of the upstream event stream as bor reads it: SSE framing
//! ([`SseFramer`]) and chunk decoding ([`ChatStreamDecoder`]) under random content,
//! random line endings, random network splits and random bytes.

use bor_actors::llm::{AttemptError, ChatStreamDecoder, SseError, SseFramer, StreamPiece};
use proptest::prelude::*;
use serde_json::{Value, json};

/// What reading a body gave: the data of each event, and the error that stopped it.
#[derive(Debug, PartialEq)]
struct Framed {
    events: Vec<String>,
    error: Option<SseError>,
}

fn frame(reads: &[&[u8]]) -> Framed {
    let mut framer = SseFramer::new();
    let mut events = Vec::new();
    for read in reads {
        let pushed = framer.push(read, |data: &str| -> Result<(), SseError> {
            events.push(data.to_owned());
            Ok(())
        });
        if let Err(error) = pushed {
            return Framed {
                events,
                error: Some(error),
            };
        }
    }
    Framed {
        events,
        error: None,
    }
}

/// `bytes` cut at the given fractions of its length.
fn cut<'a>(bytes: &'a [u8], cuts: &[f64]) -> Vec<&'a [u8]> {
    let mut points: Vec<usize> = cuts
        .iter()
        .map(|fraction| (fraction * bytes.len() as f64) as usize)
        .collect();
    points.sort_unstable();
    let mut reads = Vec::new();
    let mut start = 0;
    for point in points {
        reads.push(&bytes[start..point]);
        start = point;
    }
    reads.push(&bytes[start..]);
    reads
}

/// The line endings of a stream, used in turn: LF and CRLF mixed, or CR alone (a CR
/// followed by the LF of the next ending would make one ending of the two).
fn line_endings() -> impl Strategy<Value = Vec<&'static str>> {
    prop_oneof![
        prop::collection::vec(prop_oneof![Just("\n"), Just("\r\n")], 1..4),
        Just(vec!["\r"]),
    ]
}

fn text() -> impl Strategy<Value = String> {
    prop_oneof![
        any::<String>(),
        "[a-z \\n\\r\"\\\\:{}\\[\\]é日本🙂\\u{0}-\\u{1f}]{0,16}",
    ]
}

/// A token of a generated stream: content or reasoning text.
#[derive(Debug, Clone)]
enum Token {
    Content(String),
    Reasoning(String),
}

fn token() -> impl Strategy<Value = Token> {
    prop_oneof![
        3 => text().prop_map(Token::Content),
        1 => text().prop_map(Token::Reasoning),
    ]
}

/// An OpenAI-compatible stream of `tokens`, with noise around the events (comments,
/// other fields, a byte order mark), each line ending as `endings` say.
fn stream_body(tokens: &[Token], endings: &[&str], bom: bool, comments: bool) -> Vec<u8> {
    let mut body = String::new();
    if bom {
        body.push('\u{feff}');
    }
    let mut line = 0;
    let mut end = |body: &mut String| {
        body.push_str(endings[line % endings.len()]);
        line += 1;
    };
    let mut event = |body: &mut String, data: &Value| {
        if comments {
            body.push_str(": keep-alive");
            end(body);
            body.push_str("event: message");
            end(body);
        }
        body.push_str("data: ");
        body.push_str(&data.to_string());
        end(body);
        end(body);
    };
    event(
        &mut body,
        &json!({"choices": [{"index": 0, "delta": {"role": "assistant"}}]}),
    );
    for token in tokens {
        let delta = match token {
            Token::Content(text) => json!({"content": text}),
            Token::Reasoning(text) => json!({"reasoning_content": text}),
        };
        event(
            &mut body,
            &json!({"choices": [{"index": 0, "delta": delta}]}),
        );
    }
    event(
        &mut body,
        &json!({"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}),
    );
    body.push_str("data: [DONE]");
    end(&mut body);
    end(&mut body);
    body.into_bytes()
}

/// Frames and decodes `reads` as bor does.
fn decode(reads: &[&[u8]]) -> Result<(Vec<StreamPiece>, ChatStreamDecoder), AttemptError> {
    let mut framer = SseFramer::new();
    let mut decoder = ChatStreamDecoder::default();
    let mut pieces = Vec::new();
    for read in reads {
        framer.push(read, |data| {
            if decoder.saw_done() {
                return Ok(());
            }
            decoder.decode(data, &mut pieces)
        })?;
    }
    Ok((pieces, decoder))
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn a_well_formed_stream_decodes_to_its_tokens_however_it_is_split(
        tokens in prop::collection::vec(token(), 0..24),
        endings in line_endings(),
        bom in any::<bool>(),
        comments in any::<bool>(),
        cuts in prop::collection::vec(0.0..1.0f64, 0..16),
    ) {
        let body = stream_body(&tokens, &endings, bom, comments);
        let (pieces, decoder) = decode(&cut(&body, &cuts)).unwrap();
        prop_assert!(decoder.saw_done());
        prop_assert!(decoder.is_complete());
        let expected: Vec<StreamPiece> = tokens
            .iter()
            .filter_map(|token| match token {
                Token::Content(text) if !text.is_empty() => Some(StreamPiece::Content(text.clone())),
                Token::Reasoning(text) if !text.is_empty() => Some(StreamPiece::Reasoning(text.clone())),
                _ => None,
            })
            .collect();
        prop_assert_eq!(pieces, expected);
        let completion = decoder.finish();
        prop_assert_eq!(completion.finish_reason.as_deref(), Some("stop"));
    }

    #[test]
    fn random_bytes_never_panic_and_frame_alike_however_split(
        bytes in prop::collection::vec(any::<u8>(), 0..2048),
        cuts in prop::collection::vec(0.0..1.0f64, 0..16),
    ) {
        let whole = frame(&[&bytes]);
        prop_assert_eq!(frame(&cut(&bytes, &cuts)), whole);
        // Decoding whatever was framed fails cleanly or not at all.
        let _ = decode(&cut(&bytes, &cuts));
    }

    #[test]
    fn sse_shaped_noise_never_panics_and_frames_alike_however_split(
        parts in prop::collection::vec(
            prop_oneof![
                Just("data: ".to_owned()),
                Just("data:".to_owned()),
                Just("\n".to_owned()),
                Just("\r\n".to_owned()),
                Just("\r".to_owned()),
                Just(": c".to_owned()),
                Just("[DONE]".to_owned()),
                Just("{\"choices\":[{\"delta\":{\"content\":\"x\"}}]}".to_owned()),
                Just("{\"error\":{\"message\":\"m\"}}".to_owned()),
                Just("{\"choices\":[{\"delta\":{\"tool_calls\":[{\"index\":0,\"function\":{\"arguments\":\"{\"}}]}}]}".to_owned()),
                text(),
            ],
            0..48,
        ),
        cuts in prop::collection::vec(0.0..1.0f64, 0..16),
    ) {
        let body = parts.concat().into_bytes();
        prop_assert_eq!(frame(&cut(&body, &cuts)), frame(&[&body]));
        let split = decode(&cut(&body, &cuts)).map(|(pieces, decoder)| (pieces, decoder.is_complete()));
        let whole = decode(&[&body]).map(|(pieces, decoder)| (pieces, decoder.is_complete()));
        prop_assert_eq!(split, whole);
    }

    #[test]
    fn any_chunk_text_decodes_or_fails_cleanly(data in text(), value in json_value()) {
        let mut decoder = ChatStreamDecoder::default();
        let mut pieces = Vec::new();
        let _ = decoder.decode(&data, &mut pieces);
        let _ = decoder.decode(&value.to_string(), &mut pieces);
        let _ = decoder.decode(&json!({"choices": [value]}).to_string(), &mut pieces);
        let _ = decoder.finish();
    }
}

fn json_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::from),
        any::<i64>().prop_map(Value::from),
        text().prop_map(Value::from),
    ];
    leaf.prop_recursive(4, 24, 4, |inner| {
        let key = prop_oneof![
            Just("choices".to_owned()),
            Just("delta".to_owned()),
            Just("content".to_owned()),
            Just("tool_calls".to_owned()),
            Just("function".to_owned()),
            Just("arguments".to_owned()),
            Just("index".to_owned()),
            Just("error".to_owned()),
            Just("usage".to_owned()),
            "[a-z_]{1,8}",
        ];
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            prop::collection::vec((key, inner), 0..5)
                .prop_map(|entries| Value::Object(entries.into_iter().collect())),
        ]
    })
}
