//! The full-text half of retrieval, in memory: tantivy over a RAM directory, ranking
//! chunks by BM25 against the words of the question (see `docs/RETRIEVAL.md`).
//!
//! Text is cut into words, lowercased, English stop words dropped (PostgreSQL's list,
//! `stop_words.rs`) and the rest stemmed (Snowball's English stemmer), as PostgreSQL's
//! `english` configuration does. The
//! ranking takes every chunk that holds any word of the question; a chunk *matches*
//! (the full-text half of the grounded rule) when it holds every one of them.
//!
//! Each chunk is one tantivy document: its id (a fast field, to name the hits), its
//! document's id (indexed, so a document's chunks are deleted together), its
//! collection's id (indexed, for a search limited to some collections: the query itself
//! requires one of their ids, a clause that scores nothing, so BM25 ranks only their
//! chunks and the best are cut from those, with the same scores) and its words
//! (indexed with term frequencies, not stored: the text lives in the chunk store): its
//! document's title and the headings above it, then its text ([`searchable_text`]).

use bor_actors::text::prefix_chars;
use std::borrow::Cow;
use std::sync::Mutex;

use tantivy::collector::{Count, TopDocs};
use tantivy::query::{BooleanQuery, ConstScoreQuery, Occur, Query, TermQuery};
use tantivy::schema::{
    FAST, Field, INDEXED, IndexRecordOption, Schema, TextFieldIndexing, TextOptions,
};
use tantivy::tokenizer::{
    Language, LowerCaser, RemoveLongFilter, SimpleTokenizer, Stemmer, StopWordFilter, TextAnalyzer,
};
use tantivy::{Index, IndexReader, IndexWriter, ReloadPolicy, TantivyDocument, Term};

use super::chunking::HEADING_SEPARATOR;
use super::index::CollectionFilter;
use super::stop_words;

/// The name the analyzer is registered under.
const ANALYZER: &str = "bor_english";
/// Words longer than this (in bytes) are left out, as PostgreSQL leaves out very long
/// words: they are hashes, URLs or base64, not words anyone asks about.
const LONGEST_WORD: usize = 40;
/// The indexing buffer: tantivy's least (it grows as documents come, up to this).
const WRITER_MEMORY: usize = 15_000_000;

const CHUNK_ID: &str = "chunk_id";
const DOCUMENT_ID: &str = "document_id";
const COLLECTION_ID: &str = "collection_id";
const TEXT: &str = "text";

/// What the full-text search found for a question.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct TextMatches {
    /// Chunk ids with their BM25 scores, best first (ties: lower chunk id first).
    pub ranked: Vec<(i64, f32)>,
    /// Some chunk holds every word of the question.
    pub matched: bool,
}

/// The most characters of title and headings put before a chunk's text: a title or a
/// heading line has no bound of its own, and it is repeated in every chunk's words.
const MOST_NAME_CHARS: usize = 400;

/// The words a chunk is found by: its document's title and each heading above it (at
/// most [`MOST_NAME_CHARS`] of them), then its text. A title or heading is left out
/// where the text already opens with it (the chunk starts at that heading) or an earlier
/// one said the same, so each counts once: every chunk of a document is found by the
/// words of its title, and a chunk deep in a long section by its section's name, not
/// only the chunk that holds the heading line.
pub fn searchable_text<'a>(title: &str, heading: &str, text: &'a str) -> Cow<'a, str> {
    let opening = text.trim_start().trim_start_matches('#').trim_start();
    let mut said: Vec<&str> = Vec::new();
    for name in std::iter::once(title).chain(heading.split(HEADING_SEPARATOR)) {
        // Only the first characters can be said: no more work per chunk for a longer name.
        let name = prefix_chars(name.trim(), MOST_NAME_CHARS);
        let repeated = said
            .iter()
            .any(|earlier| earlier.eq_ignore_ascii_case(name));
        if !name.is_empty() && !repeated && !opening.starts_with(name) {
            said.push(name);
        }
    }
    if said.is_empty() {
        return Cow::Borrowed(text);
    }
    let names = said.join("\n");
    Cow::Owned(format!("{}\n{text}", prefix_chars(&names, MOST_NAME_CHARS)))
}

pub struct FullTextIndex {
    index: Index,
    reader: IndexReader,
    writer: Mutex<IndexWriter>,
    chunk_id: Field,
    document_id: Field,
    collection_id: Field,
    text: Field,
}

