DROP TABLE turns_taken;
