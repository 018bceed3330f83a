-- Collections: every document belongs to exactly one. Existing documents go to
-- `default`, which this migration makes; a document inserted without a collection goes
-- there too. The same content is stored once per collection.

CREATE TABLE collections (
    id          BIGSERIAL PRIMARY KEY,
    name        TEXT        NOT NULL UNIQUE CHECK (name ~ '^[a-z0-9_-]{1,64}$'),
    description TEXT        NOT NULL DEFAULT '',
    created_at  TIMESTAMPTZ NOT NULL DEFAULT now()
);

INSERT INTO collections (name, description)
    VALUES ('default', 'Documents imported without a collection');

-- The id of `default`; NULL (so an insert fails) once it is deleted.
CREATE FUNCTION bor_default_collection() RETURNS BIGINT
LANGUAGE sql STABLE AS $$ SELECT id FROM collections WHERE name = 'default' $$;

-- Deleting a collection deletes its documents and, with them, their chunks; each
-- deleted document is announced on `bor_knowledge` by the documents' trigger, so every
-- instance drops them from its index.
ALTER TABLE documents
    ADD COLUMN collection_id BIGINT REFERENCES collections (id) ON DELETE CASCADE;
UPDATE documents SET collection_id = bor_default_collection();
ALTER TABLE documents
    ALTER COLUMN collection_id SET NOT NULL,
    ALTER COLUMN collection_id SET DEFAULT bor_default_collection(),
    DROP CONSTRAINT documents_content_sha256_key,
    ADD CONSTRAINT documents_collection_content_key UNIQUE (collection_id, content_sha256);
