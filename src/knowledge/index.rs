//! The in-memory vector index: exact top-k cosine search over every chunk embedding.
//!
//! PostgreSQL stays the source of truth; this is a copy made for speed. Vectors are
//! normalised when they enter, so cosine similarity is a dot product, and stored row
//! after row, split bit for bit into an upper and a lower 16-bit plane (`planes.rs`):
//! exactly the f32 bytes, no more.
//!
//! A search reads the upper plane front to back (half the bytes of an f32 scan; a scan
//! is bound by memory bandwidth, so a large index is read in slices, one thread per
//! core), scoring every row approximately, within
//! [`APPROXIMATION_ERROR`] of its exact score. A row whose approximate score is more
//! than twice that below the k-th best approximate score cannot be in the top `k`
//! (at least `k` rows score exactly above it); every other row is a candidate and is
//! scored exactly from both planes, keeping the best `k` in a bounded heap. The result
//! is therefore exact: the same rows, scores and order as scoring every f32 row and
//! sorting (ties: lower chunk id first).
//!
//! All rows have one dimension, the embedding model's. Rows of another dimension (from
//! an earlier model) cannot be compared with a query; they are refused and counted per
//! document ([`IndexStats::dimension_mismatch`]) until the document is re-imported.

mod planes;

use std::cmp::{Ordering, Reverse};
use std::collections::{BinaryHeap, HashMap};
use std::ops::Range;
use std::sync::OnceLock;

pub use planes::{APPROXIMATION_ERROR, dot};
use planes::{Planes, dot_high};

/// A chunk's embedding as stored in the database.
#[derive(Debug, Clone, PartialEq)]
pub struct ChunkVector {
    pub chunk_id: i64,
    pub document_id: i64,
    pub embedding: Vec<f32>,
}

/// A chunk found by a search; `score` is its cosine similarity to the query.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ScoredChunk {
    pub chunk_id: i64,
    pub document_id: i64,
    pub score: f32,
}

/// What the index holds, for health reports and benchmarks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IndexStats {
    pub documents: usize,
    pub chunks: usize,
    /// `None` until the first vector or query sets it.
    pub dimension: Option<usize>,
    /// Chunks refused because their dimension is not the index's.
    pub dimension_mismatch: usize,
    /// Chunks refused because their vector is zero or not finite.
    pub unusable: usize,
    /// Bytes held by the index (vectors exactly, maps estimated from their capacity).
    pub memory_bytes: usize,
}

/// Chunks of one document that the index refused.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Refused {
    /// Of another dimension than the index's: (count, that dimension).
    pub mismatched: Option<(usize, usize)>,
    /// Zero or not finite.
    pub unusable: usize,
}

#[derive(Debug, Clone, Copy)]
struct RowKey {
    chunk_id: i64,
    document_id: i64,
}

#[derive(Debug, Default)]
pub struct VectorIndex {
    dimension: Option<usize>,
    /// Unit vectors, `dimension` values per row.
    vectors: Planes,
    /// Which chunk each row is.
    rows: Vec<RowKey>,
    /// The rows of each document, to replace or remove a document's chunks.
    rows_of_document: HashMap<i64, Vec<u32>>,
    /// Per document: chunks refused for their dimension, and which dimension.
    mismatched: HashMap<i64, (usize, usize)>,
    unusable: HashMap<i64, usize>,
}

impl VectorIndex {
    /// An empty index for vectors of `dimension` (`None`: set by the first vectors).
    pub fn new(dimension: Option<usize>) -> VectorIndex {
        VectorIndex {
            dimension,
            ..VectorIndex::default()
        }
    }

    /// An empty index with room for `rows` vectors of `dimension`, to be filled with
    /// [`VectorIndex::push`].
    pub fn with_capacity(dimension: usize, rows: usize) -> VectorIndex {
        let mut index = VectorIndex::new(Some(dimension));
        index.vectors.reserve_exact(rows * dimension);
        index.rows.reserve_exact(rows);
        index
    }

