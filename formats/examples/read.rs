//! Prints what the readers make of files: `cargo run -p bor-formats --example read -- FILE…`.

fn main() {
    for path in std::env::args().skip(1) {
        let bytes = match std::fs::read(&path) {
            Ok(bytes) => bytes,
            Err(error) => {
                eprintln!("{path}: {error}");
                continue;
            }
        };
        let started = std::time::Instant::now();
        let result = bor_formats::read_document(bytes, &path, &bor_formats::Limits::default());
        let elapsed = started.elapsed();
        match result {
            Ok(document) => {
                println!(
                    "== {path}: {} title {:?}, {} bytes, pages at {:?}, {:.1} ms",
                    document.content_type,
                    document.title,
                    document.text.len(),
                    document.page_starts,
                    elapsed.as_secs_f64() * 1e3
                );
                println!("{}", document.text);
            }
            Err(error) => println!("== {path}: refused: {error}"),
        }
    }
}
