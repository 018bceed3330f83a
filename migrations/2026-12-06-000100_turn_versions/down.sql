ALTER TABLE query_log DROP COLUMN version_of;
