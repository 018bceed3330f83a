use proptest::prelude::*;

use super::*;

/// Collections the tests' documents fall in: document `d` is in collection `d % 3`.
const COLLECTIONS: i64 = 3;

fn chunk(chunk_id: i64, document_id: i64, embedding: &[f32]) -> ChunkVector {
    ChunkVector {
        chunk_id,
        document_id,
        collection_id: document_id % COLLECTIONS,
        embedding: embedding.to_vec(),
    }
}

/// Scores every live chunk and sorts: what the index must return.
fn brute_force(chunks: &[ChunkVector], query: &[f32], k: usize) -> Vec<(i64, f32)> {
    let Some(query) = normalised(query) else {
        return Vec::new();
    };
    let mut scored: Vec<(i64, f32)> = chunks
        .iter()
        .filter(|c| c.embedding.len() == query.len())
        .filter_map(|c| Some((c.chunk_id, dot(&query, &normalised(&c.embedding)?))))
        .collect();
    scored.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    scored.truncate(k);
    scored
}

fn found(index: &VectorIndex, query: &[f32], k: usize) -> Vec<(i64, f32)> {
    found_in(index, query, k, None)
}

fn found_in(
    index: &VectorIndex,
    query: &[f32],
    k: usize,
    filter: Option<&CollectionFilter>,
) -> Vec<(i64, f32)> {
    index
        .search(query, k, filter)
        .into_iter()
        .map(|hit| (hit.chunk_id, hit.score))
        .collect()
}

#[test]
fn finds_the_most_similar_chunks_best_first() {
    let index = VectorIndex::build(
        vec![
            chunk(1, 10, &[1.0, 0.0]),
            chunk(2, 10, &[0.0, 3.0]),
            chunk(3, 11, &[2.0, 2.0]),
        ],
        None,
    );
    let hits = index.search(&[5.0, 0.0], 2, None);
    assert_eq!(hits.len(), 2);
    assert_eq!((hits[0].chunk_id, hits[0].document_id), (1, 10));
    assert!((hits[0].score - 1.0).abs() < 1e-6);
    assert_eq!(hits[1].chunk_id, 3);
    assert!((hits[1].score - std::f32::consts::FRAC_1_SQRT_2).abs() < 1e-6);
    assert!(
        index.search(&[0.0, 0.0], 2, None).is_empty(),
        "a zero query"
    );
    assert!(
        index.search(&[1.0, 0.0, 0.0], 2, None).is_empty(),
        "another dimension"
    );
}

#[test]
fn near_ties_in_an_index_scored_whole_are_ranked_exactly() {
    // Vectors that differ far below what sign codes can tell apart: in an index of at
    // most `MIN_CANDIDATES` rows every row is scored exactly, so they are ranked right.
    let dimension = 96;
    let base: Vec<f32> = (0..dimension)
        .map(|i| ((i * 37 % 11) as f32 - 5.0) / 7.0)
        .collect();
    let chunks: Vec<ChunkVector> = (0..MIN_CANDIDATES as i64)
        .map(|id| {
            let mut embedding = base.clone();
            embedding[(id as usize * 13) % dimension] += (id % 97) as f32 * 1e-5;
            embedding[(id as usize * 7) % dimension] -= (id % 89) as f32 * 1e-5;
            chunk(id, id / 10, &embedding)
        })
        .collect();
    let index = VectorIndex::build(chunks.clone(), None);
    for shift in 0..8 {
        let mut query = base.clone();
        query[shift * 11] += 0.3;
        for k in [1, 5, 20] {
            assert_eq!(
                found(&index, &query, k),
                brute_force(&chunks, &query, k),
                "k={k}"
            );
        }
    }
}

#[test]
fn chunks_of_another_dimension_are_refused_and_counted() {
    let mut index = VectorIndex::build(
        vec![
            chunk(1, 1, &[1.0, 0.0, 0.0]),
            chunk(2, 1, &[0.0, 1.0, 0.0]),
            chunk(3, 2, &[1.0, 0.0]),
            chunk(4, 3, &[0.0, 0.0, 0.0]),
        ],
        None,
    );
    let stats = index.stats();
    assert_eq!(stats.dimension, Some(3), "the most common dimension");
    assert_eq!((stats.chunks, stats.documents), (2, 1));
    assert_eq!((stats.dimension_mismatch, stats.unusable), (1, 1));

    let refused = index.replace_document(5, vec![chunk(6, 5, &[1.0; 4]), chunk(7, 5, &[1.0; 3])]);
    assert_eq!(refused.mismatched, Some((1, 4)));
    assert_eq!(index.chunk_count(5), 1);
    assert_eq!(index.stats().dimension_mismatch, 2);
    index.remove_document(2);
    index.remove_document(5);
    assert_eq!(index.stats().dimension_mismatch, 0);

    let expected = VectorIndex::build(
        vec![chunk(1, 1, &[1.0; 2]), chunk(2, 1, &[1.0; 3])],
        Some(2),
    );
    assert_eq!(
        expected.stats().dimension,
        Some(2),
        "the model's dimension wins"
    );
    assert_eq!(expected.stats().dimension_mismatch, 1);
}

