DROP TABLE query_log;
