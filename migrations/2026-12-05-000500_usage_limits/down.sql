DROP TRIGGER group_members_notify_limits ON group_members;
DROP TABLE usage_limits;
DROP FUNCTION bor_notify_limits_change();
