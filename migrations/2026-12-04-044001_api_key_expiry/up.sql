-- A key may expire (docs/SPEC §14): past `expires_at` it answers 401. NULL: never.
ALTER TABLE api_keys ADD COLUMN expires_at TIMESTAMPTZ;
