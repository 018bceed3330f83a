-- Documents of every kind, and what a cited passage shows: the kind of each document,
-- its summary, and each chunk's heading path and page.

ALTER TABLE documents
    -- The kind, as a media type (text/markdown, text/plain, application/pdf, text/html,
    -- application/vnd.openxmlformats-officedocument.wordprocessingml.document).
    ADD COLUMN content_type TEXT NOT NULL DEFAULT 'text/markdown',
    -- A short summary written by the chat model; NULL until one is written.
    ADD COLUMN summary TEXT,
    -- For a PDF, the byte offset in `content` where each page begins (the first is 0);
    -- empty for kinds without pages. Chunks are cut again from it (`bor reembed`).
    ADD COLUMN page_starts INTEGER[] NOT NULL DEFAULT '{}';

ALTER TABLE chunks
    -- The headings above the chunk, outermost first, joined by ' › '; '' when none.
    ADD COLUMN heading TEXT NOT NULL DEFAULT '',
    -- The page of a PDF on which the chunk starts, from 1; NULL for kinds without pages.
    ADD COLUMN page INTEGER CHECK (page >= 1);

-- Text files imported before kinds were recorded.
UPDATE documents SET content_type = 'text/plain' WHERE source ~* '\.(txt|text)$';
