DROP TRIGGER group_members_notify_access ON group_members;
DROP TRIGGER groups_notify_access ON groups;
DROP TRIGGER collections_notify_access ON collections;
DROP TRIGGER collections_default_readable ON collections;
DROP TABLE collection_grants;
DROP FUNCTION bor_notify_access_change();
DROP FUNCTION bor_grant_default_to_everyone();
DELETE FROM groups WHERE name = 'everyone';
