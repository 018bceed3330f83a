//! The in-memory vector index: top-k cosine search over every chunk embedding.
//!
//! PostgreSQL stays the source of truth; this is a copy made for speed. Vectors are
//! normalised when they enter, so cosine similarity is a dot product, and stored row
//! after row as f32, each with its sign code beside it (`codes.rs`: one bit per
//! dimension, 48 bytes for 384 dimensions).
//!
//! A search first measures the Hamming distance of every row's code to the query's
//! (the codes of 100,000 rows are 4.8 MB, a 32nd of the vectors: a scan bound by memory
//! bandwidth reads 32 times less; a large index is read in slices, one thread per
//! core), keeps the [`candidate_count`] rows nearest the query's code, and scores those
//! exactly from their f32 vectors, keeping the best `k` (ties: lower chunk id first).
//! An index of at most that many rows is scored whole, so its result is exact; above,
//! a row missed by the first pass is missed by the search (the benchmark measures
//! recall against an exact scan, see `docs/RETRIEVAL.md`).
//!
//! Every row knows its document's collection. A search may be limited to a set of
//! collections ([`CollectionFilter`]): the rows of the other collections are left out
//! of the first pass itself, so the candidates and the best `k` are chosen among the
//! collections' own rows, never cut from a top taken over all of them. The candidate
//! count follows the rows searched, and a filter holding at most that many rows is
//! scored whole, so a small collection's result is exact.
//!
//! All rows have one dimension, the embedding model's. Rows of another dimension (from
//! an earlier model) cannot be compared with a query; they are refused and counted per
//! document ([`IndexStats::dimension_mismatch`]) until the document is embedded anew (`bor reembed`).

mod codes;

use std::cmp::{Ordering, Reverse};
use std::collections::{BinaryHeap, HashMap};
use std::sync::OnceLock;

pub use codes::dot;
use codes::{Rows, SignCodes};

/// A chunk's embedding as stored in the database.
#[derive(Debug, Clone, PartialEq)]
pub struct ChunkVector {
    pub chunk_id: i64,
    pub document_id: i64,
    pub collection_id: i64,
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

/// The collections a search may return chunks of (a search without one returns
/// chunks of every collection).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CollectionFilter(Vec<i64>);

impl CollectionFilter {
    pub fn new(collection_ids: impl IntoIterator<Item = i64>) -> CollectionFilter {
        let mut ids: Vec<i64> = collection_ids.into_iter().collect();
        ids.sort_unstable();
        ids.dedup();
        CollectionFilter(ids)
    }

    pub fn contains(&self, collection_id: i64) -> bool {
        self.0.binary_search(&collection_id).is_ok()
    }

