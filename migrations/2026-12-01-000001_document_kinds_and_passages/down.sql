ALTER TABLE chunks DROP COLUMN page, DROP COLUMN heading;
ALTER TABLE documents DROP COLUMN page_starts, DROP COLUMN summary, DROP COLUMN content_type;
