-- Who added each document: the person who uploaded it or imported it from a URL.
-- NULL for documents from folder sync and `bor import` (and those stored before).
-- No foreign key: a person deleted later still shows as someone who was, not as the
-- command line.
ALTER TABLE documents ADD COLUMN added_by uuid;
CREATE INDEX documents_added_by ON documents (added_by) WHERE added_by IS NOT NULL;
