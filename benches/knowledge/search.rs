//! Top-k search: latency percentiles, index memory, and recall against an exact scan,
//! over synthetic vectors and, when given, real embeddings; and the first pass's
//! candidate count swept for both kinds of codes (sign bits, which the index uses, and
//! 8-bit values, `int8.rs`).

use std::time::{Duration, Instant};

use bor::knowledge::index::{ChunkVector, CollectionFilter, VectorIndex, candidate_count};

use super::int8::Int8Index;

pub const DIMENSION: usize = 384;
pub const TOP_K: usize = 5;
/// Clusters the synthetic vectors gather around (real embeddings are far from uniform).
const CLUSTERS: u64 = 256;
const CHUNKS_PER_DOCUMENT: i64 = 8;
/// Collections the rows fall in, each of about a hundredth of them.
const COLLECTIONS: u64 = 100;
/// The top of a search limited to some collections, as the recall target counts it.
pub const FILTERED_TOP_K: usize = 10;
/// Collections a filtered search names, and the share of the rows they hold (percent).
const SELECTIVITIES: [u64; 3] = [100, 10, 1];
/// Candidate counts the sweep tries.
const SWEEP: [usize; 6] = [250, 500, 1_000, 2_000, 4_000, 8_000];

/// Where a set of vectors comes from.
pub struct VectorSet {
    pub name: String,
    pub rows: Vec<Vec<f32>>,
    pub queries: Vec<Vec<f32>>,
}

impl VectorSet {
    pub fn synthetic(size: usize) -> VectorSet {
        let queries = if size >= 1_000_000 { 60 } else { 300 };
        VectorSet {
            name: "synthetic".to_owned(),
            rows: (0..size as u64).map(vector).collect(),
            queries: (0..queries).map(query).collect(),
        }
    }

    /// Rows and queries from `PREFIX.vectors` and `PREFIX.queries` (f32, little endian,
    /// [`DIMENSION`] per row).
    pub fn from_files(prefix: &str, name: &str) -> std::io::Result<VectorSet> {
        let read = |suffix: &str| -> std::io::Result<Vec<Vec<f32>>> {
            let bytes = std::fs::read(format!("{prefix}.{suffix}"))?;
            Ok(bytes
                .as_chunks::<4>()
                .0
                .iter()
                .map(|b| f32::from_le_bytes(*b))
                .collect::<Vec<f32>>()
                .chunks_exact(DIMENSION)
                .map(<[f32]>::to_vec)
                .collect())
        };
        Ok(VectorSet {
            name: name.to_owned(),
            rows: read("vectors")?,
            queries: read("queries")?,
        })
    }
}

pub struct SearchResult {
    pub vectors: String,
    pub chunks: usize,
    pub queries: usize,
    pub candidates: usize,
    pub p50: Duration,
    pub p99: Duration,
    /// Processor time of the process per query (mean, every scan thread): what a query
    /// costs when the machine is shared and wall time includes waiting for a core.
    pub cpu_per_query: Option<Duration>,
    pub memory_bytes: usize,
    pub recall: f64,
    pub recall_queries: usize,
    /// (kind, candidates, recall, p50) of the sweep.
    pub sweep: Vec<(&'static str, usize, f64, Duration)>,
    /// Searches limited to some collections, by the share of the rows they hold.
    pub filtered: Vec<FilteredResult>,
}

/// Top-[`FILTERED_TOP_K`] searches limited to collections holding `percent` of the rows.
pub struct FilteredResult {
    pub percent: u64,
    pub p50: Duration,
    pub p99: Duration,
    /// Against an exact scan of the collections' own rows.
    pub recall: f64,
    pub recall_queries: usize,
}

impl SearchResult {
    pub fn row(&self) -> String {
        format!(
            "| {} | {} | {} | {} | {:.2} ms | {:.2} ms | {} | {:.1} MiB | {:.0} B | {:.3} ({} queries) |",
            self.vectors,
            self.chunks,
            self.queries,
            self.candidates,
            millis(self.p50),
            millis(self.p99),
            self.cpu_per_query
                .map_or_else(|| "n/a".to_owned(), |cpu| format!("{:.2} ms", millis(cpu))),
            self.memory_bytes as f64 / (1024.0 * 1024.0),
            self.memory_bytes as f64 / self.chunks as f64,
            self.recall,
            self.recall_queries,
        )
    }

