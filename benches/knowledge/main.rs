//! `make bench`: the knowledge base's figures — top-5 retrieval over synthetic
//! 384-dimension vectors (latency, index memory, recall against brute force) and
//! import throughput with mock embeddings — written to the knowledge section of
//! `bench/RESULTS.md`.
//!
//! `cargo bench --bench knowledge -- [--sizes 10000,100000,1000000] [--no-write]`
//! (needs PostgreSQL at `BOR_TEST_DATABASE_URL`, as the tests do).

mod import;
mod report;
mod search;

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

    let mut searches = Vec::new();
    for &size in &sizes {
        let result = search::run(size);
        eprintln!("{}", result.row());
        searches.push(result);
    }
    let import = import::run();
    eprintln!("{}", import.row());

    let section = report::section(&searches, &import);
    println!("{section}");
    if write {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("bench/RESULTS.md");
        match report::write_section(&path, &section) {
            Ok(()) => eprintln!("written to {}", path.display()),
            Err(error) => eprintln!("cannot write {}: {error}", path.display()),
        }
    }
}
