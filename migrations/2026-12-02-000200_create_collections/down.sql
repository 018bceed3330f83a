ALTER TABLE documents
    DROP CONSTRAINT documents_collection_content_key,
    DROP COLUMN collection_id;
-- Content stored in two collections is kept once again.
DELETE FROM documents AS later
    USING documents AS earlier
    WHERE later.content_sha256 = earlier.content_sha256 AND later.id > earlier.id;
ALTER TABLE documents ADD CONSTRAINT documents_content_sha256_key UNIQUE (content_sha256);
DROP FUNCTION bor_default_collection();
DROP TABLE collections;
