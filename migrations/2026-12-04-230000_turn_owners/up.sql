-- Which instance runs a chat turn, so that a reader whose request reaches another
-- instance is served by the owning one. Unlogged: the rows matter only while their
-- instances run, and a crash may lose them.
CREATE UNLOGGED TABLE turn_owners (
    turn_id uuid PRIMARY KEY,
    owner uuid NOT NULL,
    instance_url text NOT NULL,
    started_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX turn_owners_started_at ON turn_owners (started_at);
