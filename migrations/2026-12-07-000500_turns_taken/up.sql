-- The turns each person and API key has taken from its turns-per-day limit, shared by
-- the instances (docs/LIMITS.md, "Overshoot"): an instance takes turns in blocks, by
-- raising `taken` while it stays within the limit, lets turns in from its block in
-- memory, and gives back what it did not use. One row per subject and UTC day, made
-- the first time a limit applies that day.
CREATE TABLE turns_taken (
    subject    TEXT   NOT NULL CHECK (subject IN ('user', 'key')),
    subject_id UUID   NOT NULL,
    day        DATE   NOT NULL,
    taken      BIGINT NOT NULL CHECK (taken >= 0),
    PRIMARY KEY (subject, subject_id, day)
);
