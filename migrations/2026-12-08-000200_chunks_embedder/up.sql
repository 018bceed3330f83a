-- What made each chunk's vector: the embedding model's name and the prefix put before
-- a document's text (`model` alone without one). A chunk stored before this was kept
-- has none: only its vector's dimension tells its model then.
ALTER TABLE chunks ADD COLUMN embedder TEXT;
