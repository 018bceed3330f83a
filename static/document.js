// The passage page, `/documents/{id}#chunk-{chunk_id}` (docs/PROTOCOL.md, "Sources and
// citations"): the whole document, chunk by chunk, with the cited chunk marked,
// scrolled into view and focused. Each chunk's text is Markdown (every reader writes its
// format as Markdown), rendered and sanitised as the chat renders answers; the other
// facts of the document go in as text.

import { placeLabel } from "./citations.js";
import { element } from "./dom.js";
import { documentFacts, overlapLength, passageTarget, webAddress } from "./passage.js";
import { renderDocumentMarkdown } from "./render.js";

const MESSAGE = {
  loading: "Loading the document…",
  notFound: "There is no such document: it may have been deleted from the knowledge base.",
  unreachable: "Could not reach the service — check your connection, then reload the page.",
  unreadable: "The service sent something that is not a document — please reload the page.",
  refused: (status) =>
    `The service could not show this document (HTTP ${status}) — please try again.`,
  staleChunk:
    "The cited passage is not in this document (it may have been imported again since). The whole document is below.",
  overlap:
    "Consecutive passages overlap: the words a passage repeats from the one before are greyed out.",
};

const ui = {
  skipLink: document.getElementById("skip-link"),
  status: document.getElementById("document-status"),
  error: document.getElementById("document-error"),
  header: document.getElementById("document-header"),
  title: document.getElementById("document-title"),
  facts: document.getElementById("document-facts"),
  origin: document.getElementById("document-origin"),
  originLink: document.getElementById("document-origin-link"),
  summary: document.getElementById("document-summary"),
  notes: document.getElementById("document-notes"),
  passages: document.getElementById("passages"),
};

async function start() {
  const target = passageTarget(location.pathname, location.hash);
  ui.skipLink.addEventListener("click", (event) => {
    const destination = document.getElementById(ui.skipLink.hash.slice(1));
    if (!destination) return;
    event.preventDefault();
    reveal(destination);
  });
  ui.status.textContent = MESSAGE.loading;
  const loaded =
    target.documentId === null ? { error: MESSAGE.notFound } : await load(target.documentId);
  ui.status.textContent = "";
  if (loaded.error) {
    showError(loaded.error);
    return;
  }
  showDocument(loaded.document, target.chunkId);
}

/** `{document}` from `GET /api/documents/{id}`, or `{error}` with what to tell the reader. */
async function load(documentId) {
  let response;
  try {
    response = await fetch(`/api/documents/${documentId}`, {
      headers: { Accept: "application/json" },
    });
  } catch {
    return { error: MESSAGE.unreachable };
  }
  if (response.status === 404) return { error: MESSAGE.notFound };
  if (!response.ok) return { error: await refusalMessage(response) };
  try {
    const body = await response.json();
    if (body === null || typeof body !== "object" || !Array.isArray(body.chunks)) {
      return { error: MESSAGE.unreadable };
    }
    return { document: body };
  } catch {
    return { error: MESSAGE.unreadable };
  }
}

/** The server's explanation of a refusal (`{"error":{"code","message"}}`), else the status. */
async function refusalMessage(response) {
  try {
    const body = await response.json();
    if (typeof body?.error?.message === "string") return body.error.message;
  } catch {
    // Not the JSON error shape: fall back to the status.
  }
  return MESSAGE.refused(response.status);
}

function showError(text) {
  document.title = "Document not shown — bor";
  ui.title.textContent = "Document not shown";
  ui.header.hidden = false;
  ui.error.textContent = text;
  ui.error.hidden = false;
  ui.skipLink.hidden = true;
}

function showDocument(doc, chunkId) {
  const title = String(doc.title ?? "Untitled");
  document.title = `${title} — bor`;
  ui.title.textContent = title;
  ui.facts.textContent = documentFacts(doc);
  const page = webAddress(doc.source);
  ui.originLink.textContent = page;
  ui.originLink.href = page === "" ? "#" : page;
  ui.origin.hidden = page === "";
  const summary = typeof doc.summary === "string" ? doc.summary.trim() : "";
  ui.summary.textContent = summary;
  ui.summary.hidden = summary === "";
  ui.header.hidden = false;

  const items = passageItems(doc.chunks, chunkId);
  ui.passages.replaceChildren(...items.map(({ item }) => item));
  ui.passages.hidden = false;
  const notes = [];
  if (items.some(({ overlaps }) => overlaps)) notes.push(MESSAGE.overlap);
  const cited = items.find(({ cited }) => cited)?.item;
  if (chunkId !== null && !cited) notes.push(MESSAGE.staleChunk);
  ui.notes.replaceChildren(...notes.map((note) => element("p", { class: "document-note" }, note)));

  if (cited) {
    ui.skipLink.textContent = "Skip to the cited passage";
    ui.skipLink.href = `#${cited.id}`;
    reveal(cited);
  }
}

/**
 * One list item per chunk, in order: `{item, cited, overlaps}`. Each shows where in the
 * document it is and its text rendered, the start it repeats from the chunk before
 * greyed out.
 */
function passageItems(chunks, citedId) {
  let previous = null;
  return chunks.map((chunk) => {
    const text = String(chunk.text ?? "");
    const id = String(chunk.id);
    const cited = id === citedId;
    const item = element("li", { class: "passage", id: `chunk-${id}` });
    if (cited) {
      item.setAttribute("aria-current", "true");
      item.setAttribute("tabindex", "-1");
      item.append(element("p", { class: "passage-cited" }, "Cited passage"));
    }
    const place = placeLabel(chunk);
    if (place !== "") item.append(element("p", { class: "passage-place" }, place));

    const body = element("div", { class: "passage-text" });
    // Only chunks of one section overlap.
    const repeat =
      previous?.heading === chunk.heading ? overlapLength(previous.text, text) : 0;
    if (repeat > 0) {
      const overlap = element("div", { class: "passage-overlap" });
      overlap.innerHTML = renderDocumentMarkdown(text.slice(0, repeat));
      body.append(overlap);
    }
    body.insertAdjacentHTML("beforeend", renderDocumentMarkdown(text.slice(repeat)));
    item.append(body);
    previous = { heading: chunk.heading, text };
    return { item, cited, overlaps: repeat > 0 };
  });
}

/** Scrolls `target` (focusable by script: `tabindex="-1"`) to the top of the view and
 *  gives it the keyboard focus. */
function reveal(target) {
  target.scrollIntoView({ block: "start" });
  target.focus({ preventScroll: true });
}

start();
