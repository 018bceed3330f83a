//! Diesel's view of the tables, in `diesel print-schema` style. It mirrors
//! `migrations/` exactly; the `schema_check` tests compare it with a migrated database.

pub mod sql_types {
    /// PostgreSQL's full-text document type (no Rust value reads or writes it).
    #[derive(diesel::query_builder::QueryId, Clone, diesel::sql_types::SqlType)]
    #[diesel(postgres_type(name = "tsvector", schema = "pg_catalog"))]
    pub struct Tsvector;
}

diesel::table! {
    use diesel::sql_types::*;
    use super::sql_types::Tsvector;

    chunks (id) {
        id -> Int8,
        document_id -> Int8,
        ord -> Int4,
        text -> Text,
        embedding -> Array<Float4>,
        tsv -> Nullable<Tsvector>,
        heading -> Text,
        page -> Nullable<Int4>,
    }
}

diesel::table! {
    collections (id) {
        id -> Int8,
        name -> Text,
        description -> Text,
        created_at -> Timestamptz,
    }
}

diesel::table! {
    use diesel::sql_types::*;
    use super::sql_types::Tsvector;

    conversations (id) {
        id -> Uuid,
        title -> Text,
        created_at -> Timestamptz,
        updated_at -> Timestamptz,
        title_words -> Tsvector,
    }
}

diesel::table! {
    use diesel::sql_types::*;
    use super::sql_types::Tsvector;

    conversation_search (conversation_id, part) {
        conversation_id -> Uuid,
        part -> Int4,
        words -> Tsvector,
    }
}

diesel::table! {
    documents (id) {
        id -> Int8,
        title -> Text,
        source -> Nullable<Text>,
        content -> Text,
        content_sha256 -> Text,
        created_at -> Timestamptz,
        content_type -> Text,
        summary -> Nullable<Text>,
        page_starts -> Array<Int4>,
        collection_id -> Int8,
    }
}

diesel::table! {
    query_log (id) {
        id -> Int8,
        turn_id -> Uuid,
        created_at -> Timestamptz,
        question -> Text,
        answer -> Text,
        path -> Text,
        status -> Text,
        chat_model -> Text,
        rounds -> Int4,
        tool_calls -> Int4,
        retries -> Int4,
        scaffold_stripped -> Int4,
        recovered -> Bool,
        sources -> Jsonb,
        first_token_ms -> Nullable<Int8>,
        elapsed_ms -> Int8,
        conversation_id -> Nullable<Uuid>,
    }
}

diesel::joinable!(chunks -> documents (document_id));
diesel::joinable!(documents -> collections (collection_id));
diesel::joinable!(conversation_search -> conversations (conversation_id));
diesel::joinable!(query_log -> conversations (conversation_id));

diesel::allow_tables_to_appear_in_same_query!(
    chunks,
    collections,
    conversation_search,
    conversations,
    documents,
    query_log
);
