DROP INDEX documents_source_idx;
DROP TRIGGER chunks_truncate_notify ON chunks;
DROP TRIGGER documents_truncate_notify ON documents;
DROP TRIGGER chunks_notify ON chunks;
DROP TRIGGER documents_notify ON documents;
DROP FUNCTION bor_notify_knowledge_reload();
DROP FUNCTION bor_notify_knowledge_change();
