-- Where the text of each page of a PDF or an image came from (docs/SPEC §19): its text
-- layer, OCR with its confidence, or skipped with the reason; one object per page.
-- Documents stored before it have none recorded.
ALTER TABLE documents ADD COLUMN page_sources jsonb NOT NULL DEFAULT '[]'::jsonb;
