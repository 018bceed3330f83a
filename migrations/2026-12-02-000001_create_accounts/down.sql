DROP TABLE group_members;
DROP TABLE groups;
DROP TABLE api_keys;
DROP TABLE sessions;
DROP TABLE users;
DROP FUNCTION bor_notify_auth_change();
