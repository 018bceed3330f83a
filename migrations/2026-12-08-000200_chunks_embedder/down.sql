ALTER TABLE chunks DROP COLUMN embedder;
