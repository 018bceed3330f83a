//! The knowledge section of `bench/RESULTS.md`: the machine, the commit, the tables.

use std::path::Path;
use std::process::Command;

use super::import::ImportResult;
use super::relevance::Relevance;
use super::search::{DIMENSION, FILTERED_TOP_K, SearchResult, TOP_K, millis};

const START: &str = "<!-- knowledge-bench:start -->";
const END: &str = "<!-- knowledge-bench:end -->";

pub fn section(
    searches: &[SearchResult],
    import: &ImportResult,
    relevance: &[Relevance],
    full_text: Option<(usize, f64, f64)>,
) -> String {
    let mut text = format!(
        "{START}\n## Knowledge base (`make bench-knowledge`)\n\n{}\n\n\
         ### Top-{TOP_K} retrieval, {DIMENSION} dimensions (one query at a time)\n\n\
         | vectors | chunks | queries | scored exactly | p50 | p99 | CPU per query | index memory | per vector | recall@{TOP_K} vs exact scan |\n\
         |---|---|---|---|---|---|---|---|---|---|\n",
        machine()
    );
    for search in searches {
        text.push_str(&search.row());
        text.push('\n');
    }
    text.push_str(
        "\nOne query at a time; p50/p99 are wall times, which include waiting for a core on \
         a shared machine; CPU per query is the processor time of every thread of the \
         search. The index (see docs/RETRIEVAL.md) measures the Hamming distance of every \
         row's sign code (one bit per dimension) to the query's, split over one thread per \
         core from 262,144 code words up, and scores the nearest rows (*scored exactly*) \
         from their f32 vectors. Recall compares its top 5 with an exact scan of every \
         vector. Memory is what the index allocates (f32 vectors, sign codes, ids, \
         per-document rows). *synthetic* vectors are clustered (256 clusters, noise 0.6 of \
         the spread); *MiniLM* are real all-MiniLM-L6-v2 embeddings of paragraphs of crate \
         documentation (`bench/real_vectors.py`).\n",
    );
    let sweeps: String = searches.iter().map(SearchResult::sweep_rows).collect();
    if !sweeps.is_empty() {
        text.push_str(&format!(
            "\n### First pass: sign bits against 8-bit values, by rows scored exactly\n\n\
             | vectors | chunks | first pass | scored exactly | recall@{TOP_K} | p50 |\n\
             |---|---|---|---|---|---|\n{sweeps}\n\
             Sign bits: 48 bytes per vector of {DIMENSION} dimensions; 8-bit values: 388 \
             (values and a scale), read whole by every query.\n"
        ));
    }
    let filtered: String = searches.iter().map(SearchResult::filtered_rows).collect();
    if !filtered.is_empty() {
        text.push_str(&format!(
            "\n### Top-{FILTERED_TOP_K} retrieval limited to some collections\n\n\
             | vectors | chunks | rows in the collections | p50 | p99 | recall@{FILTERED_TOP_K} vs exact scan of those rows |\n\
             |---|---|---|---|---|---|\n{filtered}\n\
             Documents fall in 100 collections of about 1% of the rows each (by a hash of \
             the document); a search names 100, 10 or 1 of them. The filter is applied \
             inside the first pass (only the collections' rows are measured and chosen \
             from), so recall is against an exact scan of the collections' own rows.\n"
        ));
    }
    text.push_str(&targets(searches));
    let rankers: String = relevance.iter().map(|r| r.row() + "\n").collect();
    text.push_str(&format!(
        "\n### Full-text relevance on the sample knowledge base (16 questions, see docs/RETRIEVAL.md)\n\n\
         | ranker | right chunk first | right chunk in the top 5 | MRR@10 | questions ranking nothing |\n\
         |---|---|---|---|---|\n{rankers}"
    ));
    if let Some((chunks, text_bytes, index_bytes)) = full_text {
        text.push_str(&format!(
            "\nMemory of text and words, over {chunks} real paragraphs (the MiniLM set, \
             {text_bytes:.0} bytes of text each on average): the chunk store keeps the text \
             (plus about 60 bytes of map entries per chunk), the full-text index takes \
             {index_bytes:.0} bytes per chunk.\n"
        ));
    }
    text.push_str(&format!(
        "\n### Import throughput (mock embeddings of {DIMENSION} dimensions over HTTP, PostgreSQL writes)\n\n\
         | documents | chunks | time | chunks per second |\n|---|---|---|---|\n{}\n{END}\n",
        import.row()
    ));
    text
}

