-- What a turn's retrieval searched (docs/SPEC §16): the question, then the
-- conversation's previous question when there is one. Null on rows written before it
-- was recorded.
ALTER TABLE query_log ADD COLUMN searched_query text;
