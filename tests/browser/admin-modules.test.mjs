// The admin page's pure modules, run in Node: which files become documents and with
// what title, and how the health report reads.

import assert from "node:assert/strict";
import { test } from "node:test";

import {
  DocumentFileError,
  MAX_FILE_BYTES,
  fileKind,
  firstHeading,
  readDocumentFile,
  titleFromName,
} from "../../static/document-file.js";
import {
  configRows,
  databaseRows,
  formatLatency,
  formatUptime,
  healthSections,
  knowledgeRows,
  llmRows,
  logRows,
  turnRows,
} from "../../static/health-rows.js";

const rowsAsObject = (rows) =>
  Object.fromEntries(rows.map(({ label, value, tone }) => [label, [value, tone]]));

test("Markdown and text files qualify by extension, else by media type", () => {
  assert.equal(fileKind({ name: "notes.md", type: "" }), "markdown");
  assert.equal(fileKind({ name: "NOTES.MARKDOWN", type: "application/octet-stream" }), "markdown");
  assert.equal(fileKind({ name: "notes.txt", type: "" }), "text");
  assert.equal(fileKind({ name: "README", type: "text/markdown" }), "markdown");
  assert.equal(fileKind({ name: "README", type: "text/plain" }), "text");
  assert.equal(fileKind({ name: "README", type: "" }), null);
  assert.equal(fileKind({ name: "photo.png", type: "image/png" }), null);
  assert.equal(fileKind({ name: "page.html", type: "text/html" }), null);
  assert.equal(fileKind({ name: ".md", type: "" }), null, "a dot file has no extension");
});

test("the title is the first level-one heading outside code fences", () => {
  assert.equal(firstHeading("intro\n\n# Otter care\n\n# Later"), "Otter care");
  assert.equal(firstHeading("## Not this\n#Nor this\n   # Indented title ##  \n"), "Indented title");
  assert.equal(firstHeading("```sh\n# a comment\n```\n# After the code"), "After the code");
  assert.equal(firstHeading("~~~~\n# in\n~~~\n# still in\n~~~~\n# Out"), "Out");
  assert.equal(firstHeading("````\n```js\n# in\n````\n# Out"), "Out");
  assert.equal(firstHeading("#\n# \n"), null);
  assert.equal(firstHeading("no heading at all"), null);
  assert.equal(firstHeading("line\r\n# Windows title\r\nbody"), "Windows title");
});

test("without a heading the title is the file name without its extension", () => {
  assert.equal(titleFromName("notes.v2.md"), "notes.v2");
  assert.equal(titleFromName("plain"), "plain");
  assert.equal(titleFromName(".hidden"), ".hidden");
});

test("a file is read into a title and its content, or refused with a reason", async () => {
  const markdown = new File(["\uFEFF# Badger setts\n\nMany entrances."], "badgers.md", {
    type: "text/markdown",
  });
  assert.deepEqual(await readDocumentFile(markdown), {
    title: "Badger setts",
    content: "# Badger setts\n\nMany entrances.",
  });
  // A text file's `#` lines are not headings.
  const text = new File(["# run this first\nmake"], "steps.txt", { type: "text/plain" });
  assert.equal((await readDocumentFile(text)).title, "steps");

  const refusals = [
    [new File(["x"], "photo.png", { type: "image/png" }), /“photo.png” is not a Markdown or text file/],
    [new File(["a\u0000b"], "disguised.txt"), /“disguised.txt” holds binary data/],
    [new File([" \n\t\n"], "blank.md"), /“blank.md” is empty/],
    [new File([new Uint8Array(MAX_FILE_BYTES + 1).fill(97)], "huge.txt"), /“huge.txt” is larger than 4 MiB/],
  ];
  for (const [file, message] of refusals) {
    await assert.rejects(
      readDocumentFile(file),
      (error) => error instanceof DocumentFileError && message.test(error.message),
    );
  }
});

test("uptime and latency read as people write them", () => {
  assert.equal(formatUptime(0), "0 s");
  assert.equal(formatUptime(59.9), "59 s");
  assert.equal(formatUptime(3725), "1 h 2 min");
  assert.equal(formatUptime(3 * 86400 + 5 * 3600 + 7), "3 d 5 h");
  assert.equal(formatUptime(undefined), "—");
  assert.equal(formatLatency(2.94), "2.9 ms");
  assert.equal(formatLatency(123.4), "123 ms");
  assert.equal(formatLatency(null), "—");
});