#[test]
fn an_empty_index_takes_the_dimension_of_its_first_document() {
    let mut index = VectorIndex::new(None);
    assert!(index.search(&[1.0], 1, None).is_empty());
    let refused = index.replace_document(1, vec![chunk(1, 1, &[0.5, 0.5])]);
    assert_eq!(refused, Refused::default());
    assert_eq!(index.dimension(), Some(2));
    assert_eq!(index.search(&[1.0, 1.0], 3, None).len(), 1);
}

#[test]
fn memory_stays_close_to_the_raw_vectors() {
    // f32 vectors, sign codes (a 32nd of them), ids, and spare room of at most a
    // sixteenth of the rows.
    let dimension = 384;
    let chunks: Vec<ChunkVector> = (0..2_000)
        .map(|i| chunk(i, i / 10, &vec![(i % 7) as f32 + 1.0; dimension]))
        .collect();
    let raw = chunks.len() * dimension * size_of::<f32>();
    let mut index = VectorIndex::build(chunks, None);
    let ratio = index.stats().memory_bytes as f64 / raw as f64;
    assert!(ratio <= 1.08, "built: {ratio}");
    for document in 200..220 {
        let rows = (0..10)
            .map(|i| chunk(document * 100 + i, document, &[1.0; 384]))
            .collect();
        index.replace_document(document, rows);
    }
    for document in 0..100 {
        index.remove_document(document);
    }
    let live = index.stats().chunks * dimension * size_of::<f32>();
    let ratio = index.stats().memory_bytes as f64 / live as f64;
    assert!(ratio <= 1.15, "after updates: {ratio}");
}

fn vectors(dimension: usize) -> impl Strategy<Value = Vec<f32>> {
    // Few distinct values, so that equal scores (ties) happen.
    prop::collection::vec(
        prop_oneof![Just(0.0f32), Just(1.0), Just(-0.5), -1.0f32..1.0],
        dimension,
    )
}

/// Rows of a test index: each a document id with a vector.
type DocumentRows = Vec<(i64, Vec<f32>)>;

/// A dimension, rows of documents 0 to 11 with their vectors, and a query.
fn documents_and_query() -> impl Strategy<Value = (usize, DocumentRows, Vec<f32>)> {
    (1usize..24).prop_flat_map(|dimension| {
        (
            Just(dimension),
            prop::collection::vec((0i64..12, vectors(dimension)), 0..150),
            vectors(dimension),
        )
    })
}

/// Chunks 0, 1, … of the documents and vectors of `rows`.
fn chunks_of(rows: &[(i64, Vec<f32>)]) -> Vec<ChunkVector> {
    rows.iter()
        .zip(0..)
        .map(|((document, embedding), id)| chunk(id, *document, embedding))
        .collect()
}

fn hits_with(
    index: &VectorIndex,
    query: &[f32],
    k: usize,
    filter: Option<&CollectionFilter>,
    candidates: usize,
    parts: usize,
) -> Vec<(i64, f32)> {
    index
        .search_with(query, k, filter, candidates, parts)
        .into_iter()
        .map(|hit| (hit.chunk_id, hit.score))
        .collect()
}

#[derive(Debug, Clone)]
enum Change {
    Replace(i64, usize),
    Remove(i64),
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    #[test]
    fn search_equals_brute_force(
        (dimension, rows, query, changes) in (1usize..24).prop_flat_map(|dimension| (
            Just(dimension),
            prop::collection::vec((0i64..12, vectors(dimension)), 0..150),
            vectors(dimension),
            prop::collection::vec(prop_oneof![
                (0i64..14, 0usize..5).prop_map(|(d, n)| Change::Replace(d, n)),
                (0i64..14).prop_map(Change::Remove),
            ], 0..8),
        )),
        k in 1usize..12,
        filters in prop::collection::vec(
            prop::collection::vec(0..COLLECTIONS + 1, 0..3).prop_map(CollectionFilter::new),
            1..3,
        ),
    ) {
        let mut live: Vec<ChunkVector> = rows
            .iter()
            .zip(0..)
            .map(|((document, embedding), id)| chunk(id * 7 % 1009, *document, embedding))
            .collect();
        let mut index = VectorIndex::build(live.clone(), Some(dimension));
        prop_assert_eq!(found(&index, &query, k), brute_force(&live, &query, k));
        let mut next_id = 2_000;
        for change in changes {
            match change {
                Change::Replace(document, count) => {
                    let fresh: Vec<ChunkVector> = (0..count)
                        .map(|i| {
                            next_id += 1;
                            let source = &rows[(next_id as usize + i) % rows.len().max(1)..];
                            let embedding = source.first().map_or(vec![1.0; dimension], |r| r.1.clone());
                            chunk(next_id, document, &embedding)
                        })
                        .collect();
                    live.retain(|c| c.document_id != document);
                    live.extend(fresh.clone());
                    index.replace_document(document, fresh);
                }
                Change::Remove(document) => {
                    live.retain(|c| c.document_id != document);
                    index.remove_document(document);
                }
            }
            prop_assert_eq!(found(&index, &query, k), brute_force(&live, &query, k));
            for filter in &filters {
                let of_filter: Vec<ChunkVector> =
                    live.iter().filter(|c| filter.contains(c.collection_id)).cloned().collect();
                prop_assert_eq!(
                    found_in(&index, &query, k, Some(filter)),
                    brute_force(&of_filter, &query, k),
                    "{:?}", filter
                );
            }
        }
        let usable = live.iter().filter(|c| normalised(&c.embedding).is_some()).count();
        prop_assert_eq!(index.stats().chunks, usable);
    }

