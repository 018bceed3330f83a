-- What `bor watch` (or `bor serve` with BOR_WATCH) last did with each file of the
-- folders it watches: imported, skipped (with the reason) or removed.
CREATE TABLE watched_files (
    path       TEXT PRIMARY KEY,
    state      TEXT        NOT NULL CHECK (state IN ('imported', 'skipped', 'removed')),
    reason     TEXT,
    updated_at TIMESTAMPTZ NOT NULL DEFAULT now()
);
