// The citation and passage modules, run in Node: which `[n]` markers of an answer
// become links (on a small fake DOM), how a source's place reads, and what the passage
// page reads from its address and shows of a document.

import assert from "node:assert/strict";
import { test } from "node:test";

import { fakeDocument, h, html } from "./fake-dom.mjs";
import {
  citationPieces,
  linkCitations,
  passageHref,
  placeLabel,
  sourceSummary,
} from "../../static/citations.js";
import {
  documentFacts,
  formatDay,
  kindLabel,
  overlapLength,
  passageTarget,
  webAddress,
} from "../../static/passage.js";

// dom.js builds the links with the global document.
globalThis.document = fakeDocument;

const source = (n, fields = {}) => ({
  n,
  document_id: 10 + n,
  title: `Doc ${n}`,
  chunk_id: 100 + n,
  score: 0.5,
  heading: "",
  snippet: "",
  page: null,
  ...fields,
});

/** The link `linkCitations` makes for `source(n)`, as HTML. */
const link = (n) =>
  `<a class="citation" href="/documents/${10 + n}#chunk-${100 + n}" target="_blank" rel="noopener" ` +
  `aria-label="Source ${n}" title="Doc ${n}">[${n}]</a>`;

test("markers with a source are cut out of the text; others stay in it", () => {
  const cited = new Set([1, 2, 10]);
  assert.deepEqual(citationPieces("No markers.", cited), ["No markers."]);
  assert.deepEqual(citationPieces("", cited), [""]);
  assert.deepEqual(citationPieces("Zebras migrate [1].", cited), ["Zebras migrate ", { n: 1 }, "."]);
  assert.deepEqual(citationPieces("[1][2]", cited), [{ n: 1 }, { n: 2 }], "adjacent markers");
  assert.deepEqual(citationPieces("see [10] not [1]0", cited), ["see ", { n: 10 }, " not ", { n: 1 }, "0"]);
  assert.deepEqual(citationPieces("[3] and [11]", cited), ["[3] and [11]"], "no such sources");
  assert.deepEqual(citationPieces("[1][3][2]", cited), [{ n: 1 }, "[3]", { n: 2 }]);
  for (const text of ["[0]", "[01]", "[1 ]", "[ 1]", "[-1]", "[1.5]", "[1,2]", "[a]", "1]", "[1"]) {
    assert.deepEqual(citationPieces(text, new Set([0, 1, 2])), [text], text);
  }
  assert.deepEqual(citationPieces("[[2]]", cited), ["[", { n: 2 }, "]"]);
});

test("only numbered sources of the turn are linked, in every text node", () => {
  const body = h(
    "div",
    {},
    h("p", {}, "Zebras migrate in spring [1][2], herds follow [10]; see also [3]."),
    h("ul", {}, h("li", {}, h("strong", {}, "Rains [2]"))),
  );
  linkCitations(body, [source(2), source(1), source(10), { ...source(3), n: undefined }]);
  assert.equal(
    html(body),
    `<div><p>Zebras migrate in spring ${link(1)}${link(2)}, herds follow ${link(10)}; see also [3].</p>` +
      `<ul><li><strong>Rains ${link(2)}</strong></li></ul></div>`,
  );
});

test("markers in code, preformatted text and links are left alone", () => {
  const body = h(
    "div",
    {},
    h("p", {}, "Use ", h("code", {}, "a[1]"), " as in [1]."),
    h("pre", {}, h("code", {}, "xs[1] = [2]")),
    h("p", {}, h("a", { href: "https://example.com" }, "page [1]"), " ", h("kbd", {}, "[2]")),
  );
  const before = html(body);
  linkCitations(body, [source(1), source(2)]);
  assert.equal(
    html(body),
    before.replace("as in [1].", `as in ${link(1)}.`),
    "only the marker in plain text became a link",
  );
});

test("an answer without sources keeps its markers as text", () => {
  const body = h("p", {}, "As said in [1].");
  linkCitations(body, []);
  assert.equal(html(body), "<p>As said in [1].</p>");
});

