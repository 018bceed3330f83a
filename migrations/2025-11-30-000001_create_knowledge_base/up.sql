-- The knowledge base: documents and the chunks retrieval works on.

CREATE TABLE documents (
    id             BIGSERIAL PRIMARY KEY,
    title          TEXT        NOT NULL,
    -- Where the document came from (a file path or URL); NULL when posted directly.
    source         TEXT,
    content        TEXT        NOT NULL,
    -- SHA-256 of `content`, lowercase hex: the same content is stored once.
    content_sha256 TEXT        NOT NULL UNIQUE CHECK (content_sha256 ~ '^[0-9a-f]{64}$'),
    created_at     TIMESTAMPTZ NOT NULL DEFAULT now()
);

CREATE TABLE chunks (
    id          BIGSERIAL PRIMARY KEY,
    document_id BIGINT  NOT NULL REFERENCES documents (id) ON DELETE CASCADE,
    -- Position of the chunk in its document, from 0.
    ord         INTEGER NOT NULL CHECK (ord >= 0),
    text        TEXT    NOT NULL,
    -- The chunk's embedding; cosine similarity is computed in the service.
    embedding   REAL[]  NOT NULL CHECK (
        cardinality(embedding) > 0
        AND array_ndims(embedding) = 1
        AND array_position(embedding, NULL) IS NULL
    ),
    -- Full-text side of the hybrid retrieval.
    tsv         TSVECTOR GENERATED ALWAYS AS (to_tsvector('english', text)) STORED,
    -- Its index (document_id first) also serves lookups and cascades by document.
    UNIQUE (document_id, ord)
);

CREATE INDEX chunks_tsv_idx ON chunks USING GIN (tsv);
