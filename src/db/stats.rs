//! What the knowledge base holds, for readiness reports.

use diesel::prelude::*;
use diesel::sql_types::{Integer, Nullable};
use diesel_async::{AsyncPgConnection, RunQueryDsl};

use super::DbError;
use super::schema::{chunks, documents};

/// Counts of the knowledge base tables.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KnowledgeCounts {
    pub documents: i64,
    pub chunks: i64,
    /// The dimension most chunk embeddings have; `None` without chunks.
    pub embedding_dimension: Option<i32>,
}

#[derive(QueryableByName)]
struct Dimension {
    #[diesel(sql_type = Nullable<Integer>)]
    dimension: Option<i32>,
}

pub async fn knowledge_counts(conn: &mut AsyncPgConnection) -> Result<KnowledgeCounts, DbError> {
    let documents = documents::table.count().get_result(conn).await?;
    let chunks = chunks::table.count().get_result(conn).await?;
    let embedding_dimension = diesel::sql_query(
        "SELECT array_length(embedding, 1) AS dimension FROM chunks \
         GROUP BY 1 ORDER BY count(*) DESC, 1 DESC LIMIT 1",
    )
    .get_result::<Dimension>(conn)
    .await
    .optional()?
    .and_then(|row| row.dimension);
    Ok(KnowledgeCounts {
        documents,
        chunks,
        embedding_dimension,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::db::documents::NewDocument;
    use crate::testing::TestDatabase;

    async fn add_chunk(conn: &mut AsyncPgConnection, document_id: i64, ord: i32, dimension: usize) {
        diesel::insert_into(chunks::table)
            .values((
                chunks::document_id.eq(document_id),
                chunks::ord.eq(ord),
                chunks::text.eq("text"),
                chunks::embedding.eq(vec![0.5_f32; dimension]),
            ))
            .execute(conn)
            .await
            .unwrap();
    }

    #[tokio::test]
    async fn counts_documents_chunks_and_the_common_dimension() {
        let db = TestDatabase::migrated().await;
        let mut conn = db.connect().await;
        assert_eq!(
            knowledge_counts(&mut conn).await.unwrap(),
            KnowledgeCounts {
                documents: 0,
                chunks: 0,
                embedding_dimension: None
            }
        );
        let document_id: i64 = diesel::insert_into(documents::table)
            .values(NewDocument::new("Title", None, "Body"))
            .returning(documents::id)
            .get_result(&mut conn)
            .await
            .unwrap();
        add_chunk(&mut conn, document_id, 0, 64).await;
        add_chunk(&mut conn, document_id, 1, 8).await;
        add_chunk(&mut conn, document_id, 2, 64).await;
        assert_eq!(
            knowledge_counts(&mut conn).await.unwrap(),
            KnowledgeCounts {
                documents: 1,
                chunks: 3,
                embedding_dimension: Some(64)
            }
        );
    }
}
