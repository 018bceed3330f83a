ALTER TABLE query_log DROP COLUMN searched_query;
