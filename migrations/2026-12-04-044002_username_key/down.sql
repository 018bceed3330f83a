DROP INDEX users_username_key;
ALTER TABLE users DROP COLUMN username_key;
CREATE UNIQUE INDEX users_username_key ON users (lower(username));
