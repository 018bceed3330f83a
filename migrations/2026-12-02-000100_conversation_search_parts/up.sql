-- Searching conversations without a bound on their length. One tsvector per conversation
-- grew with every turn until it passed PostgreSQL's 1 MB limit, and from then on every
-- turn's row was refused with it. The words now live in parts: each part is a stripped
-- tsvector (lexemes only; prefix search needs no positions) kept well under the limit,
-- a new part starting when the last one is full. The title has a vector of its own, so a
-- rename replaces its words without reading the turns again.

CREATE TABLE conversation_search (
    conversation_id UUID     NOT NULL REFERENCES conversations (id) ON DELETE CASCADE,
    part            INTEGER  NOT NULL,
    words           TSVECTOR NOT NULL,
    PRIMARY KEY (conversation_id, part)
);

CREATE INDEX conversation_search_words_idx ON conversation_search USING GIN (words);

-- The turns written so far, one part per turn, each turn's text read in pieces of
-- 50,000 characters (at most 200 KB of lexemes) so that no part can pass the limit.
INSERT INTO conversation_search (conversation_id, part, words)
SELECT turn.conversation_id,
       (row_number() OVER (PARTITION BY turn.conversation_id ORDER BY turn.id, piece.n) - 1)::integer,
       strip(to_tsvector('simple', piece.text))
FROM query_log AS turn
CROSS JOIN LATERAL (
    SELECT n, substr(turn.question || ' ' || turn.answer, 1 + n * 50000, 50000) AS text
    FROM generate_series(0, length(turn.question || ' ' || turn.answer) / 50000) AS n
) AS piece
WHERE turn.conversation_id IS NOT NULL;

DROP INDEX conversations_search_idx;
ALTER TABLE conversations DROP COLUMN search;

ALTER TABLE conversations
    ADD COLUMN title_words TSVECTOR NOT NULL GENERATED ALWAYS AS (to_tsvector('simple', title)) STORED;
CREATE INDEX conversations_title_words_idx ON conversations USING GIN (title_words);
