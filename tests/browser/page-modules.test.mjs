// The page's pure modules, run in Node: the event-stream parser and the rules of the
// open conversation (its address, the body of a turn, stored turns, the list's pages).

import assert from "node:assert/strict";
import { test } from "node:test";

import { EventStreamParser, readEventStream } from "../../static/sse.js";
import {
  appendPage,
  chatBody,
  conversationHref,
  conversationIdOf,
  exchangeOfTurn,
  exportHref,
  hasVersion,
  isStored,
  listHref,
  newExchange,
  newVersion,
  nextBefore,
  turnsLabel,
} from "../../static/conversation.js";
import { groupConversations } from "../../static/conversation-groups.js";

function parseInPieces(pieces) {
  const parser = new EventStreamParser();
  const events = [];
  const comments = [];
  for (const piece of pieces) {
    parser.push(piece, (event) => events.push(event), (comment) => comments.push(comment));
  }
  return { events, comments };
}

const STREAM =
  'event: retry\ndata: {"attempt":1,"max":3}\n\n' +
  ": keep-alive\n\n" +
  'event: delta\r\ndata: {"text":"Hé"}\r\n\r\n' +
  'event: delta\rdata: {"text":"line one\\nline two"}\r\r' +
  "data: first\ndata: second\n\n" +
  'event: done\ndata: {"sources":[]}\n\n';

const EXPECTED = [
  { event: "retry", data: '{"attempt":1,"max":3}', id: "" },
  { event: "delta", data: '{"text":"Hé"}', id: "" },
  { event: "delta", data: '{"text":"line one\\nline two"}', id: "" },
  { event: "message", data: "first\nsecond", id: "" },
  { event: "done", data: '{"sources":[]}', id: "" },
];

test("the parser reads LF, CRLF and CR line ends, comments and multi-line data", () => {
  const { events, comments } = parseInPieces([STREAM]);
  assert.deepEqual(events, EXPECTED);
  assert.deepEqual(comments, [" keep-alive"]);
});

test("frames split at every possible point parse the same", () => {
  for (let cut = 0; cut <= STREAM.length; cut += 1) {
    const { events } = parseInPieces([STREAM.slice(0, cut), STREAM.slice(cut)]);
    assert.deepEqual(events, EXPECTED, `cut at ${cut}`);
  }
  const { events } = parseInPieces([...STREAM]);
  assert.deepEqual(events, EXPECTED, "one character per read");
});

test("a multi-byte character split across reads is decoded whole", async () => {
  const bytes = new TextEncoder().encode('event: delta\ndata: {"text":"€ — ✓"}\n\n');
  const events = [];
  let reads = 0;
  const body = new ReadableStream({
    start(controller) {
      for (const byte of bytes) controller.enqueue(Uint8Array.of(byte));
      controller.close();
    },
  });
  await readEventStream(body, { onEvent: (event) => events.push(event), onActivity: () => (reads += 1) });
  assert.deepEqual(events, [{ event: "delta", data: '{"text":"€ — ✓"}', id: "" }]);
  assert.equal(reads, bytes.length);
});

test("each event carries the last id the stream named, which lasts until another", () => {
  const { events } = parseInPieces([
    'id: 1\nevent: delta\ndata: {"text":"a"}\n\n' +
      'event: delta\ndata: {"text":"b"}\nid: 2\n\n' +
      ": keep-alive\n\n" +
      'event: delta\ndata: {"text":"c"}\n\n' +
      'id: 4\0\nevent: done\ndata: {}\n\n',
  ]);
  assert.deepEqual(
    events.map(({ id }) => id),
    ["1", "2", "2", "2"],
    "an id holding NUL is ignored",
  );
});

test("an event without its closing blank line is not dispatched", () => {
  const { events } = parseInPieces(['event: delta\ndata: {"text":"cut"}\n']);
  assert.deepEqual(events, []);
});

const ID = "6f1c2a0e-8b4d-4c1e-9a7f-3d2b1c0e9f8a";

test("the address names the open conversation as ?c=<uuid>, and nothing else counts", () => {
  assert.equal(conversationHref(ID), `/?c=${ID}`);
  assert.equal(conversationHref(null), "/");
  assert.equal(conversationIdOf(`?c=${ID}`), ID);
  assert.equal(conversationIdOf(`?x=1&c=${ID.toUpperCase()}`), ID, "read in lower case");
  for (const search of ["", "?c=", "?c=not-a-uuid", `?c=${ID}x`, `?conversation=${ID}`]) {
    assert.equal(conversationIdOf(search), null, search);
  }
});

test("a turn of an open conversation names it and sends no history; a new chat names none", () => {
  assert.deepEqual(chatBody("Hello?", null), { message: "Hello?" });
  assert.deepEqual(chatBody("And then?", ID), { message: "And then?", conversation_id: ID });
  assert.deepEqual(chatBody("Hello?", null, ["hr"]), { message: "Hello?", collections: ["hr"] });
  assert.deepEqual(chatBody("Again?", ID, null, "t1"), { message: "Again?", conversation_id: ID, version_of: "t1" });
});