    #[test]
    fn a_first_pass_split_over_threads_finds_what_one_thread_finds(
        (dimension, rows, query) in documents_and_query(),
        k in 1usize..12,
        candidates in 1usize..40,
        parts in 2usize..6,
    ) {
        let live = chunks_of(&rows);
        let index = VectorIndex::build(live.clone(), Some(dimension));
        let hits = |parts| hits_with(&index, &query, k, None, candidates, parts);
        prop_assert_eq!(hits(parts), hits(1));
    }

    #[test]
    fn a_filtered_first_pass_chooses_among_the_collections_own_rows(
        (dimension, rows, query) in documents_and_query(),
        k in 1usize..12,
        candidates in 1usize..40,
        parts in 1usize..4,
        collections in prop::collection::vec(0..COLLECTIONS, 1..3),
    ) {
        // Filtering inside the first pass: the candidates of a filtered search are those
        // an index of the collections' chunks alone would choose, not the share of them
        // that a first pass over every row happens to keep.
        let filter = CollectionFilter::new(collections);
        let live = chunks_of(&rows);
        let of_filter: Vec<ChunkVector> =
            live.iter().filter(|c| filter.contains(c.collection_id)).cloned().collect();
        let index = VectorIndex::build(live, Some(dimension));
        let alone = VectorIndex::build(of_filter, Some(dimension));
        prop_assert_eq!(
            hits_with(&index, &query, k, Some(&filter), candidates, parts),
            hits_with(&alone, &query, k, None, candidates, parts)
        );
    }

    #[test]
    fn the_first_pass_keeps_the_rows_nearest_the_query_s_code(
        (dimension, rows, query) in (1usize..24).prop_flat_map(|dimension| (
            Just(dimension),
            prop::collection::vec(vectors(dimension), 1..150),
            vectors(dimension),
        )),
        candidates in 1usize..40,
    ) {
        // With k = candidates every candidate comes back: exactly the rows whose signs
        // differ from the query's in the fewest dimensions (ties: the earlier rows).
        let live: Vec<ChunkVector> = rows
            .iter()
            .zip(0..)
            .map(|(embedding, id)| chunk(id, id, embedding))
            .collect();
        let index = VectorIndex::build(live.clone(), Some(dimension));
        prop_assume!(normalised(&query).is_some());
        let positive = |v: &[f32]| v.iter().map(|x| *x > 0.0).collect::<Vec<_>>();
        let signs = positive(&normalised(&query).unwrap_or_default());
        let mut by_distance: Vec<(usize, i64)> = live
            .iter()
            .filter_map(|c| {
                let unit = normalised(&c.embedding)?;
                let differing = positive(&unit).iter().zip(&signs).filter(|(a, b)| a != b).count();
                Some((differing, c.chunk_id))
            })
            .collect();
        by_distance.sort();
        let mut expected: Vec<i64> = by_distance.iter().take(candidates).map(|(_, id)| *id).collect();
        expected.sort();
        let mut found: Vec<i64> = index
            .search_with(&query, candidates, None, 0, 1)
            .into_iter()
            .map(|hit| hit.chunk_id)
            .collect();
        found.sort();
        prop_assert_eq!(found, expected);
    }

    #[test]
    fn scores_are_cosine_similarities(
        a in prop::collection::vec(-10.0f32..10.0, 1..64),
        b in prop::collection::vec(-10.0f32..10.0, 1..64),
    ) {
        let n = a.len().min(b.len());
        let (a, b) = (&a[..n], &b[..n]);
        let index = VectorIndex::build(vec![chunk(1, 1, b)], None);
        let dot64: f64 = a.iter().zip(b).map(|(x, y)| f64::from(*x) * f64::from(*y)).sum();
        let norm = |v: &[f32]| v.iter().map(|x| f64::from(*x).powi(2)).sum::<f64>().sqrt();
        prop_assume!(norm(a) > 1e-3 && norm(b) > 1e-3);
        let hits = index.search(a, 1, None);
        prop_assert_eq!(hits.len(), 1);
        prop_assert!((f64::from(hits[0].score) - dot64 / (norm(a) * norm(b))).abs() < 1e-4);
    }
}
