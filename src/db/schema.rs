//! Diesel's view of the tables, in `diesel print-schema` style. It mirrors
//! `migrations/` exactly; the `schema_check` tests compare it with a migrated database.

pub mod sql_types {
    /// PostgreSQL's full-text document type (no Rust value reads or writes it).
    #[derive(diesel::query_builder::QueryId, Clone, diesel::sql_types::SqlType)]
    #[diesel(postgres_type(name = "tsvector", schema = "pg_catalog"))]
    pub struct Tsvector;
}

diesel::table! {
    api_keys (id) {
        id -> Uuid,
        user_id -> Uuid,
        name -> Text,
        prefix -> Text,
        key_sha256 -> Text,
        created_at -> Timestamptz,
        last_used_at -> Nullable<Timestamptz>,
        expires_at -> Nullable<Timestamptz>,
    }
}

diesel::table! {
    audit_log (id) {
        id -> Int8,
        at -> Timestamptz,
        action -> Text,
        actor_id -> Nullable<Uuid>,
        actor -> Text,
        address -> Nullable<Text>,
        target -> Text,
        details -> Jsonb,
    }
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
        embedder -> Nullable<Text>,
    }
}

diesel::table! {
    collection_grants (id) {
        id -> Int8,
        collection_id -> Int8,
        user_id -> Nullable<Uuid>,
        group_id -> Nullable<Uuid>,
        access -> Text,
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
        user_id -> Nullable<Uuid>,
        pinned_at -> Nullable<Timestamptz>,
        archived_at -> Nullable<Timestamptz>,
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
        page_sources -> Jsonb,
        added_by -> Nullable<Uuid>,
        added_through -> Text,
    }
}

diesel::table! {
    eval_runs (id) {
        id -> Int8,
        created_at -> Timestamptz,
        settings -> Jsonb,
        queries -> Int4,
        measures -> Jsonb,
    }
}

diesel::table! {
    feedback_expected (turn_id) {
        turn_id -> Uuid,
        chunk_ids -> Array<Int8>,
        document_ids -> Array<Int8>,
        marked_by -> Nullable<Uuid>,
        marked_at -> Timestamptz,
    }
}

diesel::table! {
    group_members (group_id, user_id) {
        group_id -> Uuid,
        user_id -> Uuid,
    }
}

diesel::table! {
    groups (id) {
        id -> Uuid,
        name -> Text,
        created_at -> Timestamptz,
    }
}

diesel::table! {
    oauth_access_tokens (id) {
        id -> Uuid,
        grant_id -> Uuid,
        user_id -> Uuid,
        token_sha256 -> Text,
        resource -> Text,
        expires_at -> Timestamptz,
    }
}

diesel::table! {
    oauth_clients (id) {
        id -> Text,
        name -> Text,
        redirect_uris -> Array<Text>,
        auth_method -> Text,
        secret_sha256 -> Nullable<Text>,
        created_at -> Timestamptz,
    }
}

diesel::table! {
    oauth_codes (code_sha256) {
        code_sha256 -> Text,
        client_id -> Text,
        user_id -> Uuid,
        redirect_uri -> Text,
        code_challenge -> Text,
        resource -> Text,
        expires_at -> Timestamptz,
        grant_id -> Nullable<Uuid>,
    }
}

diesel::table! {
    oauth_grants (id) {
        id -> Uuid,
        user_id -> Uuid,
        client_id -> Text,
        resource -> Text,
        created_at -> Timestamptz,
        last_used_at -> Nullable<Timestamptz>,
    }
}

diesel::table! {
    oauth_refresh_tokens (token_sha256) {
        token_sha256 -> Text,
        grant_id -> Uuid,
        created_at -> Timestamptz,
        expires_at -> Timestamptz,
        rotated_at -> Nullable<Timestamptz>,
    }
}

diesel::table! {
    oidc_logins (state) {
        state -> Text,
        browser_sha256 -> Text,
        nonce -> Text,
        pkce_verifier -> Text,
        next_path -> Text,
        expires_at -> Timestamptz,
    }
}

