//! Proves that `schema.rs` describes the migrated database exactly: every table, its
//! primary key, and every column with its type and nullability, in column order (what
//! a diff against `diesel print-schema` would show).

use diesel::sql_types::Text;
use diesel::{QueryableByName, sql_query};
use diesel_async::RunQueryDsl;

use crate::testing::TestDatabase;

/// Every table the migrations make, by name.
pub(super) const TABLES: [&str; 28] = [
    "api_keys",
    "audit_log",
    "chunks",
    "collection_grants",
    "collections",
    "conversation_search",
    "conversations",
    "documents",
    "eval_runs",
    "feedback_expected",
    "group_members",
    "groups",
    "oauth_access_tokens",
    "oauth_clients",
    "oauth_codes",
    "oauth_grants",
    "oauth_refresh_tokens",
    "oidc_logins",
    "page_validators",
    "query_log",
    "sessions",
    "turn_feedback",
    "turn_owners",
    "turns_taken",
    "usage_limits",
    "user_identities",
    "users",
    "watched_files",
];

#[derive(Debug, PartialEq, Eq)]
struct Table {
    name: String,
    primary_key: String,
    /// (name, diesel type), in column order.
    columns: Vec<(String, String)>,
}

#[derive(QueryableByName)]
struct ColumnInfo {
    #[diesel(sql_type = Text)]
    table_name: String,
    #[diesel(sql_type = Text)]
    column_name: String,
    #[diesel(sql_type = Text)]
    udt_name: String,
    #[diesel(sql_type = Text)]
    is_nullable: String,
}

#[derive(QueryableByName)]
struct PrimaryKey {
    #[diesel(sql_type = Text)]
    table_name: String,
    #[diesel(sql_type = Text)]
    columns: String,
}

/// The tables `schema.rs` declares, read from its source.
fn declared_tables() -> Vec<Table> {
    let mut tables = Vec::new();
    let mut current: Option<Table> = None;
    for line in include_str!("schema.rs").lines().map(str::trim) {
        if let Some(table) = current.as_mut() {
            if line == "}" {
                tables.extend(current.take());
            } else if let Some((column, sql_type)) = line
                .strip_suffix(',')
                .and_then(|line| line.split_once(" -> "))
            {
                table.columns.push((column.to_owned(), sql_type.to_owned()));
            }
        } else if let Some((name, key)) = line
            .strip_suffix(") {")
            .and_then(|header| header.split_once(" ("))
        {
            current = Some(Table {
                name: name.to_owned(),
                primary_key: key.to_owned(),
                columns: Vec::new(),
            });
        }
    }
    tables.sort_by(|a, b| a.name.cmp(&b.name));
    tables
}

/// The diesel type `print-schema` would give a column. Array elements are declared
/// non-null: the tables forbid NULL elements with a check.
fn diesel_type(udt_name: &str, nullable: bool) -> String {
    let base = match udt_name {
        "int2" => "Int2".to_owned(),
        "int4" => "Int4".to_owned(),
        "int8" => "Int8".to_owned(),
        "float4" => "Float4".to_owned(),
        "float8" => "Float8".to_owned(),
        "_float4" => "Array<Float4>".to_owned(),
        "_int4" => "Array<Int4>".to_owned(),
        "_int8" => "Array<Int8>".to_owned(),
        "_text" => "Array<Text>".to_owned(),
        "bool" => "Bool".to_owned(),
        "date" => "Date".to_owned(),
        "text" => "Text".to_owned(),
        "varchar" => "Varchar".to_owned(),
        "uuid" => "Uuid".to_owned(),
        "jsonb" => "Jsonb".to_owned(),
        "timestamptz" => "Timestamptz".to_owned(),
        "tsvector" => "Tsvector".to_owned(),
        other => panic!("no diesel type known for column type {other}"),
    };
    if nullable {
        format!("Nullable<{base}>")
    } else {
        base
    }
}

#[tokio::test]
async fn schema_rs_matches_the_migrated_database() {
    let db = TestDatabase::migrated().await;
    let mut conn = db.connect().await;
    let columns: Vec<ColumnInfo> = sql_query(
        "SELECT c.table_name::text AS table_name, c.column_name::text AS column_name,
                c.udt_name::text AS udt_name, c.is_nullable::text AS is_nullable
         FROM information_schema.columns c
         JOIN information_schema.tables t USING (table_schema, table_name)
         WHERE c.table_schema = 'public' AND t.table_type = 'BASE TABLE'
           AND c.table_name <> '__diesel_schema_migrations'
         ORDER BY c.table_name, c.ordinal_position",
    )
    .load(&mut conn)
    .await
    .unwrap();
    let keys: Vec<PrimaryKey> = sql_query(
        "SELECT tc.table_name::text AS table_name,
                string_agg(k.column_name::text, ', ' ORDER BY k.ordinal_position) AS columns
         FROM information_schema.table_constraints tc
         JOIN information_schema.key_column_usage k
           USING (constraint_schema, constraint_name, table_name)
         WHERE tc.table_schema = 'public' AND tc.constraint_type = 'PRIMARY KEY'
         GROUP BY tc.table_name",
    )
    .load(&mut conn)
    .await
    .unwrap();

    let mut actual: Vec<Table> = Vec::new();
    for column in columns {
        if actual
            .last()
            .is_none_or(|table| table.name != column.table_name)
        {
            let primary_key = keys
                .iter()
                .find(|key| key.table_name == column.table_name)
                .map(|key| key.columns.clone())
                .unwrap_or_default();
            actual.push(Table {
                name: column.table_name.clone(),
                primary_key,
                columns: Vec::new(),
            });
        }
        let sql_type = diesel_type(&column.udt_name, column.is_nullable == "YES");
        if let Some(table) = actual.last_mut() {
            table.columns.push((column.column_name, sql_type));
        }
    }

    let declared = declared_tables();
    let names = |tables: &[Table]| -> Vec<String> {
        tables.iter().map(|table| table.name.clone()).collect()
    };
    assert!(actual.len() >= 5, "{:?}", names(&actual));
    assert_eq!(
        declared
            .iter()
            .map(|table| table.name.as_str())
            .collect::<Vec<_>>(),
        TABLES,
        "schema.rs should be readable by this test"
    );
    assert_eq!(actual, declared);
}
