// Documents for grounded turns, written straight into PostgreSQL with the mock LLM's
// own embeddings (the mock embeds by shared words, so a question that shares words
// with a chunk retrieves it).

import assert from "node:assert/strict";
import { createHash } from "node:crypto";

export const sqlText = (text) => `'${text.replaceAll("'", "''")}'`;

/** The mock's embedding of `text`. */
export async function embed(suite, text) {
  const response = await fetch(`${suite.mock.baseUrl}/embeddings`, {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify({ model: "smollm2", input: text }),
  });
  assert.equal(response.status, 200);
  return (await response.json()).data[0].embedding;
}

export function cosine(a, b) {
  const dot = a.reduce((sum, value, i) => sum + value * b[i], 0);
  const norm = (v) => Math.sqrt(v.reduce((sum, value) => sum + value * value, 0));
  return dot / (norm(a) * norm(b));
}

/**
 * Stores a document of `chunks` (`{text, heading = "", page = null}`, in order) and
 * deletes it when test `t` ends; resolves with its id and its chunks' ids and
 * embeddings. The content is the chunks' texts, one paragraph each.
 */
export async function storeDocument(
  suite,
  t,
  { title, chunks, contentType = "text/markdown", source = null },
) {
  const content = chunks.map((chunk) => chunk.text).join("\n\n");
  const sha = createHash("sha256").update(content).digest("hex");
  const [[documentId]] = suite.database.query(
    `INSERT INTO documents (title, source, content, content_sha256, content_type)
     VALUES (${sqlText(title)}, ${source === null ? "NULL" : sqlText(source)},
             ${sqlText(content)}, '${sha}', ${sqlText(contentType)}) RETURNING id`,
  );
  t.after(() => suite.database.query(`DELETE FROM documents WHERE id = ${documentId}`));
  const stored = [];
  for (const [ord, { text, heading = "", page = null }] of chunks.entries()) {
    const embedding = await embed(suite, text);
    const [[chunkId]] = suite.database.query(
      `INSERT INTO chunks (document_id, ord, text, embedding, heading, page)
       VALUES (${documentId}, ${ord}, ${sqlText(text)}, ARRAY[${embedding.join(",")}]::real[],
               ${sqlText(heading)}, ${page ?? "NULL"}) RETURNING id`,
    );
    stored.push({ id: Number(chunkId), embedding });
  }
  return { id: Number(documentId), chunks: stored };
}

/** Stores a one-chunk document (see `storeDocument`); resolves with the chunk's embedding. */
export async function insertDocument(suite, t, { title, text }) {
  const { chunks } = await storeDocument(suite, t, { title, chunks: [{ text }] });
  return chunks[0].embedding;
}
