//! The chunks' text and their documents' titles, in memory beside the vectors, so that
//! retrieval hands out whole hits without asking PostgreSQL.

use std::collections::HashMap;

/// A chunk as retrieval hands it out.
#[derive(Debug, Clone, PartialEq)]
pub struct StoredChunk {
    pub document_id: i64,
    pub text: Box<str>,
}

#[derive(Debug, Default)]
pub struct ChunkStore {
    chunks: HashMap<i64, StoredChunk>,
    /// Per document: its title and its chunks' ids.
    documents: HashMap<i64, (Box<str>, Vec<i64>)>,
}

impl ChunkStore {
    /// Adds a chunk of `document_id`, whose title is `title`.
    pub fn insert(&mut self, chunk_id: i64, document_id: i64, title: &str, text: String) {
        let (stored_title, chunks) = self
            .documents
            .entry(document_id)
            .or_insert_with(|| (title.into(), Vec::new()));
        if **stored_title != *title {
            *stored_title = title.into();
        }
        chunks.push(chunk_id);
        self.chunks.insert(
            chunk_id,
            StoredChunk {
                document_id,
                text: text.into_boxed_str(),
            },
        );
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
            + self.chunks.values().map(|c| c.text.len()).sum::<usize>()
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
        store.insert(1, 10, "Guide", "first".to_owned());
        store.insert(2, 10, "Guide", "second".to_owned());
        store.insert(3, 11, "Notes", "third".to_owned());
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