/// The targets of the retrieval work against this run: top-5 over 100,000 chunks of
/// 384 dimensions within 3 ms at p50, over 1,000,000 within 20 ms, recall at least 0.99.
fn targets(searches: &[SearchResult]) -> String {
    let mut lines = String::from("\n**Targets.**");
    for (chunks, limit) in [(100_000, 3.0), (1_000_000, 20.0)] {
        let Some(search) = searches
            .iter()
            .find(|search| search.chunks == chunks && search.vectors == "synthetic")
        else {
            continue;
        };
        let p50 = millis(search.p50);
        let verdict = if p50 <= limit { "met" } else { "**missed**" };
        lines.push_str(&format!(
            " {chunks} chunks within {limit} ms at p50: {p50:.2} ms, {verdict}."
        ));
    }
    let least = searches
        .iter()
        .map(|search| search.recall)
        .fold(1.0, f64::min);
    let verdict = if least >= 0.99 { "met" } else { "**missed**" };
    lines.push_str(&format!(
        " Recall@{TOP_K} at least 0.99: {least:.3} at the least, {verdict}."
    ));
    let filtered = searches
        .iter()
        .filter(|search| search.vectors == "synthetic")
        .flat_map(|search| &search.filtered);
    let least = filtered.map(|f| f.recall).fold(1.0, f64::min);
    let verdict = if least >= 0.99 { "met" } else { "**missed**" };
    lines.push_str(&format!(
        " Filtered recall@{FILTERED_TOP_K} at least 0.99: {least:.3} at the least, {verdict}.\n"
    ));
    lines
}

/// Replaces the knowledge section of the file (or appends it), leaving the rest as is.
pub fn write_section(path: &Path, section: &str) -> std::io::Result<()> {
    let existing = std::fs::read_to_string(path).unwrap_or_else(|_| "# Benchmarks\n".to_owned());
    let updated = match (existing.find(START), existing.find(END)) {
        (Some(start), Some(end)) if start < end => {
            format!(
                "{}{}{}",
                &existing[..start],
                section.trim_end(),
                &existing[end + END.len()..]
            )
        }
        _ => format!("{}\n{section}", existing.trim_end()),
    };
    if let Some(folder) = path.parent() {
        std::fs::create_dir_all(folder)?;
    }
    std::fs::write(path, updated)
}

fn machine() -> String {
    let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    let cpu = cpuinfo
        .lines()
        .find_map(|line| line.strip_prefix("model name"))
        .map(|rest| rest.trim_start_matches([' ', '\t', ':']).to_owned())
        .unwrap_or_else(|| "unknown".to_owned());
    let memory_gib = std::fs::read_to_string("/proc/meminfo")
        .unwrap_or_default()
        .lines()
        .find_map(|line| line.strip_prefix("MemTotal:"))
        .and_then(|rest| {
            rest.trim()
                .trim_end_matches("kB")
                .trim()
                .parse::<f64>()
                .ok()
        })
        .map_or_else(
            || "unknown".to_owned(),
            |kib| format!("{:.1} GiB", kib / 1024.0 / 1024.0),
        );
    let cores = std::thread::available_parallelism().map_or(0, usize::from);
    let load = std::fs::read_to_string("/proc/loadavg")
        .ok()
        .and_then(|text| text.split_whitespace().next().map(str::to_owned))
        .unwrap_or_else(|| "unknown".to_owned());
    let commit = git(&["rev-parse", "--short", "HEAD"]).unwrap_or_else(|| "unknown".to_owned());
    let dirty = git(&["status", "--porcelain", "--untracked-files=no"])
        .is_some_and(|status| !status.is_empty());
    format!(
        "Machine: {cores} cores (nproc), {cpu}, {memory_gib} memory; load average {load} at \
         the end of the run (the machine is shared). Commit: `{commit}`{}.",
        if dirty { " with local changes" } else { "" }
    )
}

fn git(args: &[&str]) -> Option<String> {
    let output = Command::new("git").args(args).output().ok()?;
    output
        .status
        .success()
        .then(|| String::from_utf8_lossy(&output.stdout).trim().to_owned())
}
