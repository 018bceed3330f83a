DROP TABLE oidc_logins;
DROP TABLE user_identities;
