-- Sign-in from elsewhere (docs/SPEC §14, docs/AUTH.md): the outside identities a user
-- signs in with, and the OpenID Connect sign-ins under way.

-- One row per (issuer, subject): an OpenID Connect provider's `iss` and `sub`, or
-- `trusted-proxy` and the name the proxy's header gave. The user is made at the first
-- sign-in; the row is what finds them again, whatever their username became.
CREATE TABLE user_identities (
    issuer     TEXT        NOT NULL,
    subject    TEXT        NOT NULL,
    user_id    UUID        NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    created_at TIMESTAMPTZ NOT NULL DEFAULT now(),
    PRIMARY KEY (issuer, subject)
);

CREATE INDEX user_identities_user_idx ON user_identities (user_id);

-- An OpenID Connect sign-in between `GET /api/auth/oidc/start` and its callback, kept
-- for a few minutes and taken (deleted) by the callback, so that a `state` serves once.
-- `browser_sha256` is the SHA-256 of the `bor_oidc` cookie given to the browser that
-- started it: a callback from another browser does not match.
CREATE TABLE oidc_logins (
    state          TEXT        PRIMARY KEY,
    browser_sha256 TEXT        NOT NULL,
    nonce          TEXT        NOT NULL,
    pkce_verifier  TEXT        NOT NULL,
    -- Where the person goes once signed in: a path inside bor.
    next_path      TEXT        NOT NULL,
    expires_at     TIMESTAMPTZ NOT NULL
);

CREATE INDEX oidc_logins_expires_idx ON oidc_logins (expires_at);
