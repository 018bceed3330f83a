DROP TABLE page_validators;
