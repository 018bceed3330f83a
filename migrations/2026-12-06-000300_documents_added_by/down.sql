DROP INDEX documents_added_by;
ALTER TABLE documents DROP COLUMN added_by;
