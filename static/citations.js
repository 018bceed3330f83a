// The numbered sources of an answer (docs/PROTOCOL.md, "Sources and citations"): where
// each one's passage is, how its place in the document reads, and the `[n]` markers of
// the answer turned into links.

import { element } from "./dom.js";

/** `[n]` with n from 1, no leading zero: the form the model is asked to cite in. */
const MARKER = /\[([1-9][0-9]*)\]/g;

/** Elements whose text is never linked: code is quoted verbatim, and a link inside a
 *  link is not allowed. */
const VERBATIM = new Set(["A", "CODE", "PRE", "KBD", "SAMP"]);

/** The passage page of `source`, at its chunk. */
export function passageHref(source) {
  const documentId = encodeURIComponent(String(source.document_id));
  return `/documents/${documentId}#chunk-${encodeURIComponent(String(source.chunk_id))}`;
}

/** Where in its document a chunk is: "Heading › Sub · p. 3", with "· read by OCR"
 *  when OCR read its page, or "" when nothing is known. `page` counts only as a whole
 *  number from 1; "p." and its number never part across lines. */
export function placeLabel({ heading, page, ocr }) {
  const parts = [];
  if (typeof heading === "string" && heading.trim() !== "") parts.push(heading.trim());
  if (Number.isInteger(page) && page >= 1) parts.push(`p.\u00a0${page}`);
  if (ocr === true) parts.push("read by OCR");
  return parts.join(" · ");
}

/** Title and place of a source on one line, for a citation's tooltip. */
export function sourceSummary(source) {
  const title = String(source.title ?? "Untitled");
  const place = placeLabel(source);
  return place === "" ? title : `${title} — ${place}`;
}

/**
 * `text` cut at its citation markers: strings for the text between, `{n}` for each
 * `[n]` that `cited.has(n)`; a marker without a source stays in the text around it.
 * Adjacent pieces of text are joined, so text without a cited marker is `[text]`.
 */
export function citationPieces(text, cited) {
  const pieces = [];
  let rest = 0;
  for (const match of text.matchAll(MARKER)) {
    const n = Number(match[1]);
    if (!cited.has(n)) continue;
    if (match.index > rest) pieces.push(text.slice(rest, match.index));
    pieces.push({ n });
    rest = match.index + match[0].length;
  }
  if (rest < text.length || pieces.length === 0) pieces.push(text.slice(rest));
  return pieces;
}

/**
 * Turns each `[n]` in the text of `root` into a link to source `n`, for the sources
 * that carry a number, and answers the set of numbers cited. Works on the sanitised
 * DOM, text nodes only, so model output is never parsed again; text inside links and
 * code stays as it is.
 */
export function linkCitations(root, sources) {
  const cited = new Set();
  const byNumber = new Map(
    sources.filter((source) => Number.isInteger(source.n)).map((source) => [source.n, source]),
  );
  if (byNumber.size === 0) return cited;
  for (const node of textNodes(root)) {
    const pieces = citationPieces(node.data, byNumber);
    if (pieces.length === 1 && typeof pieces[0] === "string") continue;
    node.replaceWith(
      ...pieces.map((piece) => {
        if (typeof piece === "string") return piece;
        cited.add(piece.n);
        return citationLink(byNumber.get(piece.n));
      }),
    );
  }
  return cited;
}

/**
 * A citation opens the cited passage itself, in a new tab, like the source entry does:
 * the sources are listed right under the answer, so a jump there would show little
 * more than the tooltip, while the reader who follows a citation wants the evidence.
 * A new tab keeps the chat where it was.
 */
function citationLink(source) {
  return element(
    "a",
    {
      class: "citation",
      href: passageHref(source),
      target: "_blank",
      rel: "noopener",
      "aria-label": `Source ${source.n}`,
      title: sourceSummary(source),
    },
    `[${source.n}]`,
  );
}

/** The text nodes under `node` outside verbatim elements, in document order. */
function textNodes(node, found = []) {
  for (const child of node.childNodes) {
    if (child.nodeType === 3) found.push(child);
    else if (child.nodeType === 1 && !VERBATIM.has(child.nodeName)) textNodes(child, found);
  }
  return found;
}