test("trouble in a section is marked, in words and tone", () => {
  const database = rowsAsObject(
    databaseRows({
      url: "postgres://db",
      reachable: false,
      latency_ms: null,
      migrations: { applied: 2, pending: ["2025-01-01_add_x"] },
      error: "connection refused",
    }),
  );
  assert.deepEqual(database.Reachable, ["no", "bad"]);
  assert.deepEqual(database.Migrations, ["2 applied, pending: 2025-01-01_add_x", "warn"]);
  assert.deepEqual(database.Error, ["connection refused", "bad"]);

  const llm = rowsAsObject(
    llmRows({
      reachable: true,
      latency_ms: 12,
      chat_model: { name: "big", listed: false },
      embed_model: { name: "small", listed: true },
      models: ["small", "other"],
      error: null,
    }),
  );
  assert.deepEqual(llm["Chat model"], ["big (not listed by the server)", "bad"]);
  assert.deepEqual(llm["Embedding model"], ["small (listed)", ""]);
  assert.deepEqual(llm["Models offered"], ["small, other", ""]);
  assert.equal(llm.Error, undefined);

  // Chat and embeddings on two servers: each section names only its own model.
  const chatOnly = rowsAsObject(llmRows({ reachable: true, chat_model: { name: "big", listed: true }, embed_model: null }));
  assert.deepEqual(chatOnly["Chat model"], ["big (listed)", ""]);
  assert.equal(chatOnly["Embedding model"], undefined);
  const sections = Object.fromEntries(
    healthSections({ status: "ok", llm_embeddings: { reachable: true, chat_model: null, embed_model: { name: "small", listed: true } } }),
  );
  assert.deepEqual(rowsAsObject(sections.llm_embeddings)["Embedding model"], ["small (listed)", ""]);
  assert.equal(rowsAsObject(sections.llm_embeddings)["Chat model"], undefined);

  const knowledge = rowsAsObject(
    knowledgeRows({ documents: 1200, chunks: 34567, embedding_dimension: 768, dimension_mismatch: 3 }),
  );
  assert.deepEqual(knowledge.Chunks, ["34,567", ""]);
  assert.deepEqual(knowledge["Dimension mismatch"], ["3 chunk(s) left out: run bor reembed", "warn"]);

  const turns = rowsAsObject(
    turnRows({
      in_flight: 2,
      max: 8,
      accepting: false,
      ended: { done: 5, error: 1, stopped: 0, by_path: { grounded: 4, deflected: 2 } },
    }),
  );
  assert.deepEqual(turns["In flight"], ["2 of 8", ""]);
  assert.deepEqual(turns["Accepting new turns"], ["no (stopping)", "warn"]);
  assert.deepEqual(turns.Failed, ["1", "warn"]);
  assert.deepEqual(turns["Ended grounded"], ["4", ""]);

  const log = rowsAsObject(logRows({ queued: 3, written: 10, failed_writes: 0, dropped: 0 }));
  assert.deepEqual(log["Waiting to be written"], ["3", "warn"]);
  assert.deepEqual(log["Failed writes"], ["0", ""]);
});

test("the configuration reads as BOR_ variables, sorted, the API key as set or unset", () => {
  const rows = configRows({ log: "info", llm_api_key_set: true, agent_enabled: false, chunk_chars: 1200 });
  assert.deepEqual(
    rows.map(({ label, value }) => [label, value]),
    [
      ["BOR_AGENT_ENABLED", "false"],
      ["BOR_CHUNK_CHARS", "1200"],
      ["BOR_LLM_API_KEY", "(set)"],
      ["BOR_LOG", "info"],
    ],
  );
});

test("a report with sections missing still reads, with dashes", () => {
  const sections = Object.fromEntries(healthSections({ status: "ok" }));
  assert.deepEqual(Object.keys(sections), ["database", "llm", "llm_embeddings", "knowledge", "turns", "log", "config"]);
  assert.equal(sections.llm_embeddings, null, "one server for chat and embeddings");
  assert.deepEqual(rowsAsObject(sections.database).Reachable, ["—", "bad"]);
  assert.deepEqual(rowsAsObject(sections.turns)["In flight"], ["— of —", ""]);
  assert.deepEqual(sections.config, []);
});
