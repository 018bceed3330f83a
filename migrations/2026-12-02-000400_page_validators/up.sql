-- What a web server said identifies the version of a page stored as a document: sent
-- back as If-None-Match / If-Modified-Since, so an unchanged page is not read again.
CREATE TABLE page_validators (
    document_id   BIGINT PRIMARY KEY REFERENCES documents (id) ON DELETE CASCADE,
    etag          TEXT,
    last_modified TEXT
);
