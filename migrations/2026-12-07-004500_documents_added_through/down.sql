ALTER TABLE documents DROP COLUMN added_through;
