-- Every change to the knowledge base is announced on the channel `bor_knowledge`, so
-- that every bor instance on this database keeps its in-memory index in step: the
-- payload is the id of the document whose rows changed, or `reload` after a TRUNCATE.
-- Notifications go out at commit, once per payload and transaction.

CREATE FUNCTION bor_notify_knowledge_change() RETURNS trigger
LANGUAGE plpgsql AS $$
DECLARE
    old_id BIGINT;
    new_id BIGINT;
BEGIN
    IF TG_TABLE_NAME = 'documents' THEN
        IF TG_OP <> 'INSERT' THEN old_id := OLD.id; END IF;
        IF TG_OP <> 'DELETE' THEN new_id := NEW.id; END IF;
    ELSE
        IF TG_OP <> 'INSERT' THEN old_id := OLD.document_id; END IF;
        IF TG_OP <> 'DELETE' THEN new_id := NEW.document_id; END IF;
    END IF;
    IF old_id IS NOT NULL THEN
        PERFORM pg_notify('bor_knowledge', old_id::text);
    END IF;
    IF new_id IS NOT NULL AND new_id IS DISTINCT FROM old_id THEN
        PERFORM pg_notify('bor_knowledge', new_id::text);
    END IF;
    RETURN NULL;
END
$$;

CREATE FUNCTION bor_notify_knowledge_reload() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_notify('bor_knowledge', 'reload');
    RETURN NULL;
END
$$;

CREATE TRIGGER documents_notify AFTER INSERT OR UPDATE OR DELETE ON documents
    FOR EACH ROW EXECUTE FUNCTION bor_notify_knowledge_change();
CREATE TRIGGER chunks_notify AFTER INSERT OR UPDATE OR DELETE ON chunks
    FOR EACH ROW EXECUTE FUNCTION bor_notify_knowledge_change();
CREATE TRIGGER documents_truncate_notify AFTER TRUNCATE ON documents
    FOR EACH STATEMENT EXECUTE FUNCTION bor_notify_knowledge_reload();
CREATE TRIGGER chunks_truncate_notify AFTER TRUNCATE ON chunks
    FOR EACH STATEMENT EXECUTE FUNCTION bor_notify_knowledge_reload();

-- Finds a file's earlier version on re-import.
CREATE INDEX documents_source_idx ON documents (source);
