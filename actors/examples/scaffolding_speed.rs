//! Rough throughput of the scaffolding filter, run by hand:
//! `cargo run --release -p bor-actors --example scaffolding_speed [CHUNK_BYTES…]`.

use std::hint::black_box;
use std::time::Instant;

use bor_actors::scaffolding::ScaffoldingFilter;

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

fn measure(label: &str, text: &str, chunk: usize) {
    let pieces: Vec<&str> = split(text, chunk);
    let rounds = 5;
    let mut best = f64::MAX;
    for _ in 0..rounds {
        let started = Instant::now();
        let mut filter = ScaffoldingFilter::new(TOOLS, false);
        let mut out = Vec::new();
        for piece in &pieces {
            filter.push(piece, &mut out);
            black_box(&out);
            out.clear();
        }
        filter.finish(&mut out);
        black_box(&out);
        best = best.min(started.elapsed().as_secs_f64());
    }
    let megabytes = text.len() as f64 / 1_000_000.0;
    println!(
        "{label:>7}, chunks of {chunk:>7} bytes: {:>8.0} MB/s",
        megabytes / best
    );
}

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

fn main() {
    let prose = PROSE.repeat(16 * 1024 * 1024 / PROSE.len());
    let markup = MARKUP.repeat(16 * 1024 * 1024 / MARKUP.len());
    let sizes: Vec<usize> = std::env::args()
        .skip(1)
        .filter_map(|size| size.parse().ok())
        .collect();
    let sizes = if sizes.is_empty() {
        vec![usize::MAX / 2, 64 * 1024, 4096, 16]
    } else {
        sizes
    };
    for chunk in sizes {
        measure("prose", &prose, chunk.min(prose.len()));
        measure("markup", &markup, chunk.min(markup.len()));
    }
}