    /// An index of `chunks`. Its dimension is `dimension` when given (the embedding
    /// model's), else the most common one among the chunks.
    pub fn build(chunks: Vec<ChunkVector>, dimension: Option<usize>) -> VectorIndex {
        let Some(dimension) = dimension.or_else(|| most_common_dimension(&chunks)) else {
            return VectorIndex::new(None);
        };
        let wanted = chunks
            .iter()
            .filter(|chunk| chunk.embedding.len() == dimension)
            .count();
        let mut index = VectorIndex::with_capacity(dimension, wanted);
        for chunk in chunks {
            index.push(chunk);
        }
        index
    }

    pub fn dimension(&self) -> Option<usize> {
        self.dimension
    }

    /// Replaces the chunks of `document_id` with `chunks`, which all belong to it (none:
    /// removes the document). Says which chunks were refused.
    pub fn replace_document(&mut self, document_id: i64, chunks: Vec<ChunkVector>) -> Refused {
        self.remove_document(document_id);
        if self.dimension.is_none() {
            self.dimension = chunks.first().map(|chunk| chunk.embedding.len());
        }
        let dimension = self.dimension.unwrap_or(0);
        let wanted = chunks
            .iter()
            .filter(|chunk| chunk.embedding.len() == dimension)
            .count();
        self.reserve_rows(wanted);
        for chunk in chunks {
            self.push(chunk);
        }
        Refused {
            mismatched: self.mismatched.get(&document_id).copied(),
            unusable: self.unusable.get(&document_id).copied().unwrap_or(0),
        }
    }

    /// Forgets every chunk of `document_id`.
    pub fn remove_document(&mut self, document_id: i64) {
        self.mismatched.remove(&document_id);
        self.unusable.remove(&document_id);
        let Some(mut rows) = self.rows_of_document.remove(&document_id) else {
            return;
        };
        // From the highest row down, so the last row is never one still to remove.
        rows.sort_unstable_by(|a, b| b.cmp(a));
        for row in rows {
            self.swap_remove_row(row as usize);
        }
        self.release_spare_capacity();
    }

    /// The `k` chunks most similar to `query`, best first (ties: lower chunk id first).
    /// Empty when the query's dimension is not the index's or the query is zero.
    pub fn search(&self, query: &[f32], k: usize) -> Vec<ScoredChunk> {
        let parts = scan_parts(self.rows.len(), query.len());
        self.search_in_parts(query, k, parts)
    }

    /// [`VectorIndex::search`] with the first pass split into `parts` slices.
    fn search_in_parts(&self, query: &[f32], k: usize, parts: usize) -> Vec<ScoredChunk> {
        let Some(dimension) = self.dimension.filter(|&d| d == query.len() && d > 0) else {
            return Vec::new();
        };
        let Some(query) = normalised(query) else {
            return Vec::new();
        };
        if k == 0 {
            return Vec::new();
        }
        let margin = 2.0 * APPROXIMATION_ERROR;
        let (kth_best, candidates) = self.first_pass(&query, k, parts);
        // Second pass: exact scores of the candidates still within reach.
        let mut best: BinaryHeap<Reverse<Candidate>> = BinaryHeap::with_capacity(k + 1);
        let mut vector = vec![0.0f32; dimension];
        for (row, approximate) in candidates {
            if approximate < kth_best - margin {
                continue;
            }
            self.vectors.read_row(row, &mut vector);
            best.push(Reverse(Candidate {
                score: dot(&query, &vector),
                chunk_id: self.rows[row].chunk_id,
                row,
            }));
            if best.len() > k {
                best.pop();
            }
        }
        let mut found: Vec<Candidate> = best.into_iter().map(|Reverse(c)| c).collect();
        found.sort_unstable_by(|a, b| b.cmp(a));
        found
            .into_iter()
            .map(|candidate| ScoredChunk {
                chunk_id: candidate.chunk_id,
                document_id: self.rows[candidate.row].document_id,
                score: candidate.score,
            })
            .collect()
    }

