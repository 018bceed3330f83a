//! Read throughput of each format reader (`make bench-formats`): pages per second for
//! PDF, MB/s of input for the others, in release mode on one thread, and the most
//! memory one read holds (counted by the global allocator). The figures replace the
//! formats section of `bench/RESULTS.md`.
//!
//! Inputs: the real-tool fixtures of `tests/fixtures` as they are, and larger documents
//! made from them (a web page and a Word document whose bodies are repeated, Markdown
//! and text from the repository's docs), so fixed costs do not hide the rate.

#![expect(
    clippy::expect_used,
    reason = "a test stops at the first unexpected value"
)]

use std::io::{Cursor, Read, Write};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use bor_formats::{Kind, Limits, read_as};

#[path = "../tests/support/mod.rs"]
mod support;

use support::peak::{PeakAlloc, peak_of};

#[global_allocator]
static ALLOCATOR: PeakAlloc = PeakAlloc;

const START: &str = "<!-- formats-bench:start -->";
const END: &str = "<!-- formats-bench:end -->";
/// Each input is read for at least this long, after one read to warm up.
const MEASURE_FOR: Duration = Duration::from_secs(2);

struct Input {
    name: String,
    kind: Kind,
    bytes: Vec<u8>,
}

struct Measured {
    input: Input,
    reads: u32,
    median: Duration,
    pages: usize,
    text_bytes: usize,
    /// The most bytes the first read held.
    peak_bytes: usize,
}

fn manifest() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn fixture(name: &str) -> Vec<u8> {
    let path = manifest().join("tests/fixtures").join(name);
    std::fs::read(&path).unwrap_or_else(|error| panic!("{}: {error}", path.display()))
}

/// `docs/*.md` of the repository, concatenated `times` times.
fn repository_docs(times: usize) -> Vec<u8> {
    let mut docs: Vec<PathBuf> = std::fs::read_dir(manifest().join("../docs"))
        .map(|entries| {
            entries
                .filter_map(Result::ok)
                .map(|entry| entry.path())
                .collect()
        })
        .unwrap_or_default();
    docs.retain(|path| path.extension().is_some_and(|extension| extension == "md"));
    docs.sort();
    let text: Vec<u8> = docs
        .iter()
        .flat_map(|path| std::fs::read(path).unwrap_or_default())
        .collect();
    text.repeat(times)
}

/// The Sphinx page with its main content repeated `times` times.
fn long_web_page(times: usize) -> Vec<u8> {
    let page = String::from_utf8(fixture("sphinx.html")).expect("UTF-8");
    let (Some(start), Some(end)) = (page.find("<section"), page.rfind("</section>")) else {
        panic!("the Sphinx page has no section");
    };
    let section = &page[start..end + "</section>".len()];
    let body = section.repeat(times);
    format!(
        "{}{body}{}",
        &page[..start],
        &page[end + "</section>".len()..]
    )
    .into_bytes()
}

/// The python-docx document with its body repeated `times` times.
fn long_word_document(times: usize) -> Vec<u8> {
    let original = fixture("python-docx.docx");
    let mut archive = zip::ZipArchive::new(Cursor::new(original)).expect("a zip archive");
    let mut writer = zip::ZipWriter::new(Cursor::new(Vec::new()));
    for index in 0..archive.len() {
        let mut entry = archive.by_index(index).expect("an entry");
        let name = entry.name().expect("a named entry").into_owned();
        let mut content = Vec::new();
        entry.read_to_end(&mut content).expect("unpacks");
        if name == "word/document.xml" {
            let xml = String::from_utf8(content).expect("UTF-8");
            let (Some(start), Some(end)) = (xml.find("<w:body>"), xml.find("<w:sectPr")) else {
                panic!("document.xml has no body");
            };
            let start = start + "<w:body>".len();
            content = format!(
                "{}{}{}",
                &xml[..start],
                xml[start..end].repeat(times),
                &xml[end..]
            )
            .into_bytes();
        }
        writer
            .start_file(name, zip::write::SimpleFileOptions::default())
            .expect("starts");
        writer.write_all(&content).expect("writes");
    }
    writer.finish().expect("finishes").into_inner()
}

