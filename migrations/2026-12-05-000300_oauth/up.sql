-- OAuth 2.1 for MCP clients (docs/SPEC §18): bor is the authorization server of its own
-- `/mcp`. Clients register themselves; a person allows one on the consent page, which
-- makes a grant; the grant's tokens act for that person on `/mcp` only. Only SHA-256
-- hashes of codes, tokens and client secrets are stored.

CREATE TABLE oauth_clients (
    -- The `client_id` handed out at registration.
    id            TEXT        PRIMARY KEY,
    -- `client_name` as the client registered it, shown on the consent page.
    name          TEXT        NOT NULL,
    redirect_uris TEXT[]      NOT NULL CHECK (array_position(redirect_uris, NULL) IS NULL),
    -- How the client proves itself at the token endpoint: `none` (a public client) or
    -- its secret in the body or in Basic authentication.
    auth_method   TEXT        NOT NULL
        CHECK (auth_method IN ('none', 'client_secret_post', 'client_secret_basic')),
    -- SHA-256 of the client secret; NULL for a public client.
    secret_sha256 TEXT,
    created_at    TIMESTAMPTZ NOT NULL DEFAULT now(),
    CHECK ((auth_method = 'none') = (secret_sha256 IS NULL))
);

-- A person's consent to a client: the family of every token it leads to. Deleting it
-- (revoked from the keys list, a refresh token reused, the person disabled) ends them all.
CREATE TABLE oauth_grants (
    id           UUID        PRIMARY KEY,
    user_id      UUID        NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    client_id    TEXT        NOT NULL REFERENCES oauth_clients (id) ON DELETE CASCADE,
    -- The resource (RFC 8707) its tokens are for: `<public>/mcp`.
    resource     TEXT        NOT NULL,
    created_at   TIMESTAMPTZ NOT NULL DEFAULT now(),
    last_used_at TIMESTAMPTZ
);

CREATE INDEX oauth_grants_user_idx ON oauth_grants (user_id);

-- Authorization codes: exchanged once, within 60 s; the exchange makes the grant. The
-- row stays until it expires, naming that grant: the same code presented again revokes
-- it (RFC 6749 §4.1.2).
CREATE TABLE oauth_codes (
    code_sha256    TEXT        PRIMARY KEY,
    client_id      TEXT        NOT NULL REFERENCES oauth_clients (id) ON DELETE CASCADE,
    user_id        UUID        NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    redirect_uri   TEXT        NOT NULL,
    -- PKCE: BASE64URL(SHA-256(code_verifier)).
    code_challenge TEXT        NOT NULL,
    resource       TEXT        NOT NULL,
    expires_at     TIMESTAMPTZ NOT NULL,
    -- The grant its exchange made; NULL until it is exchanged.
    grant_id       UUID        REFERENCES oauth_grants (id) ON DELETE CASCADE
);

CREATE TABLE oauth_access_tokens (
    id           UUID        PRIMARY KEY,
    grant_id     UUID        NOT NULL REFERENCES oauth_grants (id) ON DELETE CASCADE,
    user_id      UUID        NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    token_sha256 TEXT        NOT NULL UNIQUE,
    resource     TEXT        NOT NULL,
    expires_at   TIMESTAMPTZ NOT NULL
);

CREATE INDEX oauth_access_tokens_grant_idx ON oauth_access_tokens (grant_id);

-- Refresh tokens rotate: each is exchanged once (`rotated_at` set); one presented again
-- is a stolen copy or a replay, and its whole grant is revoked.
CREATE TABLE oauth_refresh_tokens (
    token_sha256 TEXT        PRIMARY KEY,
    grant_id     UUID        NOT NULL REFERENCES oauth_grants (id) ON DELETE CASCADE,
    created_at   TIMESTAMPTZ NOT NULL DEFAULT now(),
    expires_at   TIMESTAMPTZ NOT NULL,
    rotated_at   TIMESTAMPTZ
);

CREATE INDEX oauth_refresh_tokens_grant_idx ON oauth_refresh_tokens (grant_id);

-- Access tokens are checked from memory like keys: every instance hears of a new or
-- revoked one on `bor_auth` as `oauth_token:<id>`.
CREATE TRIGGER oauth_access_tokens_notify AFTER INSERT OR DELETE ON oauth_access_tokens
    FOR EACH ROW EXECUTE FUNCTION bor_notify_auth_change('oauth_token');
