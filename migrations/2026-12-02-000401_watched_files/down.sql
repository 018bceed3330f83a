DROP TABLE watched_files;