    pub fn filtered_rows(&self) -> String {
        self.filtered
            .iter()
            .map(|filtered| {
                format!(
                    "| {} | {} | {}% | {:.2} ms | {:.2} ms | {:.3} ({} queries) |\n",
                    self.vectors,
                    self.chunks,
                    filtered.percent,
                    millis(filtered.p50),
                    millis(filtered.p99),
                    filtered.recall,
                    filtered.recall_queries,
                )
            })
            .collect()
    }

    pub fn sweep_rows(&self) -> String {
        self.sweep
            .iter()
            .map(|(kind, candidates, recall, p50)| {
                format!(
                    "| {} | {} | {kind} | {candidates} | {recall:.3} | {:.2} ms |\n",
                    self.vectors,
                    self.chunks,
                    millis(*p50)
                )
            })
            .collect()
    }
}

pub fn millis(duration: Duration) -> f64 {
    duration.as_secs_f64() * 1000.0
}

/// A small, fast, deterministic generator (xorshift64*).
struct Rng(u64);

impl Rng {
    fn new(seed: u64) -> Rng {
        Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }

    fn next_u64(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    /// Uniform in [-1, 1).
    fn unit(&mut self) -> f32 {
        (self.next_u64() >> 40) as f32 / (1u64 << 23) as f32 - 1.0
    }
}

/// Vector `id`: its cluster's centre plus noise; the same id always gives the same vector.
fn vector(id: u64) -> Vec<f32> {
    let mut centre = Rng::new(id % CLUSTERS + 1);
    let mut noise = Rng::new(id + 1_000_003);
    (0..DIMENSION)
        .map(|_| centre.unit() + 0.6 * noise.unit())
        .collect()
}

fn query(n: u64) -> Vec<f32> {
    vector(u64::MAX / 2 + n)
}

fn ids(hits: &[bor::knowledge::index::ScoredChunk]) -> Vec<i64> {
    hits.iter().map(|hit| hit.chunk_id).collect()
}

/// Share of the exact top k found, over `queries`.
fn recall(exact: &[Vec<i64>], found: &[Vec<i64>]) -> f64 {
    let hits: usize = exact
        .iter()
        .zip(found)
        .map(|(e, f)| f.iter().filter(|id| e.contains(id)).count())
        .sum();
    hits as f64 / exact.iter().map(Vec::len).sum::<usize>().max(1) as f64
}

/// Times `search` over `queries`: p50, and the answers.
fn timed(
    queries: &[Vec<f32>],
    mut search: impl FnMut(&[f32]) -> Vec<i64>,
) -> (Duration, Vec<Vec<i64>>) {
    let mut times = Vec::with_capacity(queries.len());
    let answers = queries
        .iter()
        .map(|q| {
            let started = Instant::now();
            let found = search(q);
            times.push(started.elapsed());
            found
        })
        .collect();
    times.sort();
    (times[times.len() / 2], answers)
}

pub fn run(set: VectorSet, sweep: bool) -> SearchResult {
    let size = set.rows.len();
    let mut index = VectorIndex::with_capacity(DIMENSION, size);
    for (id, embedding) in set.rows.iter().enumerate() {
        index.push(ChunkVector {
            chunk_id: id as i64,
            document_id: id as i64 / CHUNKS_PER_DOCUMENT,
            collection_id: collection_of(id as u64 / CHUNKS_PER_DOCUMENT as u64),
            embedding: embedding.clone(),
        });
    }
    let queries = &set.queries;
    // Warm-up: the first pass brings the index into the caches it fits in.
    index.search(&queries[0], TOP_K, None);
    let cpu_before = process_cpu_time();
    let mut times: Vec<Duration> = queries
        .iter()
        .map(|q| {
            let started = Instant::now();
            let hits = index.search(q, TOP_K, None);
            let elapsed = started.elapsed();
            assert_eq!(hits.len(), TOP_K.min(size));
            elapsed
        })
        .collect();
    let cpu_per_query = process_cpu_time()
        .zip(cpu_before)
        .map(|(after, before)| (after.saturating_sub(before)) / queries.len() as u32);
    times.sort();
    let percentile = |p: f64| times[((times.len() - 1) as f64 * p).round() as usize];

    // The exact answer: every row scored.
    let recall_queries = &queries[..queries.len().min(if size >= 1_000_000 { 20 } else { 100 })];
    let exact: Vec<Vec<i64>> = recall_queries
        .iter()
        .map(|q| ids(&index.search_with(q, TOP_K, None, size, 1)))
        .collect();
    let found: Vec<Vec<i64>> = recall_queries
        .iter()
        .map(|q| ids(&index.search(q, TOP_K, None)))
        .collect();

    let mut swept = Vec::new();
    if sweep {
        let parts = std::thread::available_parallelism().map_or(1, usize::from);
        let int8 = Int8Index::build(&set.rows);
        for candidates in SWEEP {
            let (p50, answers) = timed(recall_queries, |q| {
                ids(&index.search_with(q, TOP_K, None, candidates, parts))
            });
            swept.push(("sign bits", candidates, recall(&exact, &answers), p50));
            let (p50, answers) =
                timed(recall_queries, |q| int8.search(q, TOP_K, candidates, parts));
            swept.push(("int8", candidates, recall(&exact, &answers), p50));
        }
    }
    let filtered = SELECTIVITIES
        .iter()
        .map(|&percent| filtered(&index, queries, recall_queries, percent))
        .collect();
    SearchResult {
        filtered,
        vectors: set.name,
        chunks: size,
        queries: queries.len(),
        candidates: candidate_count(TOP_K, size).min(size),
        p50: percentile(0.5),
        p99: percentile(0.99),
        cpu_per_query,
        memory_bytes: index.stats().memory_bytes,
        recall: recall(&exact, &found),
        recall_queries: recall_queries.len(),
        sweep: swept,
    }
}

/// The collection of document `document` (a hash, so that collections do not follow
/// the synthetic clusters).
fn collection_of(document: u64) -> i64 {
    (Rng::new(document).next_u64() % COLLECTIONS) as i64
}

/// Latency of searches limited to the first `percent` collections, and their recall
/// against an exact scan of those collections' rows.
fn filtered(
    index: &VectorIndex,
    queries: &[Vec<f32>],
    recall_queries: &[Vec<f32>],
    percent: u64,
) -> FilteredResult {
    let filter = CollectionFilter::new((0..COLLECTIONS * percent / 100).map(|id| id as i64));
    let mut times: Vec<Duration> = queries
        .iter()
        .map(|q| {
            let started = Instant::now();
            let hits = index.search(q, FILTERED_TOP_K, Some(&filter));
            let elapsed = started.elapsed();
            assert_eq!(hits.len(), FILTERED_TOP_K, "every collection holds rows");
            elapsed
        })
        .collect();
    times.sort();
    let percentile = |p: f64| times[((times.len() - 1) as f64 * p).round() as usize];
    let rows = index.stats().chunks;
    let exact: Vec<Vec<i64>> = recall_queries
        .iter()
        .map(|q| ids(&index.search_with(q, FILTERED_TOP_K, Some(&filter), rows, 1)))
        .collect();
    let found: Vec<Vec<i64>> = recall_queries
        .iter()
        .map(|q| ids(&index.search(q, FILTERED_TOP_K, Some(&filter))))
        .collect();
    FilteredResult {
        percent,
        p50: percentile(0.5),
        p99: percentile(0.99),
        recall: recall(&exact, &found),
        recall_queries: recall_queries.len(),
    }
}

/// Processor time used by this process so far, all threads (Linux, from
/// `/proc/self/stat`, in clock ticks of 10 ms: good for a mean over many queries).
fn process_cpu_time() -> Option<Duration> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    // Fields after the command name (which may hold spaces) start at field 3.
    let fields: Vec<&str> = stat.rsplit_once(')')?.1.split_whitespace().collect();
    let ticks: u64 = fields.get(11)?.parse::<u64>().ok()? + fields.get(12)?.parse::<u64>().ok()?;
    Some(Duration::from_millis(ticks * 10))
}
