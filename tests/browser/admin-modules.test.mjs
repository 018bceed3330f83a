// The admin page's pure modules, run in Node: which files the page sends and what it
// says of those it does not, and how the health report reads.

import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { test } from "node:test";

import { EXTENSIONS, fileKind, formatBytes, refusal } from "../../static/document-file.js";
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

test("every kind bor reads qualifies by extension, a name without one by a text media type", () => {
  assert.equal(fileKind({ name: "notes.md", type: "" }), "Markdown");
  assert.equal(fileKind({ name: "NOTES.MARKDOWN", type: "application/octet-stream" }), "Markdown");
  assert.equal(fileKind({ name: "notes.txt", type: "" }), "Text");
  assert.equal(fileKind({ name: "notes.text", type: "" }), "Text");
  assert.equal(fileKind({ name: "report.v2.PDF", type: "" }), "PDF");
  assert.equal(fileKind({ name: "page.html", type: "text/html" }), "HTML");
  assert.equal(fileKind({ name: "page.htm", type: "" }), "HTML");
  assert.equal(fileKind({ name: "letter.docx", type: "" }), "Word");
  assert.equal(fileKind({ name: "README", type: "text/markdown" }), "Markdown");
  assert.equal(fileKind({ name: "README", type: "text/plain" }), "Text");
  assert.equal(fileKind({ name: "README", type: "" }), null);
  assert.equal(fileKind({ name: "photo.png", type: "image/png" }), "PNG image");
  assert.equal(fileKind({ name: "scan.TIF", type: "" }), "TIFF image");
  assert.equal(fileKind({ name: "photo.gif", type: "image/gif" }), null);
  assert.equal(fileKind({ name: "letter.doc", type: "text/plain" }), null, "the extension decides");
  assert.equal(fileKind({ name: "notes.constructor", type: "" }), null);
  assert.equal(fileKind({ name: ".md", type: "" }), null, "a dot file has no extension");
});

test("the file picker offers exactly the extensions the page sends", () => {
  const html = readFileSync(new URL("../../static/admin.html", import.meta.url), "utf8");
  const accept = html.match(/id="upload-files"[^>]*accept="([^"]*)"/s)?.[1];
  assert.deepEqual(accept?.split(",").sort(), EXTENSIONS.map((extension) => `.${extension}`).sort());
});

test("a file is refused before sending when of no kind read, empty, or over the bound", () => {
  const file = (name, size) => ({ name, type: "", size });
  assert.equal(refusal(file("report.pdf", 10), 100), null);
  assert.equal(refusal(file("report.pdf", 100), 100), null, "the bound itself is allowed");
  assert.equal(refusal(file("report.pdf", 5 * 1024 ** 3), null), null, "no bound known: the server decides");
  assert.equal(
    refusal(file("photo.gif", 10), 100),
    "Only Markdown, text, PDF, HTML, Word (.docx) and image (PNG, JPEG, TIFF, WebP) files can be uploaded.",
  );
  assert.equal(refusal(file("blank.md", 0), 100), "The file is empty.");
  assert.equal(
    refusal(file("huge.docx", 32 * 1024 * 1024 + 1), 32 * 1024 * 1024),
    "Larger than 32\u00a0MiB, the most the server takes (BOR_MAX_UPLOAD_BYTES).",
  );
});

