DROP INDEX conversations_search_idx;
ALTER TABLE conversations DROP COLUMN search;
