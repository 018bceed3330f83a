DROP TRIGGER conversations_announce_owner ON conversations;
DROP TRIGGER query_log_announce_updates ON query_log;
DROP TRIGGER query_log_announce_truncate ON query_log;
DROP TRIGGER query_log_announce_deletes ON query_log;
DROP TRIGGER query_log_announce_inserts ON query_log;
DROP FUNCTION bor_announce_history_change();
DROP FUNCTION bor_announce_history_rows();