    /// The collection ids, ascending.
    pub fn ids(&self) -> &[i64] {
        &self.0
    }
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
    vectors: Vec<f32>,
    /// Their sign codes, for the first pass of a search.
    codes: SignCodes,
    /// Which chunk each row is.
    rows: Vec<RowKey>,
    /// The collection of each row, as its slot in `collection_slots`: a column of its
    /// own, 4 bytes a row, so that listing a filter's rows reads little.
    row_collections: Vec<u32>,
    /// A small number per collection id, given when its first row comes.
    collection_slots: HashMap<i64, u32>,
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
            codes: SignCodes::new(dimension.unwrap_or(0)),
            ..VectorIndex::default()
        }
    }

    /// An empty index with room for `rows` vectors of `dimension`, to be filled with
    /// [`VectorIndex::push`].
    pub fn with_capacity(dimension: usize, rows: usize) -> VectorIndex {
        let mut index = VectorIndex::new(Some(dimension));
        index.vectors.reserve_exact(rows * dimension);
        index.codes.reserve_rows(rows);
        index.rows.reserve_exact(rows);
        index.row_collections.reserve_exact(rows);
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
            self.codes = SignCodes::new(self.dimension.unwrap_or(0));
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

    /// The `k` chunks most similar to `query`, best first (ties: lower chunk id first),
    /// of the collections of `filter` (`None`: of all).
    /// Empty when the query's dimension is not the index's or the query is zero.
    pub fn search(
        &self,
        query: &[f32],
        k: usize,
        filter: Option<&CollectionFilter>,
    ) -> Vec<ScoredChunk> {
        let listed = filter.and_then(|filter| self.rows_in(filter));
        let rows = listed.as_ref().map_or(self.rows.len(), Vec::len);
        let candidates = candidate_count(k, rows);
        let parts = scan_parts(rows, self.codes.words_per_row());
        self.scan(query, k, candidates, parts, listed.as_deref())
    }

    /// [`VectorIndex::search`] scoring `candidates` rows exactly, with the first pass
    /// split into `parts` slices (the benchmark measures recall against both).
    pub fn search_with(
        &self,
        query: &[f32],
        k: usize,
        filter: Option<&CollectionFilter>,
        candidates: usize,
        parts: usize,
    ) -> Vec<ScoredChunk> {
        let listed = filter.and_then(|filter| self.rows_in(filter));
        self.scan(query, k, candidates, parts, listed.as_deref())
    }

    /// The rows of the collections of `filter`, ascending; `None` when that is every row.
    fn rows_in(&self, filter: &CollectionFilter) -> Option<Vec<u32>> {
        let mut wanted = vec![false; self.collection_slots.len()];
        for (collection_id, slot) in &self.collection_slots {
            wanted[*slot as usize] = filter.contains(*collection_id);
        }
        if wanted.iter().all(|wanted| *wanted) {
            return None;
        }
        Some(
            (0..self.rows.len() as u32)
                .filter(|row| wanted[self.row_collections[*row as usize] as usize])
                .collect(),
        )
    }

    /// The search over `listed` rows (`None`: every row).
    fn scan(
        &self,
        query: &[f32],
        k: usize,
        candidates: usize,
        parts: usize,
        listed: Option<&[u32]>,
    ) -> Vec<ScoredChunk> {
        let Some(dimension) = self.dimension.filter(|&d| d == query.len() && d > 0) else {
            return Vec::new();
        };
        let Some(query) = normalised(query) else {
            return Vec::new();
        };
        if k == 0 {
            return Vec::new();
        }
        let rows = listed.map_or(self.rows.len(), <[u32]>::len);
        let row_at = |position: usize| listed.map_or(position, |listed| listed[position] as usize);
        let mut best: BinaryHeap<Reverse<Candidate>> = BinaryHeap::with_capacity(k + 1);
        let mut score = |row: usize| {
            let vector = &self.vectors[row * dimension..(row + 1) * dimension];
            best.push(Reverse(Candidate {
                score: dot(&query, vector),
                chunk_id: self.rows[row].chunk_id,
                row,
            }));
            if best.len() > k {
                best.pop();
            }
        };
        if rows <= candidates.max(k) {
            (0..rows).map(row_at).for_each(&mut score);
        } else {
            self.nearest_codes(&query, candidates.max(k), parts, listed)
                .into_iter()
                .map(row_at)
                .for_each(&mut score);
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

    /// The first pass: the `wanted` rows of `listed` (`None`: of all) whose sign codes
    /// are nearest the query's (Hamming distance; ties: lower row first), as positions
    /// in `listed`, measured in `parts` slices of rows at once on their own threads (the
    /// scan is bound by each core's memory bandwidth).
    fn nearest_codes(
        &self,
        query: &[f32],
        wanted: usize,
        parts: usize,
        listed: Option<&[u32]>,
    ) -> Vec<usize> {
        let code = SignCodes::encode(query);
        let rows = listed.map_or(self.rows.len(), <[u32]>::len);
        let rows_of = |range: std::ops::Range<usize>| match listed {
            Some(listed) => Rows::Listed(&listed[range]),
            None => Rows::Span(range),
        };
        let mut distances = vec![0u16; rows];
        let histogram_len = query.len() + 1;
        let histogram = if parts <= 1 {
            let mut histogram = vec![0u32; histogram_len];
            self.codes
                .distances(&code, rows_of(0..rows), &mut distances, &mut histogram);
            histogram
        } else {
            let mut slices = Vec::with_capacity(parts);
            let mut rest = distances.as_mut_slice();
            let mut start = 0;
            for part in 0..parts {
                let end = rows * (part + 1) / parts;
                let (slice, tail) = rest.split_at_mut(end - start);
                slices.push((start..end, slice));
                rest = tail;
                start = end;
            }
            let code = &code;
            std::thread::scope(|scope| {
                let running: Vec<_> = slices
                    .into_iter()
                    .map(|(range, out)| {
                        let rows = rows_of(range);
                        scope.spawn(move || {
                            let mut histogram = vec![0u32; histogram_len];
                            self.codes.distances(code, rows, out, &mut histogram);
                            histogram
                        })
                    })
                    .collect();
                let mut total = vec![0u32; histogram_len];
                for part in running {
                    let histogram = part
                        .join()
                        .unwrap_or_else(|panic| std::panic::resume_unwind(panic));
                    total.iter_mut().zip(histogram).for_each(|(t, h)| *t += h);
                }
                total
            })
        };
        // The distance of the `wanted`-th nearest row: every row nearer is taken, and
        // rows at that distance until `wanted` are.
        let mut nearer = 0usize;
        let mut limit = 0usize;
        for (distance, count) in histogram.iter().enumerate() {
            if nearer + *count as usize >= wanted {
                limit = distance;
                break;
            }
            nearer += *count as usize;
        }
        let mut at_limit = wanted - nearer;
        let mut chosen = Vec::with_capacity(wanted);
        for (row, distance) in distances.iter().enumerate() {
            let distance = usize::from(*distance);
            if distance < limit {
                chosen.push(row);
            } else if distance == limit && at_limit > 0 {
                at_limit -= 1;
                chosen.push(row);
            }
        }
        chosen
    }

    /// How many chunks of `document_id` the index holds.
    pub fn chunk_count(&self, document_id: i64) -> usize {
        self.rows_of_document.get(&document_id).map_or(0, Vec::len)
    }

    pub fn stats(&self) -> IndexStats {
        let map_entry = size_of::<(i64, Vec<u32>)>() + 1;
        let memory_bytes = self.vectors.capacity() * size_of::<f32>()
            + self.codes.capacity_bytes()
            + self.rows.capacity() * size_of::<RowKey>()
            + self.row_collections.capacity() * size_of::<u32>()
            + self.collection_slots.capacity() * (size_of::<(i64, u32)>() + 1)
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

    /// Adds one chunk (its document's other chunks stay); true when it was taken.
    /// Refused, and counted, when its dimension is not the index's (the first chunk
    /// sets it when unknown) or its vector is zero or not finite.
    pub fn push(&mut self, chunk: ChunkVector) -> bool {
        let ChunkVector {
            chunk_id,
            document_id,
            collection_id,
            embedding,
        } = chunk;
        let dimension = match self.dimension {
            Some(dimension) => dimension,
            None => {
                self.dimension = Some(embedding.len());
                self.codes = SignCodes::new(embedding.len());
                embedding.len()
            }
        };
        if embedding.len() != dimension {
            let entry = self
                .mismatched
                .entry(document_id)
                .or_insert((0, embedding.len()));
            entry.0 += 1;
            return false;
        }
        let Some(unit) = normalised(&embedding) else {
            *self.unusable.entry(document_id).or_default() += 1;
            return false;
        };
        let row = self.rows.len() as u32;
        self.codes.push_row(&unit);
        self.vectors.extend_from_slice(&unit);
        self.rows.push(RowKey {
            chunk_id,
            document_id,
        });
        let slots = self.collection_slots.len() as u32;
        let slot = *self.collection_slots.entry(collection_id).or_insert(slots);
        self.row_collections.push(slot);
        self.rows_of_document
            .entry(document_id)
            .or_default()
            .push(row);
        true
    }

    /// The chunk ids of `document_id` that the index holds.
    pub fn accepted(&self, document_id: i64) -> std::collections::HashSet<i64> {
        self.rows_of_document
            .get(&document_id)
            .into_iter()
            .flatten()
            .map(|row| self.rows[*row as usize].chunk_id)
            .collect()
    }

    /// The cosine similarity of chunk `chunk_id` of `document_id` to `query` (a unit
    /// vector of the index's dimension); `None` when the index does not hold it.
    pub fn score_of(&self, document_id: i64, chunk_id: i64, query: &[f32]) -> Option<f32> {
        let dimension = self.dimension.filter(|&d| d == query.len())?;
        let row = *self
            .rows_of_document
            .get(&document_id)?
            .iter()
            .find(|row| self.rows[**row as usize].chunk_id == chunk_id)? as usize;
        Some(dot(
            query,
            &self.vectors[row * dimension..(row + 1) * dimension],
        ))
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
        self.row_collections.reserve_exact(rows);
        self.vectors.reserve_exact(rows * dimension);
        self.codes.reserve_rows(rows);
    }

    /// Gives memory back after removals, keeping the spare room within a sixteenth of
    /// the rows.
    fn release_spare_capacity(&mut self) {
        let len = self.rows.len();
        if self.rows.capacity() > len + len / 16 + 16 {
            let keep = len + len / 64;
            self.rows.shrink_to(keep);
            self.row_collections.shrink_to(keep);
            self.vectors.shrink_to(keep * self.dimension.unwrap_or(0));
            self.codes.shrink_to_rows(keep);
        }
    }

    fn swap_remove_row(&mut self, row: usize) {
        let dimension = self.dimension.unwrap_or(0);
        let last = self.rows.len() - 1;
        if row != last {
            self.vectors
                .copy_within(last * dimension..(last + 1) * dimension, row * dimension);
            self.codes.copy_row(last, row);
            let moved = self.rows[last];
            self.rows[row] = moved;
            self.row_collections[row] = self.row_collections[last];
            if let Some(slot) = self
                .rows_of_document
                .get_mut(&moved.document_id)
                .and_then(|rows| rows.iter_mut().find(|r| **r as usize == last))
            {
                *slot = row as u32;
            }
        }
        self.rows.pop();
        self.row_collections.pop();
        self.vectors.truncate(last * dimension);
        self.codes.truncate(last);
    }
}

/// Code words below which a search measures distances on one thread: a thread costs
/// tens of microseconds to start, the distances of 100,000 words about as much.
const WORDS_PER_SCAN_THREAD: usize = 1 << 18;

/// Rows scored exactly at the least: an index of at most this many rows is scored
/// whole, so small knowledge bases get exact results.
pub const MIN_CANDIDATES: usize = 1_000;

/// How many rows nearest the query's sign code are scored exactly for the top `k` of
/// an index of `rows` rows (chosen from the recall measured in `docs/RETRIEVAL.md`).
pub fn candidate_count(k: usize, rows: usize) -> usize {
    MIN_CANDIDATES.max(k * 100).max(rows / 256)
}

/// How many threads measure distances in an index of `rows` rows: one per core, one
/// per [`WORDS_PER_SCAN_THREAD`] code words at the most.
fn scan_parts(rows: usize, words_per_row: usize) -> usize {
    static CORES: OnceLock<usize> = OnceLock::new();
    let cores = *CORES.get_or_init(|| std::thread::available_parallelism().map_or(1, usize::from));
    (rows * words_per_row / WORDS_PER_SCAN_THREAD).clamp(1, cores)
}

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