fn inputs() -> Vec<Input> {
    let input = |name: &str, kind: Kind, bytes: Vec<u8>| Input {
        name: name.to_owned(),
        kind,
        bytes,
    };
    vec![
        input(
            "tex-two-column.pdf (pdfTeX, 3 pages, two columns)",
            Kind::Pdf,
            fixture("tex-two-column.pdf"),
        ),
        input(
            "tex-report.pdf (pdfTeX, 2 pages)",
            Kind::Pdf,
            fixture("tex-report.pdf"),
        ),
        input(
            "libreoffice.pdf (LibreOffice, 2 pages)",
            Kind::Pdf,
            fixture("libreoffice.pdf"),
        ),
        input(
            "groff-spec.pdf (groff, 4 pages)",
            Kind::Pdf,
            fixture("groff-spec.pdf"),
        ),
        input(
            "sphinx.html (Sphinx page)",
            Kind::Html,
            fixture("sphinx.html"),
        ),
        input(
            "rustdoc.html (rustdoc page)",
            Kind::Html,
            fixture("rustdoc.html"),
        ),
        input("Sphinx page, content ×400", Kind::Html, long_web_page(400)),
        input(
            "libreoffice.docx (LibreOffice)",
            Kind::Docx,
            fixture("libreoffice.docx"),
        ),
        input(
            "python-docx.docx (python-docx)",
            Kind::Docx,
            fixture("python-docx.docx"),
        ),
        input("python-docx body ×400", Kind::Docx, long_word_document(400)),
        input(
            "docs/*.md ×20 (Markdown)",
            Kind::Markdown,
            repository_docs(20),
        ),
        input(
            "docs/*.md ×20 (as plain text)",
            Kind::PlainText,
            repository_docs(20),
        ),
    ]
}

fn measure(input: Input) -> Measured {
    let limits = Limits::default();
    let (first, peak_bytes) = peak_of(&ALLOCATOR, || read_as(input.kind, &input.bytes, &limits));
    let first = first.unwrap_or_else(|error| panic!("{}: {error}", input.name));
    let mut times = Vec::new();
    let started = Instant::now();
    while started.elapsed() < MEASURE_FOR || times.len() < 5 {
        let read = Instant::now();
        let document = read_as(input.kind, &input.bytes, &limits);
        times.push(read.elapsed());
        std::hint::black_box(document).ok();
    }
    times.sort();
    Measured {
        reads: times.len() as u32,
        median: times[times.len() / 2],
        pages: first.page_starts.len(),
        text_bytes: first.text.len(),
        peak_bytes,
        input,
    }
}

fn row(measured: &Measured) -> String {
    let seconds = measured.median.as_secs_f64();
    let rate = if measured.input.kind == Kind::Pdf {
        format!("{:.0} pages/s", measured.pages as f64 / seconds)
    } else {
        format!(
            "{:.1} MB/s",
            measured.input.bytes.len() as f64 / seconds / 1e6
        )
    };
    format!(
        "| {} | {:.1} KiB | {} | {:.2} ms | **{rate}** | {:.1} KiB | {:.1} MB/s | {} | {} |",
        measured.input.name,
        measured.input.bytes.len() as f64 / 1024.0,
        measured.input.kind.label(),
        seconds * 1e3,
        measured.text_bytes as f64 / 1024.0,
        measured.text_bytes as f64 / seconds / 1e6,
        mebibytes(measured.peak_bytes),
        measured.reads,
    )
}

fn mebibytes(bytes: usize) -> String {
    format!("{:.1} MiB", bytes as f64 / f64::from(1 << 20))
}