impl FullTextIndex {
    pub fn new() -> tantivy::Result<FullTextIndex> {
        let mut schema = Schema::builder();
        let chunk_id = schema.add_i64_field(CHUNK_ID, FAST);
        let document_id = schema.add_i64_field(DOCUMENT_ID, INDEXED);
        let collection_id = schema.add_i64_field(COLLECTION_ID, INDEXED);
        let text = schema.add_text_field(
            TEXT,
            TextOptions::default().set_indexing_options(
                TextFieldIndexing::default()
                    .set_tokenizer(ANALYZER)
                    .set_index_option(IndexRecordOption::WithFreqs),
            ),
        );
        let index = Index::create_in_ram(schema.build());
        index.tokenizers().register(ANALYZER, analyzer());
        let writer = index.writer_with_num_threads(1, WRITER_MEMORY)?;
        let reader = index
            .reader_builder()
            .reload_policy(ReloadPolicy::Manual)
            .try_into()?;
        Ok(FullTextIndex {
            index,
            reader,
            writer: Mutex::new(writer),
            chunk_id,
            document_id,
            collection_id,
            text,
        })
    }

    /// Adds a chunk of `document_id` in `collection_id`; searches see it after
    /// [`FullTextIndex::commit`].
    pub fn add(
        &self,
        chunk_id: i64,
        document_id: i64,
        collection_id: i64,
        text: &str,
    ) -> tantivy::Result<()> {
        let mut document = TantivyDocument::default();
        document.add_i64(self.chunk_id, chunk_id);
        document.add_i64(self.document_id, document_id);
        document.add_i64(self.collection_id, collection_id);
        document.add_text(self.text, text);
        self.writer().add_document(document)?;
        Ok(())
    }

    /// Forgets every chunk of `document_id` (at the next commit).
    pub fn remove_document(&self, document_id: i64) {
        self.writer()
            .delete_term(Term::from_field_i64(self.document_id, document_id));
    }

    /// Makes the changes so far visible to searches.
    pub fn commit(&self) -> tantivy::Result<()> {
        self.writer().commit()?;
        self.reader.reload()
    }

    /// The best `limit` chunks for `question` of the collections of `filter` (`None`:
    /// of all), and whether one of them holds all its words.
    pub fn search(
        &self,
        question: &str,
        limit: usize,
        filter: Option<&CollectionFilter>,
    ) -> tantivy::Result<TextMatches> {
        let terms = self.terms(question);
        if terms.is_empty() || limit == 0 {
            return Ok(TextMatches::default());
        }
        let in_filter = filter.map(|filter| self.collection_clause(filter));
        let clauses = |occur: Occur| -> Box<dyn Query> {
            let words = Box::new(BooleanQuery::new(
                terms
                    .iter()
                    .map(|term| {
                        let query: Box<dyn Query> =
                            Box::new(TermQuery::new(term.clone(), IndexRecordOption::WithFreqs));
                        (occur, query)
                    })
                    .collect(),
            ));
            match &in_filter {
                Some(in_filter) => Box::new(BooleanQuery::new(vec![
                    (Occur::Must, words),
                    (Occur::Must, in_filter.box_clone()),
                ])),
                None => words,
            }
        };
        let searcher = self.reader.searcher();
        let top = searcher.search(
            &*clauses(Occur::Should),
            &TopDocs::with_limit(limit).order_by_score(),
        )?;
        let mut ranked = Vec::with_capacity(top.len());
        for (score, address) in top {
            let column = searcher
                .segment_reader(address.segment_ord)
                .fast_fields()
                .i64(CHUNK_ID)?;
            if let Some(chunk_id) = column.first(address.doc_id) {
                ranked.push((score, chunk_id));
            }
        }
        ranked.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
        let matched = !ranked.is_empty() && searcher.search(&*clauses(Occur::Must), &Count)? > 0;
        Ok(TextMatches {
            ranked: ranked
                .into_iter()
                .map(|(score, chunk_id)| (chunk_id, score))
                .collect(),
            matched,
        })
    }

    /// Bytes the index takes (postings, term dictionary, field norms, fast fields).
    pub fn memory_bytes(&self) -> usize {
        self.reader
            .searcher()
            .space_usage()
            .map_or(0, |usage| usage.total().get_bytes() as usize)
    }

    /// A clause held by the chunks of the collections of `filter`, scoring nothing (a
    /// filter naming no collection is held by none).
    fn collection_clause(&self, filter: &CollectionFilter) -> Box<dyn Query> {
        let any_of = BooleanQuery::new(
            filter
                .ids()
                .iter()
                .map(|id| {
                    let term = Term::from_field_i64(self.collection_id, *id);
                    let query: Box<dyn Query> =
                        Box::new(TermQuery::new(term, IndexRecordOption::Basic));
                    (Occur::Should, query)
                })
                .collect(),
        );
        Box::new(ConstScoreQuery::new(Box::new(any_of), 0.0))
    }

