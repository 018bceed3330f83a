DROP TABLE chunks;
DROP TABLE documents;
