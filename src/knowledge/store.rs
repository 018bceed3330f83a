//! The chunks' text and their documents' titles, in memory beside the vectors, so that
//! retrieval hands out whole hits without asking PostgreSQL.

use std::collections::HashMap;

use crate::db::chunks::IndexedChunk;

/// A chunk as retrieval hands it out.
#[derive(Debug, Clone, PartialEq)]
pub struct StoredChunk {
    pub document_id: i64,
    pub text: Box<str>,
    /// The headings above it (`""` when none).
    pub heading: Box<str>,
    /// The PDF page it starts on.
    pub page: Option<u32>,
}

impl StoredChunk {
    /// A chunk as the database row holds it.
    pub fn of_row(row: &IndexedChunk) -> StoredChunk {
        StoredChunk {
            document_id: row.document_id,
            text: row.text.as_str().into(),
            heading: row.heading.as_str().into(),
            page: row.page.and_then(|page| u32::try_from(page).ok()),
        }
    }
}

#[derive(Debug, Default)]
pub struct ChunkStore {
    chunks: HashMap<i64, StoredChunk>,
    /// Per document: its title and its chunks' ids.
    documents: HashMap<i64, (Box<str>, Vec<i64>)>,
}

impl ChunkStore {
    /// Adds a chunk whose document's title is `title`.
    pub fn insert(&mut self, chunk_id: i64, title: &str, chunk: StoredChunk) {
        let (stored_title, chunks) = self
            .documents
            .entry(chunk.document_id)
            .or_insert_with(|| (title.into(), Vec::new()));
        if **stored_title != *title {
            *stored_title = title.into();
        }
        chunks.push(chunk_id);
        self.chunks.insert(chunk_id, chunk);
    }

    /// Forgets every chunk of `document_id`.
    pub fn remove_document(&mut self, document_id: i64) {
        if let Some((_, chunks)) = self.documents.remove(&document_id) {
            for chunk_id in chunks {
                self.chunks.remove(&chunk_id);
            }
        }
    }

    /// The chunk and its document's title.
    pub fn get(&self, chunk_id: i64) -> Option<(&StoredChunk, &str)> {
        let chunk = self.chunks.get(&chunk_id)?;
        let (title, _) = self.documents.get(&chunk.document_id)?;
        Some((chunk, title))
    }

    /// Bytes held: texts and titles exactly, the maps estimated from their capacity.
    pub fn memory_bytes(&self) -> usize {
        let chunk_entry = size_of::<(i64, StoredChunk)>() + 1;
        let document_entry = size_of::<(i64, (Box<str>, Vec<i64>))>() + 1;
        self.chunks.capacity() * chunk_entry
            + self
                .chunks
                .values()
                .map(|c| c.text.len() + c.heading.len())
                .sum::<usize>()
            + self.documents.capacity() * document_entry
            + self
                .documents
                .values()
                .map(|(title, chunks)| title.len() + chunks.capacity() * size_of::<i64>())
                .sum::<usize>()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chunks_come_back_with_their_title_until_their_document_goes() {
        let mut store = ChunkStore::default();
        let chunk = |document_id, text: &str| StoredChunk {
            document_id,
            text: text.into(),
            heading: "Intro".into(),
            page: Some(2),
        };
        store.insert(1, "Guide", chunk(10, "first"));
        store.insert(2, "Guide", chunk(10, "second"));
        store.insert(3, "Notes", chunk(11, "third"));
        let (chunk, title) = store.get(2).unwrap();
        assert_eq!(
            (chunk.document_id, &*chunk.text, title),
            (10, "second", "Guide")
        );
        store.remove_document(10);
        assert!(store.get(1).is_none() && store.get(2).is_none());
        assert_eq!(store.get(3).unwrap().1, "Notes");
        assert!(store.memory_bytes() > "third".len());
    }
}
