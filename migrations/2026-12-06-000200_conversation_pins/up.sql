-- A person pins a conversation to the top of their list, or archives it out of the list
-- (docs/PROTOCOL.md, "Conversations"): each is the time it was done, NULL when not.
ALTER TABLE conversations
    ADD COLUMN pinned_at   TIMESTAMPTZ,
    ADD COLUMN archived_at TIMESTAMPTZ;
