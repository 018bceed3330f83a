-- Usernames are compared by one key (docs/AUTH.md, "Usernames"): the name's Unicode
-- lower case as bor computes it, which the sign-in limiter and the account lookup use
-- too. PostgreSQL's lower() depends on the database's locale and can differ from it
-- outside ASCII (it made `İris` the same name as `iris`), so the unique index holds the
-- key bor writes. Rows made before are keyed with lower() here; bor re-keys the few
-- whose key differs once its migrations have run.
ALTER TABLE users ADD COLUMN username_key TEXT;
UPDATE users SET username_key = lower(username);
ALTER TABLE users ALTER COLUMN username_key SET NOT NULL;
DROP INDEX users_username_key;
CREATE UNIQUE INDEX users_username_key ON users (username_key);