diesel::table! {
    page_validators (document_id) {
        document_id -> Int8,
        etag -> Nullable<Text>,
        last_modified -> Nullable<Text>,
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
        user_id -> Nullable<Uuid>,
        searched_query -> Nullable<Text>,
        prompt_tokens -> Int8,
        completion_tokens -> Int8,
        tokens_estimated -> Bool,
        key_id -> Nullable<Uuid>,
        collection_ids -> Array<Int8>,
        version_of -> Nullable<Uuid>,
    }
}

diesel::table! {
    sessions (id) {
        id -> Uuid,
        user_id -> Uuid,
        secret_sha256 -> Text,
        created_at -> Timestamptz,
        expires_at -> Timestamptz,
    }
}

diesel::table! {
    turn_feedback (turn_id) {
        turn_id -> Uuid,
        user_id -> Uuid,
        rating -> Text,
        reason -> Nullable<Text>,
        comment -> Text,
        created_at -> Timestamptz,
        updated_at -> Timestamptz,
    }
}

diesel::table! {
    turn_owners (turn_id) {
        turn_id -> Uuid,
        owner -> Uuid,
        instance_url -> Text,
        started_at -> Timestamptz,
    }
}

diesel::table! {
    user_identities (issuer, subject) {
        issuer -> Text,
        subject -> Text,
        user_id -> Uuid,
        created_at -> Timestamptz,
    }
}

diesel::table! {
    turns_taken (subject, subject_id, day) {
        subject -> Text,
        subject_id -> Uuid,
        day -> Date,
        taken -> Int8,
    }
}

diesel::table! {
    usage_limits (id) {
        id -> Int8,
        subject -> Text,
        subject_id -> Nullable<Uuid>,
        turns_per_day -> Nullable<Int8>,
        tokens_per_day -> Nullable<Int8>,
        tokens_per_month -> Nullable<Int8>,
        created_at -> Timestamptz,
    }
}

diesel::table! {
    users (id) {
        id -> Uuid,
        username -> Text,
        display_name -> Text,
        password_hash -> Nullable<Text>,
        role -> Text,
        disabled -> Bool,
        created_at -> Timestamptz,
        updated_at -> Timestamptz,
        username_key -> Text,
    }
}

diesel::table! {
    watched_files (path) {
        path -> Text,
        state -> Text,
        reason -> Nullable<Text>,
        updated_at -> Timestamptz,
    }
}

diesel::joinable!(api_keys -> users (user_id));
diesel::joinable!(chunks -> documents (document_id));
diesel::joinable!(collection_grants -> collections (collection_id));
diesel::joinable!(collection_grants -> groups (group_id));
diesel::joinable!(collection_grants -> users (user_id));
diesel::joinable!(documents -> collections (collection_id));
diesel::joinable!(conversation_search -> conversations (conversation_id));
diesel::joinable!(group_members -> groups (group_id));
diesel::joinable!(group_members -> users (user_id));
diesel::joinable!(oauth_access_tokens -> oauth_grants (grant_id));
diesel::joinable!(oauth_access_tokens -> users (user_id));
diesel::joinable!(oauth_codes -> oauth_clients (client_id));
diesel::joinable!(oauth_codes -> oauth_grants (grant_id));
diesel::joinable!(oauth_codes -> users (user_id));
diesel::joinable!(oauth_grants -> oauth_clients (client_id));
diesel::joinable!(oauth_grants -> users (user_id));
diesel::joinable!(oauth_refresh_tokens -> oauth_grants (grant_id));
diesel::joinable!(page_validators -> documents (document_id));
diesel::joinable!(query_log -> conversations (conversation_id));

diesel::joinable!(sessions -> users (user_id));
diesel::joinable!(turn_feedback -> users (user_id));
diesel::joinable!(user_identities -> users (user_id));

diesel::allow_tables_to_appear_in_same_query!(
    api_keys,
    audit_log,
    chunks,
    collection_grants,
    collections,
    conversation_search,
    conversations,
    documents,
    eval_runs,
    feedback_expected,
    group_members,
    groups,
    oauth_access_tokens,
    oauth_clients,
    oauth_codes,
    oauth_grants,
    oauth_refresh_tokens,
    oidc_logins,
    page_validators,
    query_log,
    sessions,
    turn_feedback,
    turn_owners,
    turns_taken,
    usage_limits,
    user_identities,
    users,
    watched_files,
);
