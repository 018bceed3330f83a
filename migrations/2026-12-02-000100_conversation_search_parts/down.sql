DROP INDEX conversations_title_words_idx;
ALTER TABLE conversations DROP COLUMN title_words;

ALTER TABLE conversations ADD COLUMN search TSVECTOR NOT NULL DEFAULT ''::tsvector;
UPDATE conversations AS c
SET search = to_tsvector('simple', c.title) || coalesce(
    (SELECT string_agg(s.words::text, ' ')::tsvector
     FROM conversation_search AS s WHERE s.conversation_id = c.id),
    ''::tsvector);
CREATE INDEX conversations_search_idx ON conversations USING GIN (search);

DROP TABLE conversation_search;