    /// The distinct indexed words of `question`.
    fn terms(&self, question: &str) -> Vec<Term> {
        let mut analyzer = self
            .index
            .tokenizers()
            .get(ANALYZER)
            .unwrap_or_else(analyzer);
        let mut stream = analyzer.token_stream(question);
        let mut words: Vec<String> = Vec::new();
        while stream.advance() {
            words.push(stream.token().text.clone());
        }
        words.sort();
        words.dedup();
        words
            .iter()
            .map(|word| Term::from_field_text(self.text, word))
            .collect()
    }

    fn writer(&self) -> std::sync::MutexGuard<'_, IndexWriter> {
        // A poisoned lock still holds a writer: indexing on beats failing every update.
        self.writer
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

fn analyzer() -> TextAnalyzer {
    TextAnalyzer::builder(SimpleTokenizer::default())
        .filter(RemoveLongFilter::limit(LONGEST_WORD))
        .filter(LowerCaser)
        .filter(StopWordFilter::remove(
            stop_words::ENGLISH.iter().map(|word| (*word).to_owned()),
        ))
        .filter(Stemmer::new(Language::English))
        .build()
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    /// Collections the tests' documents fall in: document `d` is in collection `d % 3`.
    const COLLECTIONS: i64 = 3;

    fn ids(found: &TextMatches) -> Vec<i64> {
        found.ranked.iter().map(|(id, _)| *id).collect()
    }

    fn index_of(chunks: &[(i64, i64, &str)]) -> FullTextIndex {
        let index = FullTextIndex::new().unwrap();
        for (chunk_id, document_id, text) in chunks {
            index
                .add(*chunk_id, *document_id, document_id % COLLECTIONS, text)
                .unwrap();
        }
        index.commit().unwrap();
        index
    }

    #[test]
    fn words_are_stemmed_and_stop_words_ignored() {
        let index = index_of(&[(1, 1, "The cats were sleeping."), (2, 1, "Dogs bark.")]);
        let found = index.search("cat sleeps", 10, None).unwrap();
        assert_eq!(ids(&found), vec![1]);
        assert!(found.matched);
        assert_eq!(
            index.search("what is the", 10, None).unwrap(),
            TextMatches::default(),
            "stop words only"
        );
    }

    #[test]
    fn questions_full_of_stop_words_match_on_their_other_words() {
        let index = index_of(&[
            (
                1,
                1,
                "Oolong is a partly oxidised tea, between green and black.",
            ),
            (2, 2, "Green tea is not oxidised at all."),
        ]);
        for question in [
            "Which oolong, and why?",
            "What is oolong and how should I do it?",
            "Why have you had oolong before they were here?",
        ] {
            let found = index.search(question, 10, None).unwrap();
            assert_eq!(ids(&found), vec![1], "{question}");
            assert!(
                found.matched,
                "{question}: only \"oolong\" is a word to match"
            );
        }
        let partial = index
            .search("Which oolong is grown where?", 10, None)
            .unwrap();
        assert!(
            !partial.matched,
            "\"grown\" is no stop word and no chunk holds it"
        );
    }

    #[test]
    fn chunks_holding_some_words_are_ranked_and_only_all_words_match() {
        let index = index_of(&[
            (1, 1, "Install bor on Linux with make run."),
            (2, 1, "The pool of database connections."),
            (3, 2, "Linux Linux Linux: bor runs on Linux."),
        ]);
        let found = index.search("install on linux", 10, None).unwrap();
        assert_eq!(ids(&found)[0], 1, "the chunk with both words first");
        assert_eq!(found.ranked.len(), 2);
        assert!(found.matched);
        let partial = index.search("install windows", 10, None).unwrap();
        assert_eq!(ids(&partial), vec![1]);
        assert!(!partial.matched, "no chunk holds every word");
    }

    #[test]
    fn every_chunk_is_found_by_its_title_and_headings_once() {
        assert_eq!(
            searchable_text("Teas", "Teas › Oolong", "Grown in Fujian."),
            "Teas\nOolong\nGrown in Fujian."
        );
        assert_eq!(
            searchable_text("Teas", "Teas › Oolong", "## Oolong\n\nGrown in Fujian."),
            "Teas\n## Oolong\n\nGrown in Fujian.",
            "the chunk opens with its heading"
        );
        assert_eq!(
            searchable_text("Teas", "Teas", "# Teas\n\nAll kinds."),
            "# Teas\n\nAll kinds."
        );
        assert_eq!(searchable_text("", "", "Plain."), "Plain.");
        let long_title = "é".repeat(5_000);
        let bounded = searchable_text(&long_title, "Teas › Oolong", "Grown in Fujian.");
        assert_eq!(
            bounded,
            format!("{}\nGrown in Fujian.", "é".repeat(MOST_NAME_CHARS)),
            "a title or heading of any length puts at most {MOST_NAME_CHARS} characters before the text"
        );

        let index = index_of(&[(1, 1, "Grown in Fujian."), (2, 2, "Oolong, says the menu.")]);
        let unfound = index.search("oolong fujian", 10, None).unwrap();
        assert!(!unfound.matched);
        let index = FullTextIndex::new().unwrap();
        let words = searchable_text("Teas", "Teas › Oolong", "Grown in Fujian.");
        index.add(1, 1, 1, &words).unwrap();
        index.commit().unwrap();
        let found = index.search("Where is oolong grown?", 10, None).unwrap();
        assert_eq!(ids(&found), vec![1]);
        assert!(found.matched, "the heading's word and the text's together");
    }

    #[test]
    fn a_removed_document_is_gone_after_the_commit() {
        let index = index_of(&[(1, 1, "alpha beta"), (2, 2, "alpha gamma")]);
        index.remove_document(1);
        index.add(3, 1, 1, "alpha delta").unwrap();
        index.commit().unwrap();
        let mut found = ids(&index.search("alpha", 10, None).unwrap());
        found.sort();
        assert_eq!(found, vec![2, 3]);
        assert!(index.memory_bytes() > 0);
    }

    const WORDS: [&str; 6] = ["tea", "green", "oolong", "water", "leaf", "cup"];

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]

