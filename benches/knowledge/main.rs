//! `make bench`: the knowledge base's figures — top-5 retrieval over 384-dimension
//! vectors (latency, index memory, recall against an exact scan, the first pass's
//! candidate count swept) and import throughput with mock embeddings — written to the
//! knowledge section of `bench/RESULTS.md`.
//!
//! `cargo bench --bench knowledge -- [--sizes 10000,100000,1000000] [--real PREFIX]
//! [--no-write]`: `--real` adds the embeddings in `PREFIX.vectors` and
//! `PREFIX.queries` (made by `bench/real_vectors.py`). Needs PostgreSQL at
//! `BOR_TEST_DATABASE_URL`, as the tests do.

#![expect(
    clippy::expect_used,
    reason = "a test stops at the first unexpected value"
)]

mod import;
mod int8;
mod relevance;
mod report;
mod search;

use search::VectorSet;

use std::path::Path;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let sizes: Vec<usize> = args
        .iter()
        .position(|arg| arg == "--sizes")
        .and_then(|i| args.get(i + 1))
        .map(|list| {
            list.split(',')
                .filter_map(|n| n.trim().parse().ok())
                .collect()
        })
        .unwrap_or_else(|| vec![10_000, 100_000, 1_000_000]);
    let write = !args.iter().any(|arg| arg == "--no-write");

    let real = args
        .iter()
        .position(|arg| arg == "--real")
        .and_then(|i| args.get(i + 1));

    let mut searches = Vec::new();
    for &size in &sizes {
        let result = search::run(VectorSet::synthetic(size), size >= 100_000);
        eprintln!("{}", result.row());
        searches.push(result);
    }
    if let Some(prefix) = real {
        match VectorSet::from_files(prefix, "MiniLM") {
            Ok(set) => {
                let result = search::run(set, true);
                eprintln!("{}", result.row());
                searches.push(result);
            }
            Err(error) => eprintln!("cannot read the vectors {prefix}.*: {error}"),
        }
    }
    let import = import::run();
    eprintln!("{}", import.row());
    let relevance = actix_web::rt::System::new().block_on(relevance::run());
    for ranker in &relevance {
        eprintln!("{}", ranker.row());
    }

    let full_text = real.and_then(|prefix| relevance::full_text_memory(prefix));
    if let Some((chunks, text, index)) = full_text {
        eprintln!("full text: {chunks} chunks, {text:.0} B of text and {index:.0} B of index each");
    }

    let section = report::section(&searches, &import, &relevance, full_text);
    println!("{section}");
    if write {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("bench/RESULTS.md");
        match report::write_section(&path, &section) {
            Ok(()) => eprintln!("written to {}", path.display()),
            Err(error) => eprintln!("cannot write {}: {error}", path.display()),
        }
    }
}
