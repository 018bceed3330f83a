//! What `bor import` shows while it works: a progress bar (files, chunks, embeddings,
//! retries) on a terminal, plain lines elsewhere.

use std::io::IsTerminal;
use std::sync::atomic::{AtomicUsize, Ordering};

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

use crate::knowledge::ingest::IngestProgress;

pub struct ImportProgress {
    /// `None` when standard error is not a terminal.
    bar: Option<ProgressBar>,
    chunks: AtomicUsize,
    embedded: AtomicUsize,
}

impl ImportProgress {
    pub fn new(files: usize) -> ImportProgress {
        let bar = std::io::stderr().is_terminal().then(|| {
            let style = ProgressStyle::with_template(
                "{spinner} [{bar:30}] {pos}/{len} files · {msg} · {elapsed}",
            )
            .unwrap_or_else(|_| ProgressStyle::default_bar())
            .progress_chars("=> ");
            let bar =
                ProgressBar::with_draw_target(Some(files as u64), ProgressDrawTarget::stderr())
                    .with_style(style);
            bar.enable_steady_tick(std::time::Duration::from_millis(120));
            bar
        });
        let progress = ImportProgress {
            bar,
            chunks: AtomicUsize::new(0),
            embedded: AtomicUsize::new(0),
        };
        progress.show_counts();
        progress
    }

    /// A line above the bar (or alone, without one).
    pub fn say(&self, line: &str) {
        match &self.bar {
            Some(bar) => bar.println(line),
            None => println!("{line}"),
        }
    }

    pub fn file_done(&self) {
        if let Some(bar) = &self.bar {
            bar.inc(1);
        }
    }

    pub fn finish(&self) {
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
        }
    }

    fn show_counts(&self) {
        if let Some(bar) = &self.bar {
            bar.set_message(format!(
                "{} chunks, {} embedded",
                self.chunks.load(Ordering::Relaxed),
                self.embedded.load(Ordering::Relaxed)
            ));
        }
    }
}

impl IngestProgress for ImportProgress {
    fn chunked(&self, chunks: usize) {
        self.chunks.fetch_add(chunks, Ordering::Relaxed);
        self.show_counts();
    }

    fn embedded(&self, chunks: usize) {
        self.embedded.fetch_add(chunks, Ordering::Relaxed);
        self.show_counts();
    }

    fn retrying(&self, attempt: u32, max: u32) {
        let line = format!("embedding request failed; retrying ({attempt} of {max})…");
        match &self.bar {
            Some(bar) => bar.set_message(line),
            None => println!("{line}"),
        }
    }
}
