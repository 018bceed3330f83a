//! The memory a read holds, counted by the allocator: small PDFs that unpack to
//! millions of text operators or characters are refused within bounds, three of them
//! read at once stay bounded, and nothing is held after a refused read.

#![expect(
    clippy::expect_used,
    reason = "a test stops at the first unexpected value"
)]

pub mod support;

use std::sync::Mutex;

use bor_formats::{Limits, ReadError, read_document};
use support::peak::{PeakAlloc, peak_of};

#[global_allocator]
static ALLOCATOR: PeakAlloc = PeakAlloc;

/// One measurement at a time: the counts are of the whole process.
static MEASURING: Mutex<()> = Mutex::new(());

/// Most memory any one hostile read below may hold.
const MAX_READ_BYTES: usize = 128 << 20;

/// Reads `pdf` and returns the refusal with the peak memory of the read; checks that
/// the read let go of everything it held.
fn refused_with_peak(pdf: Vec<u8>, limits: &Limits) -> (ReadError, usize) {
    let _measuring = MEASURING
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    let before = ALLOCATOR.current_usage();
    let (result, peak) = peak_of(&ALLOCATOR, || read_document(pdf, "hostile.pdf", limits));
    let error = result.expect_err("the hostile PDF is refused");
    let after = ALLOCATOR.current_usage();
    assert!(
        after <= before + (64 << 10),
        "the refused read let go of its memory: {before} bytes held before, {after} after"
    );
    (error, peak)
}

#[test]
fn millions_of_text_operators_in_a_small_pdf_are_refused_within_bounded_memory() {
    let pdf = support::text_operators_pdf(1, 4_000_000, 1);
    assert!(pdf.len() < 128 << 10, "it packs small: {} bytes", pdf.len());
    let (error, peak) = refused_with_peak(pdf, &Limits::default());
    assert_eq!(
        error.to_string(),
        "too large: one of its pages holds more than 100000 text operators and operands (with the forms it draws)"
    );
    assert!(peak < MAX_READ_BYTES, "the read held {} MiB", peak >> 20);
}

#[test]
fn forms_drawn_millions_of_times_are_refused_within_bounded_memory() {
    let (error, peak) =
        refused_with_peak(support::nested_forms_pdf(8, 10, false), &Limits::default());
    assert_eq!(
        error.to_string(),
        "too large: its pages hold more than 10000000 text operators and operands to interpret"
    );
    assert!(peak < MAX_READ_BYTES, "the read held {} MiB", peak >> 20);
}

#[test]
fn one_operator_of_a_million_operands_is_refused_within_bounded_memory() {
    let (error, peak) = refused_with_peak(support::one_operator_pdf(1_000_000), &Limits::default());
    assert_eq!(
        error.to_string(),
        "too large: one of its pages holds more than 100000 text operators and operands (with the forms it draws)"
    );
    assert!(peak < MAX_READ_BYTES, "the read held {} MiB", peak >> 20);
}

#[test]
fn a_page_of_a_million_drawing_operators_is_read_within_bounded_memory() {
    let mut content = b"BT /F1 10 Tf 20 380 Td (A figure of many lines) Tj ET\n".to_vec();
    content.extend(b"0.5 g 1 0 0 RG 10 10 m 20 20 l S\n".repeat(200_000));
    let _measuring = MEASURING
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    let (document, peak) = peak_of(&ALLOCATOR, || {
        read_document(
            support::content_pdf(1, &content),
            "figure.pdf",
            &Limits::default(),
        )
    });
    let document = document.expect("the page is read");
    assert_eq!(document.text.trim(), "A figure of many lines");
    assert!(peak < MAX_READ_BYTES, "the read held {} MiB", peak >> 20);
}

#[test]
fn three_hostile_pdfs_read_at_once_stay_within_three_bounds() {
    let _measuring = MEASURING
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    let pdf = support::text_operators_pdf(1, 4_000_000, 1);
    let (errors, peak) = peak_of(&ALLOCATOR, || {
        let readers: Vec<_> = (0..3)
            .map(|_| {
                let pdf = pdf.clone();
                std::thread::spawn(move || read_document(pdf, "hostile.pdf", &Limits::default()))
            })
            .collect();
        readers
            .into_iter()
            .map(|reader| reader.join().expect("the reader ends"))
            .collect::<Vec<_>>()
    });
    for error in errors {
        let error = error.expect_err("the hostile PDF is refused").to_string();
        assert!(
            error.contains("more than 100000 text operators and operands"),
            "{error}"
        );
    }
    assert!(
        peak < 3 * MAX_READ_BYTES,
        "the reads held {} MiB",
        peak >> 20
    );
}
