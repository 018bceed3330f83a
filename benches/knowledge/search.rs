//! Top-k search over synthetic vectors: latency percentiles, index memory, recall.

use std::time::{Duration, Instant};

use bor::knowledge::index::{ChunkVector, VectorIndex, dot, normalised};

pub const DIMENSION: usize = 384;
pub const TOP_K: usize = 5;
/// Clusters the synthetic vectors gather around (real embeddings are far from uniform).
const CLUSTERS: u64 = 256;
const CHUNKS_PER_DOCUMENT: i64 = 8;

pub struct SearchResult {
    pub chunks: usize,
    pub queries: usize,
    pub p50: Duration,
    pub p99: Duration,
    /// Processor time of the process per query (mean, every scan thread): what a query
    /// costs when the machine is shared and wall time includes waiting for a core.
    pub cpu_per_query: Option<Duration>,
    pub memory_bytes: usize,
    pub raw_bytes: usize,
    pub recall: f64,
    pub recall_queries: usize,
}

impl SearchResult {
    pub fn row(&self) -> String {
        format!(
            "| {} | {} | {:.2} ms | {:.2} ms | {} | {:.1} MiB | {:.3}× | {:.3} ({} queries) |",
            self.chunks,
            self.queries,
            millis(self.p50),
            millis(self.p99),
            self.cpu_per_query
                .map_or_else(|| "n/a".to_owned(), |cpu| format!("{:.2} ms", millis(cpu))),
            self.memory_bytes as f64 / (1024.0 * 1024.0),
            self.memory_bytes as f64 / self.raw_bytes as f64,
            self.recall,
            self.recall_queries,
        )
    }
}

fn millis(duration: Duration) -> f64 {
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

/// The exact answer: every vector scored, sorted by score then chunk id.
fn brute_force(size: usize, query: &[f32]) -> Vec<i64> {
    let query = normalised(query).unwrap_or_default();
    let mut scored: Vec<(f32, i64)> = (0..size as u64)
        .map(|id| {
            let unit = normalised(&vector(id)).unwrap_or_default();
            (dot(&query, &unit), id as i64)
        })
        .collect();
    scored.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
    scored.into_iter().take(TOP_K).map(|(_, id)| id).collect()
}

pub fn run(size: usize) -> SearchResult {
    let mut index = VectorIndex::with_capacity(DIMENSION, size);
    for id in 0..size as u64 {
        index.push(ChunkVector {
            chunk_id: id as i64,
            document_id: id as i64 / CHUNKS_PER_DOCUMENT,
            embedding: vector(id),
        });
    }
    let queries = if size >= 1_000_000 { 60 } else { 300 };
    // Warm-up: the first pass brings the index into the caches it fits in.
    index.search(&query(0), TOP_K);
    let cpu_before = process_cpu_time();
    let mut times: Vec<Duration> = (0..queries as u64)
        .map(|n| {
            let q = query(n);
            let started = Instant::now();
            let hits = index.search(&q, TOP_K);
            let elapsed = started.elapsed();
            assert_eq!(hits.len(), TOP_K.min(size));
            elapsed
        })
        .collect();
    let cpu_per_query = process_cpu_time()
        .zip(cpu_before)
        .map(|(after, before)| (after.saturating_sub(before)) / queries as u32);
    times.sort();
    let percentile = |p: f64| times[((times.len() - 1) as f64 * p).round() as usize];

    let recall_queries = if size >= 1_000_000 { 3 } else { 20 };
    let mut found = 0;
    for n in 0..recall_queries as u64 {
        let q = query(n);
        let expected = brute_force(size, &q);
        let got: Vec<i64> = index.search(&q, TOP_K).iter().map(|h| h.chunk_id).collect();
        assert_eq!(got, expected, "the index must equal brute force");
        found += got.iter().filter(|id| expected.contains(id)).count();
    }
    SearchResult {
        chunks: size,
        queries,
        p50: percentile(0.5),
        p99: percentile(0.99),
        cpu_per_query,
        memory_bytes: index.stats().memory_bytes,
        raw_bytes: size * DIMENSION * size_of::<f32>(),
        recall: found as f64 / (recall_queries * TOP_K) as f64,
        recall_queries,
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