test("stored turns become exchanges as a finished live turn leaves them", () => {
  const source = { n: 1, document_id: 3, title: "Notes", chunk_id: 9, score: 0.8, heading: "", snippet: "…", page: null };
  const { versions, ...exchange } = exchangeOfTurn({
    turn_id: "t", question: "Q", answer: "A [1]", status: "done", path: "grounded", sources: [source], created_at: "x",
  });
  assert.deepEqual(exchange, {
    question: "Q", turnId: "t", answer: "A [1]", thinking: "", sources: [source], status: "done", error: "", deflected: false, feedback: null,
  });
  assert.equal(versions.length, 1);
  const rating = { rating: "down", reason: "missing_source", comment: "", updated_at: "y" };
  assert.deepEqual(exchangeOfTurn({ turn_id: "t", question: "Q", answer: "A", status: "done", feedback: rating }).feedback, rating);
  assert.equal(exchangeOfTurn({ question: "Q", answer: "A", status: "done", path: "deflected", sources: [] }).deflected, true);
  const stopped = exchangeOfTurn({ question: "Q", answer: "half", status: "stopped", sources: null });
  assert.equal(stopped.status, "stopped");
  assert.deepEqual(stopped.sources, []);
  assert.ok(isStored(stopped));
  assert.ok(!isStored({ ...newExchange("failed"), status: "error" }));
  assert.ok(!isStored(newExchange("still streaming")));
});

test("a turn's versions become one exchange showing the newest, each version readable", () => {
  const row = (turn_id, question) => ({ turn_id, question, answer: `A ${question}`, status: "done", path: "grounded", sources: [] });
  const newest = row("t3", "Edited?");
  const shown = exchangeOfTurn({ ...newest, versions: [row("t1", "Q?"), row("t2", "Q?"), newest] });
  assert.equal(shown.turnId, "t3");
  assert.deepEqual(shown.versions.map((version) => version.turnId), ["t1", "t2", "t3"]);
  assert.ok(shown.versions.every((version) => version.versions === shown.versions), "one array shared");
  assert.ok(hasVersion(shown, "t1") && !hasVersion(shown, "t4"));
  const again = newVersion(shown, "Once more?");
  assert.equal(again.status, "streaming");
  assert.equal(shown.versions.at(-1), again);
  assert.equal(again.versions, shown.versions);
});

test("the list's addresses: search words, page size, the page after a conversation, exports", () => {
  assert.equal(listHref(), "/api/conversations?limit=50");
  assert.equal(listHref({ query: "  otter  fur " }), "/api/conversations?limit=50&q=otter++fur");
  assert.equal(
    listHref({ before: { updated_at: "2025-01-02T03:04:05.123456Z", id: ID } }),
    `/api/conversations?limit=50&before=2025-01-02T03%3A04%3A05.123456Z&before_id=${ID}`,
  );
  assert.equal(listHref({ archived: true }), "/api/conversations?limit=50&archived=true");
  assert.equal(listHref({ pinned: false, limit: 200 }), "/api/conversations?limit=200&pinned=false");
  assert.equal(exportHref(ID, "markdown"), `/api/conversations/${ID}/export?format=markdown`);
  assert.equal(exportHref(ID, "json"), `/api/conversations/${ID}/export?format=json`);
});

test("a full page leads to the next one; pages join without repeating a conversation", () => {
  const page = (from, count) =>
    Array.from({ length: count }, (_, i) => ({ id: `c${from + i}`, updated_at: `t${from + i}` }));
  assert.deepEqual(nextBefore(page(0, 50)), { updated_at: "t49", id: "c49" });
  assert.equal(nextBefore(page(0, 49)), null);
  assert.equal(nextBefore([]), null);
  assert.deepEqual(nextBefore(page(0, 2), 2), { updated_at: "t1", id: "c1" });
  const joined = appendPage(page(0, 3), [...page(2, 3)]);
  assert.deepEqual(joined.map((conversation) => conversation.id), ["c0", "c1", "c2", "c3", "c4"]);
});

