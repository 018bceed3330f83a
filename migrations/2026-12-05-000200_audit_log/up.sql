-- The audit trail (docs/PROTOCOL.md, "Audit trail"): appended, never changed; rows
-- older than BOR_AUDIT_DAYS are pruned. `actor_id` keeps the user's id without a
-- reference: the trail outlives a deleted user.
CREATE TABLE audit_log (
    id       BIGSERIAL   PRIMARY KEY,
    at       TIMESTAMPTZ NOT NULL DEFAULT now(),
    action   TEXT        NOT NULL,
    actor_id UUID,
    actor    TEXT        NOT NULL,
    address  TEXT,
    target   TEXT        NOT NULL DEFAULT '',
    details  JSONB       NOT NULL DEFAULT '{}'
);
CREATE INDEX audit_log_at_idx ON audit_log (at DESC, id DESC);

CREATE FUNCTION audit_log_is_append_only() RETURNS trigger AS $$
BEGIN
    RAISE EXCEPTION 'the audit trail is append-only';
END;
$$ LANGUAGE plpgsql;

CREATE TRIGGER audit_log_no_update BEFORE UPDATE ON audit_log
    FOR EACH ROW EXECUTE FUNCTION audit_log_is_append_only();