    /// Scores every row approximately, in `parts` slices of rows scanned at once on
    /// their own threads (the scan is bound by each core's memory bandwidth). Returns the
    /// k-th best approximate score and the rows that scored within reach of it.
    fn first_pass(&self, query: &[f32], k: usize, parts: usize) -> (f32, Vec<(usize, f32)>) {
        let rows = self.rows.len();
        let slices = (0..parts).map(|part| rows * part / parts..rows * (part + 1) / parts);
        let passes: Vec<FirstPass> = if parts <= 1 {
            vec![self.first_pass_over(query, k, 0..rows)]
        } else {
            std::thread::scope(|scope| {
                let running: Vec<_> = slices
                    .map(|slice| scope.spawn(move || self.first_pass_over(query, k, slice)))
                    .collect();
                running
                    .into_iter()
                    .map(|part| {
                        part.join()
                            .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
                    })
                    .collect()
            })
        };
        // Each slice pruned against its own k-th best, never above the overall one, so
        // together they keep every row within reach of the overall k-th best.
        let mut best: Vec<f32> = passes
            .iter()
            .flat_map(|pass| pass.best.iter().copied())
            .collect();
        best.sort_unstable_by(|a, b| b.total_cmp(a));
        let kth_best = best.get(k - 1).copied().unwrap_or(f32::NEG_INFINITY);
        let candidates = passes
            .into_iter()
            .flat_map(|pass| pass.candidates)
            .collect();
        (kth_best, candidates)
    }

    /// The first pass over the rows of `slice`: a row whose approximate score is more
    /// than the margin below the k-th best so far cannot be in the top `k`.
    fn first_pass_over(&self, query: &[f32], k: usize, slice: Range<usize>) -> FirstPass {
        let margin = 2.0 * APPROXIMATION_ERROR;
        let mut best: BinaryHeap<Reverse<Score>> = BinaryHeap::with_capacity(k + 1);
        let mut kth_best = f32::NEG_INFINITY;
        let mut candidates: Vec<(usize, f32)> = Vec::new();
        let dimension = query.len();
        let high = &self.vectors.high()[slice.start * dimension..slice.end * dimension];
        for (offset, row_high) in high.chunks_exact(dimension).enumerate() {
            let approximate = dot_high(query, row_high);
            if approximate < kth_best - margin {
                continue;
            }
            candidates.push((slice.start + offset, approximate));
            best.push(Reverse(Score(approximate)));
            if best.len() > k {
                best.pop();
            }
            if best.len() == k {
                kth_best = best.peek().map_or(kth_best, |worst| worst.0.0);
            }
        }
        FirstPass {
            best: best.into_iter().map(|Reverse(score)| score.0).collect(),
            candidates,
        }
    }

    /// How many chunks of `document_id` the index holds.
    pub fn chunk_count(&self, document_id: i64) -> usize {
        self.rows_of_document.get(&document_id).map_or(0, Vec::len)
    }

    pub fn stats(&self) -> IndexStats {
        let map_entry = size_of::<(i64, Vec<u32>)>() + 1;
        let memory_bytes = self.vectors.capacity_bytes()
            + self.rows.capacity() * size_of::<RowKey>()
            + self.rows_of_document.capacity() * map_entry
            + self
                .rows_of_document
                .values()
                .map(|rows| rows.capacity() * size_of::<u32>())
                .sum::<usize>()
            + (self.mismatched.capacity() + self.unusable.capacity()) * (size_of::<[i64; 3]>() + 1);
        IndexStats {
            documents: self.rows_of_document.len(),
            chunks: self.rows.len(),
            dimension: self.dimension,
            dimension_mismatch: self.mismatched.values().map(|(count, _)| count).sum(),
            unusable: self.unusable.values().sum(),
            memory_bytes,
        }
    }

    /// Adds one chunk (its document's other chunks stay). Refused, and counted, when
    /// its dimension is not the index's (the first chunk sets it when unknown) or its
    /// vector is zero or not finite.
    pub fn push(&mut self, chunk: ChunkVector) {
        let ChunkVector {
            chunk_id,
            document_id,
            embedding,
        } = chunk;
        let dimension = *self.dimension.get_or_insert(embedding.len());
        if embedding.len() != dimension {
            let entry = self
                .mismatched
                .entry(document_id)
                .or_insert((0, embedding.len()));
            entry.0 += 1;
            return;
        }
        let Some(unit) = normalised(&embedding) else {
            *self.unusable.entry(document_id).or_default() += 1;
            return;
        };
        let row = self.rows.len() as u32;
        self.vectors.push_row(&unit);
        self.rows.push(RowKey {
            chunk_id,
            document_id,
        });
        self.rows_of_document
            .entry(document_id)
            .or_default()
            .push(row);
    }

