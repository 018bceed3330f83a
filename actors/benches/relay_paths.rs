//! Micro-benchmarks of the per-token work on bor's relay path: the scaffolding filter
//! (clean prose and markup-heavy text, in token-sized and network-sized pieces) and the
//! upstream event stream (SSE framing and chunk decoding), the latter also with the
//! `eventsource-stream` crate in place of bor's framer, the reason bor frames events
//! itself. `cargo bench -p bor-actors`.

use std::hint::black_box;

use bor_actors::llm::{ChatStreamDecoder, SseFramer, StreamPiece};
use bor_actors::scaffolding::ScaffoldingFilter;
use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use eventsource_stream::Eventsource;
use futures_util::StreamExt;

const TOOLS: &[&str] = &["search_documents", "read_document", "list_documents"];

const PROSE: &str = "The refund window is 30 days from delivery. Items must be unused and in their \
original packaging; see section 4.2 of the handbook for exceptions (gift cards, final-sale items). \
Note: shipping costs are refunded only when the item arrived damaged. For a return, open the \
order page, choose \"Return an item\", and follow the steps — the label is emailed within a day. \
Café owners in 日本 asked about bulk orders 🙂, which follow the wholesale terms instead.\n\n";

const MARKUP: &str = "<think>The user asks about refunds; check chunk 3.</think>\nLet me look.\n\
<tool_call>\n{\"name\": \"search_documents\", \"arguments\": {\"query\": \"refund policy\"}}\n</tool_call>\n\
Use `<tool_call>` tags like [the docs](https://example.com/docs) say: {\"a\": [1, 2]}.\n\
```json\n{\"name\": \"search_documents\", \"arguments\": {\"query\": \"x\"}}\n```\n\
[search_documents(query=\"refund\")] and call:search_documents{query:refund} <|im_end|>\n";

/// About this many bytes of text per benchmark iteration.
const TEXT_BYTES: usize = 256 * 1024;

/// `text` in pieces of about `size` bytes, cut at char boundaries.
fn split(text: &str, size: usize) -> Vec<&str> {
    let mut pieces = Vec::new();
    let mut start = 0;
    while start < text.len() {
        let mut end = (start + size).min(text.len());
        while !text.is_char_boundary(end) {
            end += 1;
        }
        pieces.push(&text[start..end]);
        start = end;
    }
    pieces
}

fn scaffolding_filter(c: &mut Criterion) {
    let mut group = c.benchmark_group("scaffolding_filter");
    for (name, unit) in [("clean", PROSE), ("markup", MARKUP)] {
        let text = unit.repeat(TEXT_BYTES / unit.len() + 1);
        group.throughput(Throughput::Bytes(text.len() as u64));
        // 6 bytes: a token as a model streams it; 4096: a network read of many tokens.
        for piece in [6, 4096] {
            let pieces = split(&text, piece);
            group.bench_with_input(BenchmarkId::new(name, piece), &pieces, |b, pieces| {
                let mut events = Vec::with_capacity(16);
                b.iter(|| {
                    let mut filter = ScaffoldingFilter::new(TOOLS, false);
                    for piece in pieces {
                        filter.push(piece, &mut events);
                        black_box(&events);
                        events.clear();
                    }
                    filter.finish(&mut events);
                    black_box(&events);
                    events.clear();
                });
            });
        }
    }
    group.finish();
}

/// An upstream body as an OpenAI-compatible server streams it: one chunk per token.
fn upstream_body(tokens: usize) -> Vec<u8> {
    let mut body = String::new();
    for n in 0..tokens {
        body.push_str(&format!(
            "data: {{\"id\":\"chatcmpl-1\",\"object\":\"chat.completion.chunk\",\"created\":1700000000,\
             \"model\":\"smollm2\",\"choices\":[{{\"index\":0,\"delta\":{{\"content\":\"word{} \"}},\
             \"logprobs\":null,\"finish_reason\":null}}]}}\n\n",
            n % 100
        ));
    }
    body.push_str("data: {\"id\":\"chatcmpl-1\",\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n");
    body.into_bytes()
}

fn upstream_sse(c: &mut Criterion) {
    const TOKENS: usize = 2000;
    let body = upstream_body(TOKENS);
    let mut group = c.benchmark_group("upstream_sse");
    group.throughput(Throughput::Elements(TOKENS as u64));
    // 180 bytes: one event per read (a model streaming in real time); 16 KiB: a backlog.
    for read in [180, 16 * 1024] {
        let reads: Vec<&[u8]> = body.chunks(read).collect();
        group.bench_with_input(
            BenchmarkId::new("frame_and_decode", read),
            &reads,
            |b, reads| {
                let mut pieces: Vec<StreamPiece> = Vec::with_capacity(64);
                b.iter(|| {
                    let mut framer = SseFramer::new();
                    let mut decoder = ChatStreamDecoder::default();
                    for read in reads {
                        framer
                            .push(read, |data| decoder.decode(data, &mut pieces))
                            .unwrap_or_else(|err| panic!("the body is well-formed: {err}"));
                        black_box(&pieces);
                        pieces.clear();
                    }
                    black_box(decoder.finish());
                });
            },
        );
        group.bench_with_input(
            BenchmarkId::new("eventsource_stream_and_decode", read),
            &reads,
            |b, reads| {
                let mut pieces: Vec<StreamPiece> = Vec::with_capacity(64);
                let runtime = tokio::runtime::Builder::new_current_thread()
                    .build()
                    .unwrap_or_else(|err| panic!("a runtime: {err}"));
                b.iter(|| {
                    let mut decoder = ChatStreamDecoder::default();
                    let body = futures_util::stream::iter(
                        reads
                            .iter()
                            .map(|read| Ok::<_, std::convert::Infallible>(*read)),
                    );
                    let mut events = body.eventsource();
                    runtime.block_on(async {
                        while let Some(event) = events.next().await {
                            let event = event.unwrap_or_else(|err| panic!("well-formed: {err}"));
                            decoder
                                .decode(&event.data, &mut pieces)
                                .unwrap_or_else(|err| panic!("the body is well-formed: {err}"));
                            black_box(&pieces);
                            pieces.clear();
                        }
                    });
                    black_box(decoder.finish());
                });
            },
        );
    }
    group.finish();
}

criterion_group!(benches, scaffolding_filter, upstream_sse);
criterion_main!(benches);
