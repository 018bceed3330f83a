-- Limits on turns and tokens (docs/LIMITS.md, "Limits"): one row per subject, a user,
-- a group or an API key (`subject_id`), or everyone (no id). A measure left NULL is not
-- limited by that row.
CREATE TABLE usage_limits (
    id               BIGSERIAL   PRIMARY KEY,
    subject          TEXT        NOT NULL CHECK (subject IN ('user', 'group', 'key', 'everyone')),
    subject_id       UUID,
    turns_per_day    BIGINT      CHECK (turns_per_day >= 0),
    tokens_per_day   BIGINT      CHECK (tokens_per_day >= 0),
    tokens_per_month BIGINT      CHECK (tokens_per_month >= 0),
    created_at       TIMESTAMPTZ NOT NULL DEFAULT now(),
    CHECK ((subject = 'everyone') = (subject_id IS NULL)),
    UNIQUE NULLS NOT DISTINCT (subject, subject_id)
);

-- Every instance reads the limits and the memberships they depend on again when
-- either changes; the turns and tokens counted travel on the same channel.
CREATE FUNCTION bor_notify_limits_change() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_notify('bor_usage', 'limits');
    RETURN NULL;
END
$$;

CREATE TRIGGER usage_limits_notify AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE
    ON usage_limits FOR EACH STATEMENT EXECUTE FUNCTION bor_notify_limits_change();
CREATE TRIGGER group_members_notify_limits AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE
    ON group_members FOR EACH STATEMENT EXECUTE FUNCTION bor_notify_limits_change();