test("the list is grouped: pinned first, then by the local day, older ones by month", () => {
  // Noon of 15 March 2026 where the test runs; each conversation some local days before.
  const now = new Date(2026, 2, 15, 12, 0);
  const at = (days, hours = 12) => new Date(2026, 2, 15 - days, hours, 30).toISOString();
  const month = (date) => new Intl.DateTimeFormat(undefined, { month: "long", year: "numeric" }).format(date);
  const conversations = [
    { id: "today", updated_at: at(0) },
    { id: "pinned", updated_at: at(0, 1), pinned: true },
    { id: "early today", updated_at: at(0, 0) },
    { id: "late yesterday", updated_at: at(1, 23) },
    { id: "two days", updated_at: at(2) },
    { id: "a week", updated_at: at(7) },
    { id: "eight days", updated_at: at(8) },
    { id: "a month", updated_at: at(30) },
    { id: "old pinned", updated_at: at(40), pinned: true },
    { id: "february", updated_at: at(31) },
    { id: "january", updated_at: new Date(2026, 0, 3).toISOString() },
    { id: "last year", updated_at: new Date(2025, 11, 31, 23, 59).toISOString() },
  ];
  const shown = (groups) => groups.map(({ label, conversations: listed }) => [label, listed.map(({ id }) => id)]);
  assert.deepEqual(shown(groupConversations(conversations, { now })), [
    ["Pinned", ["pinned", "old pinned"]],
    ["Today", ["today", "early today"]],
    ["Yesterday", ["late yesterday"]],
    ["Previous 7 days", ["two days", "a week"]],
    ["Previous 30 days", ["eight days", "a month"]],
    [month(new Date(2026, 1, 12)), ["february"]],
    [month(new Date(2026, 0, 3)), ["january"]],
    [month(new Date(2025, 11, 31)), ["last year"]],
  ]);
  // The archived view has no pinned group; a time ahead of the clock is today.
  const archived = [{ id: "ahead", updated_at: at(-1) }, { id: "old pinned", updated_at: at(40), pinned: true }];
  assert.deepEqual(shown(groupConversations(archived, { now, pinnedFirst: false })), [
    ["Today", ["ahead"]],
    [month(new Date(2026, 1, 3)), ["old pinned"]],
  ]);
  assert.deepEqual(groupConversations([], { now }), []);
});

test("turn counts read in words", () => {
  assert.equal(turnsLabel(1), "1 turn");
  assert.equal(turnsLabel(0), "0 turns");
  assert.equal(turnsLabel(12), "12 turns");
});

test("the overview lists the newest documents first, with summaries only where written", async () => {
  const { overviewOf, SHOWN_DOCUMENTS } = await import("../../static/knowledge.js");
  const documents = Array.from({ length: SHOWN_DOCUMENTS + 3 }, (_, i) => ({
    id: i + 1,
    title: `Doc ${i + 1}`,
    summary: i === SHOWN_DOCUMENTS + 2 ? "About the last one." : i === 0 ? "   " : null,
  }));
  const { shown, more } = overviewOf(documents);
  assert.equal(shown.length, SHOWN_DOCUMENTS);
  assert.equal(more, 3);
  assert.deepEqual(shown[0], {
    title: `Doc ${SHOWN_DOCUMENTS + 3}`,
    collection: null,
    summary: "About the last one.",
  });
  assert.equal(shown[1].summary, null);
  assert.deepEqual(overviewOf([]), { shown: [], more: 0 });
  assert.equal(overviewOf([{ id: 1 }]).shown[0].title, "Untitled");
  // Documents of more than one collection each say theirs.
  const mixed = overviewOf([
    { id: 1, title: "Handbook", collection: "default" },
    { id: 2, title: "Payroll", collection: "hr" },
  ]);
  assert.deepEqual(
    mixed.shown.map(({ title, collection }) => [title, collection]),
    [
      ["Payroll", "hr"],
      ["Handbook", "default"],
    ],
  );
});

test("the kept choice of collections holds only names still readable, and all of them is none", async () => {
  const { choiceSummary, keptChoice, reportLines } = await import("../../static/collection-choice.js");
  const readable = ["default", "hr", "legal"];
  assert.equal(keptChoice(null, readable), null);
  assert.equal(keptChoice("not json", readable), null);
  assert.equal(keptChoice('{"hr":1}', readable), null);
  assert.deepEqual(keptChoice('["hr","gone"]', readable), ["hr"]);
  assert.equal(keptChoice('["gone"]', readable), null, "nothing readable left: every collection");
  assert.equal(keptChoice('["default","hr","legal"]', readable), null, "every one ticked is all");
  assert.equal(choiceSummary(null), "Searching all my collections");
  assert.equal(choiceSummary(["hr", "legal"]), "Searching hr, legal");
  assert.deepEqual(
    reportLines({
      documents: [
        { file: "a.md", title: "A", chunks: 1, status: "imported" },
        { file: "b.md", title: "B", chunks: 3, status: "unchanged" },
        {
          file: "scan.pdf",
          title: "S",
          chunks: 4,
          status: "imported",
          ocr_pages: 2,
          skipped_pages: [{ page: 3, reason: "past OCR's cap of 2 pages a document" }],
        },
      ],
      skipped: [{ file: "c.pdf", reason: "no text layer" }],
    }),
    [
      { tone: "success", text: "a.md: “A”, stored, 1 chunk" },
      { tone: "success", text: "b.md: “B”, already there" },
      {
        tone: "success",
        text: "scan.pdf: “S”, stored, 4 chunks; 2 pages read by OCR, 1 skipped (page 3: past OCR's cap of 2 pages a document)",
      },
      { tone: "error", text: "c.pdf: skipped, no text layer" },
    ],
  );
});
