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
 * Stores a one-chunk document and deletes it when test `t` ends; resolves with the
 * chunk's embedding.
 */
export async function insertDocument(suite, t, { title, text }) {
  const embedding = await embed(suite, text);
  const sha = createHash("sha256").update(text).digest("hex");
  const [[documentId]] = suite.database.query(
    `INSERT INTO documents (title, content, content_sha256)
     VALUES (${sqlText(title)}, ${sqlText(text)}, '${sha}') RETURNING id`,
  );
  t.after(() => suite.database.query(`DELETE FROM documents WHERE id = ${documentId}`));
  suite.database.query(
    `INSERT INTO chunks (document_id, ord, text, embedding)
     VALUES (${documentId}, 0, ${sqlText(text)}, ARRAY[${embedding.join(",")}]::real[])`,
  );
  return embedding;
}