test("a citation's tooltip and a source's place name the heading and page", () => {
  assert.equal(placeLabel({ heading: "", page: null }), "");
  assert.equal(placeLabel({ heading: "Migration › Timing", page: null }), "Migration › Timing");
  assert.equal(placeLabel({ heading: "  ", page: 3 }), "p.\u00a03");
  assert.equal(placeLabel({ heading: "Intro", page: 12 }), "Intro · p.\u00a012");
  assert.equal(placeLabel({ heading: "", page: 2, ocr: true }), "p.\u00a02 · read by OCR");
  assert.equal(placeLabel({ heading: "Intro", page: 2, ocr: false }), "Intro · p.\u00a02");
  assert.equal(placeLabel({ heading: undefined, page: 0 }), "", "pages count from 1");
  assert.equal(placeLabel({ heading: "Intro", page: "3" }), "Intro", "a page is a number");
  assert.equal(sourceSummary(source(1, { heading: "Intro", page: 2 })), "Doc 1 — Intro · p.\u00a02");
  assert.equal(sourceSummary({ n: 1 }), "Untitled");
  assert.equal(passageHref(source(4)), "/documents/14#chunk-104");
  assert.equal(passageHref({ document_id: "1/2", chunk_id: "a#b" }), "/documents/1%2F2#chunk-a%23b");
});

test("the passage page reads the document and chunk from its address", () => {
  assert.deepEqual(passageTarget("/documents/42", "#chunk-7"), { documentId: "42", chunkId: "7" });
  assert.deepEqual(passageTarget("/documents/42/", ""), { documentId: "42", chunkId: null });
  assert.deepEqual(passageTarget("/documents/42", "#chunk-x"), { documentId: "42", chunkId: null });
  assert.deepEqual(passageTarget("/documents/42", "#passages"), { documentId: "42", chunkId: null });
  assert.deepEqual(passageTarget("/documents/abc", "#chunk-7"), { documentId: null, chunkId: "7" });
  assert.deepEqual(passageTarget("/documents/", ""), { documentId: null, chunkId: null });
  assert.deepEqual(passageTarget("/documents/4/2", ""), { documentId: null, chunkId: null });
});

test("a document's kind, day and size read as words", () => {
  assert.equal(kindLabel("application/pdf"), "PDF");
  assert.equal(kindLabel("text/markdown; charset=utf-8"), "Markdown");
  assert.equal(
    kindLabel("application/vnd.openxmlformats-officedocument.wordprocessingml.document"),
    "Word document",
  );
  assert.equal(kindLabel("application/x-unknown"), "application/x-unknown");
  assert.equal(kindLabel(null), "");
  assert.equal(formatDay("2026-12-01T10:20:30Z", "en-GB"), "1 December 2026");
  assert.equal(formatDay("not a date", "en-GB"), "");
  assert.equal(formatDay(null, "en-GB"), "");
  assert.equal(
    documentFacts(
      { content_type: "text/plain", source: "notes/otters.txt", created_at: "2026-12-01T10:00:00Z", chunks: [{}] },
      "en-GB",
    ),
    "Plain text · otters.txt · added 1 December 2026 · 1 passage",
    "the file's name, not where the server keeps it",
  );
  assert.equal(
    documentFacts({ content_type: "text/markdown", source: "/srv/bor/knowledge/team/kettle.md", chunks: [] }),
    "Markdown · kettle.md · 0 passages",
  );
  assert.equal(
    documentFacts({ content_type: "text/plain", source: "C:\\Shares\\notes.txt", chunks: [] }),
    "Plain text · notes.txt · 0 passages",
  );
  assert.equal(documentFacts({ content_type: "application/pdf", source: null, chunks: [{}, {}] }), "PDF · 2 passages");
  assert.equal(
    documentFacts({ content_type: "text/html", source: "https://example.com/guide", chunks: [{}] }),
    "Web page · 1 passage",
    "a web page's address is linked on a line of its own",
  );
  assert.equal(webAddress(" https://example.com/guide "), "https://example.com/guide");
  assert.equal(webAddress("http://127.0.0.1:8080/a?b=c"), "http://127.0.0.1:8080/a?b=c");
  assert.equal(webAddress("/home/me/notes/otters.txt"), "");
  assert.equal(webAddress("javascript:alert(1)"), "");
  assert.equal(webAddress(null), "");
});

test("the start a chunk repeats from the one before is found at a word", () => {
  assert.equal(overlapLength("Zebras migrate every spring, following the rains.", "following the rains. Then they rest."), 20);
  assert.equal(overlapLength("One two three.", "Four five."), 0);
  assert.equal(overlapLength("", "Anything"), 0);
  assert.equal(overlapLength("Anything", ""), 0);
  assert.equal(overlapLength("ends in rain", "rainbows follow"), 0, "a repeat ends at a word");
  assert.equal(overlapLength("ends with the rain", "train tracks"), 0, "and starts at one");
  assert.equal(overlapLength("the end", "end"), 0, "a chunk is never all repeat");
  assert.equal(overlapLength("la la la", "la la la la more"), 5, "the longest repeat");
  assert.equal(overlapLength("a b c", "b c"), 0, "a chunk is never all repeat");
  assert.equal(overlapLength("first line\nsecond line", "second line\nthird"), 11);
});
