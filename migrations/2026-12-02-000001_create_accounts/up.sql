-- People (docs/SPEC §14): users with their sessions and API keys, and groups for the
-- collections' grants. Only SHA-256 hashes of session and key secrets are stored.

CREATE TABLE users (
    id            UUID        PRIMARY KEY,
    username      TEXT        NOT NULL,
    display_name  TEXT        NOT NULL,
    -- argon2id in PHC form; NULL for people who sign in elsewhere (SSO).
    password_hash TEXT,
    role          TEXT        NOT NULL CHECK (role IN ('admin', 'member')),
    disabled      BOOLEAN     NOT NULL DEFAULT FALSE,
    created_at    TIMESTAMPTZ NOT NULL DEFAULT now(),
    updated_at    TIMESTAMPTZ NOT NULL DEFAULT now()
);

-- Usernames are unique whatever their case.
CREATE UNIQUE INDEX users_username_key ON users (lower(username));

CREATE TABLE sessions (
    id            UUID        PRIMARY KEY,
    user_id       UUID        NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    -- SHA-256 of the cookie's secret, lowercase hex.
    secret_sha256 TEXT        NOT NULL UNIQUE,
    created_at    TIMESTAMPTZ NOT NULL DEFAULT now(),
    expires_at    TIMESTAMPTZ NOT NULL
);

CREATE INDEX sessions_user_idx ON sessions (user_id);

CREATE TABLE api_keys (
    id           UUID        PRIMARY KEY,
    user_id      UUID        NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    name         TEXT        NOT NULL,
    -- The first characters of the key, shown in lists so a person can tell keys apart.
    prefix       TEXT        NOT NULL,
    -- SHA-256 of the whole key, lowercase hex.
    key_sha256   TEXT        NOT NULL UNIQUE,
    created_at   TIMESTAMPTZ NOT NULL DEFAULT now(),
    last_used_at TIMESTAMPTZ
);

CREATE INDEX api_keys_user_idx ON api_keys (user_id);

CREATE TABLE groups (
    id         UUID        PRIMARY KEY,
    name       TEXT        NOT NULL UNIQUE,
    created_at TIMESTAMPTZ NOT NULL DEFAULT now()
);

CREATE TABLE group_members (
    group_id UUID NOT NULL REFERENCES groups (id) ON DELETE CASCADE,
    user_id  UUID NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    PRIMARY KEY (group_id, user_id)
);

CREATE INDEX group_members_user_idx ON group_members (user_id);

-- Every change that decides who may sign in is announced on the channel `bor_auth`, so
-- that every instance keeps its in-memory sessions and keys in step: the payload is
-- `user:<id>`, `session:<id>` or `key:<id>`, and the listener reads that row again
-- (gone: forgotten). A key's `last_used_at` is not announced.
CREATE FUNCTION bor_notify_auth_change() RETURNS trigger
LANGUAGE plpgsql AS $$
DECLARE
    changed UUID;
BEGIN
    IF TG_OP = 'DELETE' THEN changed := OLD.id; ELSE changed := NEW.id; END IF;
    PERFORM pg_notify('bor_auth', TG_ARGV[0] || ':' || changed::text);
    RETURN NULL;
END
$$;

CREATE TRIGGER users_notify AFTER INSERT OR UPDATE OR DELETE ON users
    FOR EACH ROW EXECUTE FUNCTION bor_notify_auth_change('user');
CREATE TRIGGER sessions_notify AFTER INSERT OR DELETE ON sessions
    FOR EACH ROW EXECUTE FUNCTION bor_notify_auth_change('session');
CREATE TRIGGER api_keys_notify AFTER INSERT OR DELETE ON api_keys
    FOR EACH ROW EXECUTE FUNCTION bor_notify_auth_change('key');