        #[test]
        fn a_filtered_search_equals_the_filtered_ranking_of_every_chunk(
            chunks in prop::collection::vec(
                (0i64..9, prop::collection::vec(0..WORDS.len(), 1..8)),
                0..60,
            ),
            question in prop::collection::vec(0..WORDS.len(), 1..4),
            collections in prop::collection::vec(0..COLLECTIONS + 1, 0..3),
            limit in 1usize..8,
        ) {
            let texts: Vec<(i64, i64, String)> = chunks
                .iter()
                .zip(1..)
                .map(|((document, words), id)| {
                    let text: Vec<&str> = words.iter().map(|w| WORDS[*w]).collect();
                    (id, *document, text.join(" "))
                })
                .collect();
            let rows: Vec<(i64, i64, &str)> =
                texts.iter().map(|(id, d, text)| (*id, *d, text.as_str())).collect();
            let index = index_of(&rows);
            let question: Vec<&str> = question.iter().map(|w| WORDS[*w]).collect();
            let question = question.join(" ");
            let filter = CollectionFilter::new(collections);
            let of_filter = |chunk_id: &i64| {
                rows.iter()
                    .any(|(id, d, _)| id == chunk_id && filter.contains(d % COLLECTIONS))
            };
            let every = index.search(&question, rows.len().max(1), None).unwrap();
            let mut expected: Vec<(i64, f32)> =
                every.ranked.into_iter().filter(|(id, _)| of_filter(id)).collect();
            expected.truncate(limit);
            let found = index.search(&question, limit, Some(&filter)).unwrap();
            // The same chunks in the same order, with the same BM25 scores but for the
            // last bits (the filtered query sums the words' scores one level deeper).
            let ids = |ranked: &[(i64, f32)]| ranked.iter().map(|(id, _)| *id).collect::<Vec<_>>();
            prop_assert_eq!(ids(&found.ranked), ids(&expected));
            for ((_, score), (_, exact)) in found.ranked.iter().zip(&expected) {
                prop_assert!((score - exact).abs() <= exact.abs() * 1e-5, "{} against {}", score, exact);
            }
            let held_by_all = |id: &i64| {
                let Some((_, _, text)) = rows.iter().find(|(chunk, _, _)| chunk == id) else {
                    return false;
                };
                question.split(' ').all(|word| text.split(' ').any(|w| w == word))
            };
            let matched = rows.iter().any(|(id, _, _)| of_filter(id) && held_by_all(id));
            prop_assert_eq!(found.matched, matched && !found.ranked.is_empty());
        }
    }
}
