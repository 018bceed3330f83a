DROP TABLE audit_log;
DROP FUNCTION audit_log_is_append_only();
