ALTER TABLE documents DROP COLUMN page_sources;
