//! Prints what the readers make of files:
//! `cargo run -p bor-formats --example read -- [--ocr] FILE…` (`--ocr`: scanned pages
//! and images read by Tesseract).

fn main() {
    let mut limits = bor_formats::Limits::default();
    for path in std::env::args().skip(1) {
        if path == "--ocr" {
            limits.ocr = bor_formats::Ocr::tesseract();
            continue;
        }
        let bytes = match std::fs::read(&path) {
            Ok(bytes) => bytes,
            Err(error) => {
                eprintln!("{path}: {error}");
                continue;
            }
        };
        let started = std::time::Instant::now();
        let result = bor_formats::read_document(bytes, &path, &limits);
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
                for (number, source) in document.pages.iter().enumerate() {
                    println!("page {}: {source:?}", number + 1);
                }
                println!("{}", document.text);
            }
            Err(error) => println!("== {path}: refused: {error}"),
        }
    }
}
