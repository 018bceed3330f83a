-- Searching conversations: the words of a conversation's title, questions and answers
-- in one indexed document per conversation, kept up to date as its turns are written.

ALTER TABLE conversations ADD COLUMN search TSVECTOR NOT NULL DEFAULT ''::tsvector;

UPDATE conversations AS c
SET search = to_tsvector('simple', c.title || ' ' || coalesce(
    (SELECT string_agg(q.question || ' ' || q.answer, ' ')
     FROM query_log AS q WHERE q.conversation_id = c.id), ''));

CREATE INDEX conversations_search_idx ON conversations USING GIN (search);