    /// Room for `additional` rows, growing by a sixteenth beyond the need so that
    /// repeated small imports neither copy the whole index each time nor leave it with
    /// the spare half a doubling would.
    fn reserve_rows(&mut self, additional: usize) {
        let dimension = self.dimension.unwrap_or(0);
        if self.rows.capacity() >= self.rows.len() + additional {
            return;
        }
        let rows = additional + self.rows.len() / 16;
        self.rows.reserve_exact(rows);
        self.vectors.reserve_exact(rows * dimension);
    }

    /// Gives memory back after removals, keeping the index within about 1.1 times the
    /// bytes of its vectors.
    fn release_spare_capacity(&mut self) {
        let len = self.rows.len();
        if self.rows.capacity() > len + len / 16 + 16 {
            let keep = len + len / 64;
            self.rows.shrink_to(keep);
            self.vectors.shrink_to(keep * self.dimension.unwrap_or(0));
        }
    }

    fn swap_remove_row(&mut self, row: usize) {
        let dimension = self.dimension.unwrap_or(0);
        let last = self.rows.len() - 1;
        if row != last {
            self.vectors.copy_row(last, row, dimension);
            let moved = self.rows[last];
            self.rows[row] = moved;
            if let Some(slot) = self
                .rows_of_document
                .get_mut(&moved.document_id)
                .and_then(|rows| rows.iter_mut().find(|r| **r as usize == last))
            {
                *slot = row as u32;
            }
        }
        self.rows.pop();
        self.vectors.truncate(last, dimension);
    }
}

/// What the first pass found in one slice of rows.
struct FirstPass {
    /// The (up to) k best approximate scores.
    best: Vec<f32>,
    /// Rows within reach of the slice's k-th best, with their approximate scores.
    candidates: Vec<(usize, f32)>,
}

/// Values (rows × dimension) below which a search scans on one thread: a thread costs
/// tens of microseconds to start, the scan of 100,000 values about as much.
const VALUES_PER_SCAN_THREAD: usize = 1 << 20;

/// How many threads scan an index of `rows` rows: one per core, one per
/// [`VALUES_PER_SCAN_THREAD`] values at the most.
fn scan_parts(rows: usize, dimension: usize) -> usize {
    static CORES: OnceLock<usize> = OnceLock::new();
    let cores = *CORES.get_or_init(|| std::thread::available_parallelism().map_or(1, usize::from));
    (rows * dimension / VALUES_PER_SCAN_THREAD).clamp(1, cores)
}

/// An approximate score, ordered by `total_cmp`.
#[derive(Debug, Clone, Copy)]
struct Score(f32);

impl Ord for Score {
    fn cmp(&self, other: &Self) -> Ordering {
        self.0.total_cmp(&other.0)
    }
}

impl PartialOrd for Score {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl PartialEq for Score {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}

impl Eq for Score {}

/// A scored row, ordered by score, then by lower chunk id first.
#[derive(Debug, Clone, Copy)]
struct Candidate {
    score: f32,
    chunk_id: i64,
    row: usize,
}

impl Ord for Candidate {
    fn cmp(&self, other: &Self) -> Ordering {
        self.score
            .total_cmp(&other.score)
            .then_with(|| other.chunk_id.cmp(&self.chunk_id))
    }
}

impl PartialOrd for Candidate {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl PartialEq for Candidate {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}

impl Eq for Candidate {}

fn most_common_dimension(chunks: &[ChunkVector]) -> Option<usize> {
    let mut counts: HashMap<usize, usize> = HashMap::new();
    for chunk in chunks {
        *counts.entry(chunk.embedding.len()).or_default() += 1;
    }
    counts
        .into_iter()
        .filter(|&(dimension, _)| dimension > 0)
        .max_by_key(|&(dimension, count)| (count, dimension))
        .map(|(dimension, _)| dimension)
}

/// `vector` scaled to length 1; `None` when it is zero or not finite.
pub fn normalised(vector: &[f32]) -> Option<Vec<f32>> {
    let norm = dot(vector, vector).sqrt();
    (norm.is_finite() && norm > 0.0).then(|| vector.iter().map(|x| x / norm).collect())
}

#[cfg(test)]
mod tests;
