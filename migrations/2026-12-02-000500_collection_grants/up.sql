-- Who may read which collection (docs/SPEC §15): grants of `read` or `write` to a user
-- or a group. The built-in group `everyone` holds every user without member rows;
-- `default` is readable by everyone, now and whenever a collection of that name is
-- made again. Admins read and write every collection without a grant.

CREATE TABLE collection_grants (
    id            BIGSERIAL PRIMARY KEY,
    collection_id BIGINT NOT NULL REFERENCES collections (id) ON DELETE CASCADE,
    user_id       UUID REFERENCES users (id) ON DELETE CASCADE,
    group_id      UUID REFERENCES groups (id) ON DELETE CASCADE,
    access        TEXT NOT NULL CHECK (access IN ('read', 'write')),
    -- A grant is to a user or to a group, never both.
    CHECK ((user_id IS NULL) <> (group_id IS NULL))
);

CREATE UNIQUE INDEX collection_grants_user_key
    ON collection_grants (collection_id, user_id) WHERE user_id IS NOT NULL;
CREATE UNIQUE INDEX collection_grants_group_key
    ON collection_grants (collection_id, group_id) WHERE group_id IS NOT NULL;
CREATE INDEX collection_grants_user_idx ON collection_grants (user_id);
CREATE INDEX collection_grants_group_idx ON collection_grants (group_id);

INSERT INTO groups (id, name) VALUES (gen_random_uuid(), 'everyone')
    ON CONFLICT (name) DO NOTHING;

CREATE FUNCTION bor_grant_default_to_everyone() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO collection_grants (collection_id, group_id, access)
        SELECT NEW.id, groups.id, 'read' FROM groups WHERE groups.name = 'everyone';
    RETURN NULL;
END
$$;

CREATE TRIGGER collections_default_readable AFTER INSERT ON collections
    FOR EACH ROW WHEN (NEW.name = 'default')
    EXECUTE FUNCTION bor_grant_default_to_everyone();

INSERT INTO collection_grants (collection_id, group_id, access)
    SELECT collections.id, groups.id, 'read'
    FROM collections, groups
    WHERE collections.name = 'default' AND groups.name = 'everyone';

-- Every change to who may read what is announced on `bor_access` (the payload is the
-- table's name): each instance reads the collections, grants and memberships again.
CREATE FUNCTION bor_notify_access_change() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_notify('bor_access', TG_TABLE_NAME);
    RETURN NULL;
END
$$;

CREATE TRIGGER collections_notify_access AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE
    ON collections FOR EACH STATEMENT EXECUTE FUNCTION bor_notify_access_change();
CREATE TRIGGER collection_grants_notify_access AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE
    ON collection_grants FOR EACH STATEMENT EXECUTE FUNCTION bor_notify_access_change();
CREATE TRIGGER groups_notify_access AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE
    ON groups FOR EACH STATEMENT EXECUTE FUNCTION bor_notify_access_change();
CREATE TRIGGER group_members_notify_access AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE
    ON group_members FOR EACH STATEMENT EXECUTE FUNCTION bor_notify_access_change();