/// PDFs built to make the reader work, each refused: the reason and the most memory
/// the read held.
fn hostile_rows() -> String {
    let inputs = [
        (
            "4,000,000 text operators on one page",
            support::text_operators_pdf(1, 4_000_000, 1),
        ),
        (
            "20,000 operators of 250 characters on one page",
            support::text_operators_pdf(1, 20_000, 250),
        ),
        (
            "1,500 pages of 4,000 text operators",
            support::text_operators_pdf(1_500, 4_000, 1),
        ),
        (
            "one TJ of 1,000,000 operands",
            support::one_operator_pdf(1_000_000),
        ),
        (
            "forms 8 deep, each drawing the next 10 times",
            support::nested_forms_pdf(8, 10, false),
        ),
        (
            "a form that draws itself",
            support::nested_forms_pdf(1, 1, true),
        ),
    ];
    let mut rows = String::new();
    for (name, bytes) in inputs {
        let size = bytes.len();
        let started = Instant::now();
        let (result, peak) = peak_of(&ALLOCATOR, || {
            read_as(Kind::Pdf, &bytes, &Limits::default())
        });
        let outcome = match result {
            Ok(document) => format!("read ({} KiB of text)", document.text.len() / 1024),
            Err(error) => error.to_string(),
        };
        rows.push_str(&format!(
            "| {name} | {:.1} KiB | {outcome} | {:.0} ms | {} |\n",
            size as f64 / 1024.0,
            started.elapsed().as_secs_f64() * 1e3,
            mebibytes(peak),
        ));
    }
    rows
}

fn context() -> String {
    let read = |path: &str| std::fs::read_to_string(path).unwrap_or_default();
    let cpu = read("/proc/cpuinfo")
        .lines()
        .find_map(|line| {
            line.split_once(':')
                .filter(|(key, _)| key.trim() == "model name")
                .map(|(_, value)| value.trim().to_owned())
        })
        .unwrap_or_else(|| "unknown".to_owned());
    let load = read("/proc/loadavg")
        .split_whitespace()
        .take(3)
        .collect::<Vec<_>>()
        .join(" ");
    let commit = std::process::Command::new("git")
        .args(["rev-parse", "--short", "HEAD"])
        .output()
        .ok()
        .map(|output| String::from_utf8_lossy(&output.stdout).trim().to_owned())
        .unwrap_or_default();
    let cores = std::thread::available_parallelism().map_or(0, usize::from);
    format!(
        "{cores} cores ({cpu}), commit `{commit}`; load average {load} when the run ended: the \
         machine is shared with other builds, so the rates are lower and noisier than on an idle one."
    )
}

fn section(measured: &[Measured]) -> String {
    let mut text = format!(
        "{START}\n## Format readers (`make bench-formats`)\n\n{}\n\n\
         One thread, release build, the median of repeated reads of the bytes in memory (each \
         input for at least {} s): telling the kind is left out, everything after it is in \
         (PDF: the stream size check, parsing, layout; Word: unzipping and XML; HTML: \
         decoding, parsing, the walk). Pages per second for PDF, MB of input per second for \
         the others (of the file as given: a Word document's XML unpacks to several times \
         its size, so its text rate is the fairer figure). The parse is the larger part of \
         an HTML read (html5ever alone reads the long page at about twice the rate).\n\n\
         The peak memory is the most the first read of the input held beyond what was held \
         before it (all allocations, counted by the bench's global allocator).\n\n\
         | input | size | reader | median read | rate | text out | text out per second | peak memory | reads |\n\
         |---|---|---|---|---|---|---|---|---|\n",
        context(),
        MEASURE_FOR.as_secs()
    );
    for measured in measured {
        text.push_str(&row(measured));
        text.push('\n');
    }
    text.push_str(
        "\nPDFs built to make the reader work (`formats/tests/support`), read once with the \
         default limits: what the reader answers, and the most memory the read held.\n\n\
         | input | size | answer | time | peak memory |\n|---|---|---|---|---|\n",
    );
    text.push_str(&hostile_rows());
    text.push_str(END);
    text.push('\n');
    text
}

fn write_section(path: &Path, section: &str) -> std::io::Result<()> {
    let results = std::fs::read_to_string(path).unwrap_or_default();
    let updated = match (results.find(START), results.find(END)) {
        (Some(start), Some(end)) if start < end => {
            format!(
                "{}{section}{}",
                &results[..start],
                results[end + END.len()..].trim_start_matches('\n')
            )
        }
        _ => format!("{}\n{section}", results.trim_end()),
    };
    std::fs::write(path, updated)
}

fn main() {
    if std::env::args().any(|arg| arg == "--list") {
        return;
    }
    let measured: Vec<Measured> = inputs().into_iter().map(measure).collect();
    let section = section(&measured);
    print!("{section}");
    let path = manifest().join("../bench/RESULTS.md");
    if let Err(error) = write_section(&path, &section) {
        eprintln!("{}: {error}", path.display());
    }
}
