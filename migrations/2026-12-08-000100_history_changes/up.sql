-- Every change to what a conversation's history reads is announced on `bor_history`,
-- so that each instance's cache of histories lets go of what changed
-- (docs/LIMITS.md, "Histories each instance keeps"). A payload is
-- `<writer>|<id>,<id>,…`: the instance whose LogActor wrote the rows (`bor.writer`, set
-- in the writing transaction; empty for any other writer), then the conversations
-- changed, at most 100 a notification; `<writer>|*` names every conversation.
CREATE FUNCTION bor_announce_history_rows() RETURNS trigger
LANGUAGE plpgsql AS $$
DECLARE
    writer text := coalesce(current_setting('bor.writer', true), '');
    ids text;
BEGIN
    IF TG_OP = 'TRUNCATE' THEN
        PERFORM pg_notify('bor_history', writer || '|*');
        RETURN NULL;
    END IF;
    FOR ids IN
        SELECT string_agg(id::text, ',')
        FROM (SELECT id, (row_number() OVER (ORDER BY id) - 1) / 100 AS part
              FROM (SELECT DISTINCT conversation_id AS id FROM changed
                    WHERE conversation_id IS NOT NULL) AS conversation_ids) AS numbered
        GROUP BY part
    LOOP
        PERFORM pg_notify('bor_history', writer || '|' || ids);
    END LOOP;
    RETURN NULL;
END
$$;

CREATE TRIGGER query_log_announce_inserts AFTER INSERT ON query_log
    REFERENCING NEW TABLE AS changed
    FOR EACH STATEMENT EXECUTE FUNCTION bor_announce_history_rows();
CREATE TRIGGER query_log_announce_deletes AFTER DELETE ON query_log
    REFERENCING OLD TABLE AS changed
    FOR EACH STATEMENT EXECUTE FUNCTION bor_announce_history_rows();
CREATE TRIGGER query_log_announce_truncate AFTER TRUNCATE ON query_log
    FOR EACH STATEMENT EXECUTE FUNCTION bor_announce_history_rows();

-- A row changed in what a history reads of it, or a conversation given to somebody
-- else: one notification a row (those alike in one transaction are sent once).
CREATE FUNCTION bor_announce_history_change() RETURNS trigger
LANGUAGE plpgsql AS $$
DECLARE
    writer text := coalesce(current_setting('bor.writer', true), '');
    ids text;
BEGIN
    IF TG_TABLE_NAME = 'conversations' THEN
        ids := NEW.id::text;
    ELSE
        ids := concat_ws(',', OLD.conversation_id, nullif(NEW.conversation_id, OLD.conversation_id));
    END IF;
    IF ids <> '' THEN
        PERFORM pg_notify('bor_history', writer || '|' || ids);
    END IF;
    RETURN NULL;
END
$$;

CREATE TRIGGER query_log_announce_updates AFTER UPDATE ON query_log
    FOR EACH ROW
    WHEN ((OLD.turn_id, OLD.question, OLD.answer, OLD.created_at, OLD.conversation_id, OLD.version_of)
          IS DISTINCT FROM
          (NEW.turn_id, NEW.question, NEW.answer, NEW.created_at, NEW.conversation_id, NEW.version_of))
    EXECUTE FUNCTION bor_announce_history_change();
CREATE TRIGGER conversations_announce_owner AFTER UPDATE OF user_id ON conversations
    FOR EACH ROW WHEN (OLD.user_id IS DISTINCT FROM NEW.user_id)
    EXECUTE FUNCTION bor_announce_history_change();
