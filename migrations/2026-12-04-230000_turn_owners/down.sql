DROP TABLE turn_owners;