test("sizes read in bytes, KiB, MiB and GiB, never split across lines", () => {
  const sizes = [0, 1, 1023, 1536, 59_242, 32 * 1024 * 1024, 3 * 1024 ** 3].map((n) =>
    formatBytes(n).replace("\u00a0", " "),
  );
  assert.deepEqual(sizes, ["0 bytes", "1 byte", "1023 bytes", "1.5 KiB", "57.9 KiB", "32 MiB", "3 GiB"]);
  assert.ok(!formatBytes(2048).includes(" "), "a no-break space, not a space");
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
  assert.deepEqual(knowledge["Other embedder"], ["none", ""]);
  const otherEmbedder = rowsAsObject(knowledgeRows({ documents: 2, chunks: 40, embedding_dimension: 384, other_embedder: 12 }));
  assert.deepEqual(otherEmbedder["Other embedder"], [
    "12 chunk(s) of this dimension made by another model or document prefix: run bor reembed",
    "warn",
  ]);
  assert.deepEqual(otherEmbedder["Dimension mismatch"], ["none", ""]);

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

test("the configuration reads as BOR_ variables, sorted, the secrets as set or unset", () => {
  const rows = configRows({
    log: "info",
    llm_api_key: "set",
    admin_token: "unset",
    agent_enabled: false,
    chunk_chars: 1200,
    llm_embed_base_url: null,
  });
  assert.deepEqual(
    rows.map(({ label, value }) => [label, value]),
    [
      ["BOR_ADMIN_TOKEN", "unset"],
      ["BOR_AGENT_ENABLED", "false"],
      ["BOR_CHUNK_CHARS", "1200"],
      ["BOR_LLM_API_KEY", "set"],
      ["BOR_LLM_EMBED_BASE_URL", "unset"],
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

test("Add from URL says how many pages were stored and why each other one was not", async () => {
  const { urlReportSummary } = await import("../../static/admin-uploads.js");
  assert.equal(
    urlReportSummary({ documents: [{ url: "https://a.example/" }], skipped: [], notes: [] }),
    "1 page added or up to date.",
  );
  assert.equal(
    urlReportSummary({
      documents: [],
      skipped: [{ url: "http://10.0.0.1/", reason: "10.0.0.1 is 10.0.0.1, a private address: refused" }],
      notes: ["https://a.example/sitemap.xml: the server answered HTTP 500"],
    }),
    "0 pages added or up to date; 1 skipped (http://10.0.0.1/: 10.0.0.1 is 10.0.0.1, a private address: refused); https://a.example/sitemap.xml: the server answered HTTP 500.",
  );
});

test("the watched files read as counts, and not at all when nothing is watched", async () => {
  const { watchedFilesSummary } = await import("../../static/admin-uploads.js");
  assert.equal(watchedFilesSummary({ imported: 0, skipped: 0, removed: 0, skipped_files: [] }), "");
  assert.equal(
    watchedFilesSummary({ imported: 3, skipped: 1, removed: 2, skipped_files: [] }),
    "3 imported, 1 skipped, 2 removed.",
  );
});

test("grant rows without a name are dropped", async () => {
  const { counted, grantsOf } = await import("../../static/admin-collections.js");
  assert.deepEqual(
    grantsOf([
      { kind: "group", name: " hr-team ", access: "read" },
      { kind: "user", name: "", access: "write" },
      { kind: "user", name: "wes", access: "write" },
    ]),
    [
      { group: "hr-team", access: "read" },
      { user: "wes", access: "write" },
    ],
  );
  assert.equal(counted(1, "document", "documents"), "1 document");
  assert.equal(counted(0, "document", "documents"), "0 documents");
});

test("an admin address names its section; /admin and a section not offered open the first", async () => {
  const { pathOfSection, sectionOfPath } = await import("../../static/admin-sections.js");
  const sections = ["health", "documents", "people"];
  assert.equal(sectionOfPath("/admin", sections), "health");
  assert.equal(sectionOfPath("/admin/", sections), "health");
  assert.equal(sectionOfPath("/admin/people", sections), "people");
  assert.equal(sectionOfPath("/admin/people/", sections), "people");
  assert.equal(sectionOfPath("/admin/limits", sections), null);
  assert.equal(pathOfSection("documents"), "/admin/documents");
});

test("the picker offers the names that hold what is typed, in any case", async () => {
  const { matchingOffers } = await import("../../static/admin-picker.js");
  const offers = [
    { value: "annika", label: "Annika Berg" },
    { value: "anton", label: "anton" },
    { value: "wes", label: "Wesley Ann" },
  ];
  assert.deepEqual(matchingOffers(offers, "AN").map(({ value }) => value), ["annika", "anton", "wes"]);
  assert.deepEqual(matchingOffers(offers, " berg ").map(({ value }) => value), ["annika"]);
  assert.deepEqual(matchingOffers(offers, "").length, 3);
  assert.deepEqual(matchingOffers(offers, "zed"), []);
});

test("the document filters become the route's parameters; who added a document in words", async () => {
  const { addedByWords, filtersOf } = await import("../../static/admin-documents.js");
  const empty = { q: " ", collection: "", kind: "", added_by: "", since: "", until: "" };
  const zone = process.env.TZ;
  try {
    process.env.TZ = "UTC";
    assert.deepEqual(filtersOf(empty), {});
    assert.deepEqual(
      filtersOf({ ...empty, q: " boiler ", kind: "application/pdf", added_by: "none", since: "2026-12-01", until: "2026-12-05" }),
      {
        q: "boiler",
        kind: "application/pdf",
        added_by: "none",
        since: "2026-12-01T00:00:00.000Z",
        until: "2026-12-06T00:00:00.000Z",
      },
    );
    assert.deepEqual(filtersOf({ ...empty, since: "yesterday", until: "2026-13-45x" }), {});
    // The days are the person's, in the browser's time zone (13 hours ahead of UTC in
    // December in Auckland), sent as the instants they start.
    process.env.TZ = "Pacific/Auckland";
    assert.deepEqual(filtersOf({ ...empty, since: "2026-12-01", until: "2026-12-05" }), {
      since: "2026-11-30T11:00:00.000Z",
      until: "2026-12-05T11:00:00.000Z",
    });
    // A day the clocks go forward (27 September 2026, from 12 to 13 hours ahead) is
    // 23 hours long.
    assert.deepEqual(filtersOf({ ...empty, since: "2026-09-27", until: "2026-09-27" }), {
      since: "2026-09-26T12:00:00.000Z",
      until: "2026-09-27T11:00:00.000Z",
    });
    process.env.TZ = "America/New_York";
    assert.deepEqual(filtersOf({ ...empty, since: "2026-12-31", until: "2026-12-31" }), {
      since: "2026-12-31T05:00:00.000Z",
      until: "2027-01-01T05:00:00.000Z",
    });
  } finally {
    if (zone === undefined) delete process.env.TZ;
    else process.env.TZ = zone;
  }
  assert.equal(addedByWords({ added_by: { display_name: "Ann" }, origin: "person" }), "Ann");
  assert.equal(addedByWords({ added_by: null, origin: "folder_sync" }), "folder sync");
  assert.equal(addedByWords({ added_by: null, origin: "command_line" }), "the command line");
  assert.equal(addedByWords({ added_by: null, origin: "service_token" }), "the admin token");
  assert.equal(addedByWords({ added_by: null, origin: "deleted_person" }), "a person since deleted");
  assert.equal(addedByWords({ added_by: null, origin: "unknown" }), "someone unknown");
  assert.equal(addedByWords({ added_by: null, origin: "a later one" }), "someone unknown");
});

test("an evaluation run reads by collection in the runs' columns, re-ranked when it ran", async () => {
  const { fakeDocument } = await import("./fake-dom.mjs");
  globalThis.document ??= fakeDocument;
  const { collectionRows, runRow } = await import("../../static/admin-feedback.js");
  const ranking = (ndcg, recall, mrr) => ({
    documents: { ndcg_at_10: ndcg, recall_at_10: recall },
    passages: { recall_at_10: recall, mrr_at_10: mrr },
  });
  const run = {
    id: 7,
    created_at: "2026-12-05T10:00:00Z",
    settings: { embedding_model: "all-minilm-l6-v2", chunk_chars: 600, rerank: false },
    queries: 3,
    measures: {
      answered: 2 / 3,
      fused: ranking(0.8, 1, 0.75),
      by_collection: [
        { collection: "default", queries: 2, answered: 1, fused: ranking(0.9, 1, 1) },
        { collection: "hr", queries: 1, answered: 0, fused: ranking(0.5, 1, 0.25), reranked: ranking(1, 1, 1) },
      ],
    },
  };
  const cells = (row) => row.childNodes.map((cell) => cell.textContent);
  assert.deepEqual(cells(runRow(run)).slice(2), ["all-minilm-l6-v2", "600", "off", "3", "0.8000", "1.0000", "0.7500", "67 %"]);
  assert.deepEqual(collectionRows(run).map(cells), [
    ["default", "2", "0.9000", "1.0000", "1.0000", "100 %"],
    ["hr", "1", "1.0000", "1.0000", "1.0000", "0 %"],
  ]);
  // A run kept before runs had measures by collection.
  assert.deepEqual(collectionRows({ ...run, measures: { fused: run.measures.fused } }), []);
  assert.deepEqual(collectionRows(undefined), []);
});
