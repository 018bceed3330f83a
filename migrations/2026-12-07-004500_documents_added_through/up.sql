-- How each document came in, beside `added_by`: `person` (an upload, a URL import or a
-- post by the person `added_by`), `service_token` (the admin API with
-- `BOR_ADMIN_TOKEN`), `command_line` (`bor import`, `bor eval`), `folder_sync` (the
-- folder watcher), or `unknown`: stored before this was recorded (the documents a
-- person added are known by their `added_by`).
ALTER TABLE documents ADD COLUMN added_through text NOT NULL DEFAULT 'unknown';
UPDATE documents SET added_through = 'person' WHERE added_by IS NOT NULL;
