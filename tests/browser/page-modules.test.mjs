// The page's pure modules, run in Node: the event-stream parser and the conversation
// history rules.

import assert from "node:assert/strict";
import { test } from "node:test";

import { EventStreamParser, readEventStream } from "../../static/sse.js";
import { historyOf, loadExchanges, newExchange, saveExchanges } from "../../static/conversation.js";

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
  { event: "retry", data: '{"attempt":1,"max":3}' },
  { event: "delta", data: '{"text":"Hé"}' },
  { event: "delta", data: '{"text":"line one\\nline two"}' },
  { event: "message", data: "first\nsecond" },
  { event: "done", data: '{"sources":[]}' },
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
  assert.deepEqual(events, [{ event: "delta", data: '{"text":"€ — ✓"}' }]);
  assert.equal(reads, bytes.length);
});

test("an event without its closing blank line is not dispatched", () => {
  const { events } = parseInPieces(['event: delta\ndata: {"text":"cut"}\n']);
  assert.deepEqual(events, []);
});

function finished(question, answer, status = "done") {
  return { ...newExchange(question), answer, status };
}

test("history keeps answered exchanges, oldest first, at most 20 entries", () => {
  const exchanges = [
    finished("failed", "", "error"),
    finished("partial", "half an answer", "stopped"),
    finished("empty", "  ", "done"),
    ...Array.from({ length: 12 }, (_, i) => finished(`q${i}`, `a${i}`)),
  ];
  const history = historyOf(exchanges);
  assert.equal(history.length, 20);
  assert.deepEqual(history.slice(0, 2), [
    { role: "user", content: "q2" },
    { role: "assistant", content: "a2" },
  ]);
  assert.deepEqual(history.at(-1), { role: "assistant", content: "a11" });
  assert.deepEqual(historyOf(exchanges.slice(0, 4)), [
    { role: "user", content: "partial" },
    { role: "assistant", content: "half an answer" },
    { role: "user", content: "q0" },
    { role: "assistant", content: "a0" },
  ]);
});

function memoryStorage() {
  const items = new Map();
  return {
    getItem: (key) => (items.has(key) ? items.get(key) : null),
    setItem: (key, value) => items.set(key, String(value)),
    removeItem: (key) => items.delete(key),
  };
}

test("saved exchanges load back; a turn cut off by a reload counts as stopped", () => {
  const storage = memoryStorage();
  const streaming = { ...newExchange("still going"), answer: "so far" };
  assert.equal(saveExchanges([finished("q", "a"), streaming], storage), true);
  assert.deepEqual(loadExchanges(storage), [finished("q", "a"), { ...streaming, status: "stopped" }]);
});

test("unreadable storage loads as an empty conversation", () => {
  const storage = memoryStorage();
  assert.deepEqual(loadExchanges(storage), []);
  storage.setItem("bor.conversation.v1", "{not json");
  assert.deepEqual(loadExchanges(storage), []);
  storage.setItem("bor.conversation.v1", JSON.stringify({ exchanges: [{ question: 1 }] }));
  assert.deepEqual(loadExchanges(storage), []);
  const full = { ...memoryStorage(), setItem: () => { throw new Error("quota"); } };
  assert.equal(saveExchanges([finished("q", "a")], full), false);
});
