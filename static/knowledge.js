// What the knowledge base holds, shown on an empty chat so a newcomer knows what to
// ask: each document's title, its collection when the caller reads more than one, and,
// when `BOR_SUMMARIES` wrote one, its summary. Titles and summaries are document
// content: they only ever go in as text.

import { element } from "./dom.js";

/** Documents listed at most; the rest are counted. */
export const SHOWN_DOCUMENTS = 12;

/** The items to show for `documents` (as `GET /api/documents` lists them), newest first;
 *  `collection` is null when they all are in one. */
export function overviewOf(documents) {
  const newest = [...documents].sort((a, b) => Number(b.id) - Number(a.id));
  const several = new Set(documents.map((doc) => doc.collection)).size > 1;
  return {
    shown: newest.slice(0, SHOWN_DOCUMENTS).map((doc) => ({
      title: String(doc.title ?? "Untitled"),
      collection: several ? String(doc.collection) : null,
      summary: typeof doc.summary === "string" && doc.summary.trim() !== "" ? doc.summary : null,
    })),
    more: Math.max(0, newest.length - SHOWN_DOCUMENTS),
  };
}

/** Fills `list` and `moreNote` from the server; resolves with how many documents there are. */
export async function loadOverview(list, moreNote) {
  let documents = [];
  try {
    const response = await fetch("/api/documents", { headers: { Accept: "application/json" } });
    if (response.ok) documents = await response.json();
  } catch {
    // The overview is a help, not the chat: without it the page works as before.
  }
  if (!Array.isArray(documents)) documents = [];
  const { shown, more } = overviewOf(documents);
  list.replaceChildren(
    ...shown.map(({ title, collection, summary }) => {
      const item = element("li", { class: "knowledge-item" });
      item.append(element("span", { class: "knowledge-title" }, title));
      if (collection !== null) {
        item.append(element("span", { class: "knowledge-collection" }, `in ${collection}`));
      }
      if (summary !== null) item.append(element("span", { class: "knowledge-summary" }, summary));
      return item;
    }),
  );
  moreNote.hidden = more === 0;
  moreNote.textContent = more === 0 ? "" : `and ${more} more`;
  return documents.length;
}
