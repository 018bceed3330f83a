-- Versions of a turn (docs/PROTOCOL.md, "Versions of a turn"): a turn asked again
-- (regenerated, or its question edited) is a new row that names the turn it is a
-- version of, by the first version's `turn_id`. The first version's own is NULL.
ALTER TABLE query_log ADD COLUMN version_of UUID;

CREATE INDEX query_log_version_of_idx ON query_log (version_of) WHERE version_of IS NOT NULL;
