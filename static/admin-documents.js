// The documents list of the admin page: one item per document, newest first (its title
// opening the document, chunks, when added, by whom, its kind and collection), with a
// Delete button that opens a confirmation below it (Escape or Cancel closes it); above
// it the search and filters, below it "More documents" for the next page. Titles are
// user content: they only ever go in as text.

import { element } from "./dom.js";

const DATE_FORMAT = new Intl.DateTimeFormat(undefined, { dateStyle: "medium", timeStyle: "short" });
/** Documents asked for at a time. */
const PAGE_SIZE = 50;

/** The address of the documents section; its query holds the filters set. */
const SECTION_PATH = "/admin/documents";
/** The form's fields the address keeps. */
const FILTER_FIELDS = ["q", "collection", "kind", "added_by", "since", "until"];
/** The fields whose options come from the server, after the address is read. */
const OFFERED_LATER = ["collection", "added_by"];

/** How a document came in, in words, when no person is named. */
const ORIGINS = {
  folder_sync: "folder sync",
  command_line: "the command line",
  service_token: "the admin token",
  deleted_person: "a person since deleted",
};
/** Said of an origin not known: one from before bor recorded it, or a new one. */
const UNKNOWN_ORIGIN = "someone unknown";

/** Who added `doc`, in words. */
export function addedByWords(doc) {
  if (doc.added_by && typeof doc.added_by.display_name === "string") return doc.added_by.display_name;
  return ORIGINS[doc.origin] ?? UNKNOWN_ORIGIN;
}

/** The first moment of the day `text` (`YYYY-MM-DD`) plus `days`, in the browser's
 *  time zone; null when `text` is not such a day. */
function startOfDay(text, days = 0) {
  const match = /^(\d{4})-(\d{2})-(\d{2})$/.exec(text ?? "");
  if (match === null) return null;
  const [year, month, day] = match.slice(1).map(Number);
  // Local midnight (on a day whose clock moves forward at midnight, its first moment);
  // `setFullYear` keeps the years 0 to 99 the constructor takes for 1900 to 1999.
  const start = new Date(year, month - 1, day + days);
  start.setFullYear(year, month - 1, day + days);
  return Number.isNaN(start.getTime()) ? null : start;
}

/**
 * The route's filters from the form's values: the dates (`YYYY-MM-DD`, days as the
 * person sees them, in the browser's time zone) as the first moment of `since` and the
 * first moment after `until`, sent as UTC instants; empty ones left out.
 */
export function filtersOf({ q, collection, kind, added_by: addedBy, since, until }) {
  const filters = {};
  if (q.trim() !== "") filters.q = q.trim();
  if (collection) filters.collection = collection;
  if (kind) filters.kind = kind;
  if (addedBy) filters.added_by = addedBy;
  const from = startOfDay(since);
  const before = startOfDay(until, 1);
  if (from !== null) filters.since = from.toISOString();
  if (before !== null) filters.until = before.toISOString();
  return filters;
}

/** The kinds' words, from the filter's own options. */
function kindWords() {
  const options = document.querySelectorAll("#document-kind option[value]:not([value=''])");
  return new Map([...options].map((option) => [option.value, option.textContent]));
}

/**
 * The search and filters above the list and the pages below it: `fetchPage(filters)`
 * resolves with `{documents, total, next_cursor}` (it reports its own failures and
 * resolves with null then); `list` is the `DocumentList` that shows them.
 */
export class DocumentFinder {
  constructor({ fetchPage, list }) {
    this.fetchPage = fetchPage;
    this.list = list;
    this.form = document.getElementById("document-filters");
    this.count = document.getElementById("documents-count");
    this.more = document.getElementById("documents-more");
    this.collection = document.getElementById("document-collection");
    this.addedBy = document.getElementById("document-added-by");
    this.cursor = null;
    /** The filters of the list shown: its next page is asked for with them, not with
     *  words typed since and not yet searched. */
    this.listed = {};
    this.ticket = 0;
    /** Choices the address names whose options are not offered yet (a collection, a
     *  person), by field. */
    this.pending = {};
    this.#readAddress();
    this.form.addEventListener("submit", (event) => {
      event.preventDefault();
      this.reload();
    });
    for (const control of this.form.querySelectorAll("select, input[type=date]")) {
      control.addEventListener("change", () => this.reload());
    }
    this.more.addEventListener("click", () => this.#next());
  }

  /** The form's values, with the choices the address named that are not offered yet. */
  get values() {
    const values = Object.fromEntries(new FormData(this.form));
    for (const [field, value] of Object.entries(this.pending)) values[field] ||= value;
    return values;
  }

  /** The filters the form says now. */
  get filters() {
    return filtersOf(this.values);
  }

  /** The first page for the filters set; the address of the documents section keeps
   *  them, so that a reload or a shared link shows the same list. */
  async reload() {
    const ticket = (this.ticket += 1);
    const filters = this.filters;
    const page = await this.fetchPage({ ...filters, limit: PAGE_SIZE });
    if (page === null || ticket !== this.ticket) return;
    this.listed = filters;
    this.list.show(page.documents);
    this.#showPaging(page);
    this.keepInAddress();
  }

  /** Fills the form from the address's query, when it is the documents section's. */
  #readAddress() {
    if (window.location.pathname !== SECTION_PATH) return;
    const query = new URLSearchParams(window.location.search);
    for (const field of FILTER_FIELDS) {
      const value = query.get(field);
      if (value === null) continue;
      const control = this.form.elements.namedItem(field);
      control.value = value;
      // A value not offered yet waits for its options; any other the form does not
      // take (a kind it does not list) is left out, as the form then shows.
      if (control.value !== value && OFFERED_LATER.includes(field)) this.pending[field] = value;
    }
  }

  /** Puts the filters set in the address, when it is the documents section's. */
  keepInAddress() {
    if (window.location.pathname !== SECTION_PATH) return;
    const values = this.values;
    const query = new URLSearchParams(FILTER_FIELDS.filter((field) => values[field]).map((field) => [field, values[field]]));
    const search = query.toString() === "" ? "" : `?${query}`;
    if (search !== window.location.search) history.replaceState(history.state, "", `${SECTION_PATH}${search}`);
  }

  async #next() {
    if (this.cursor === null) return;
    const ticket = (this.ticket += 1);
    const shown = this.list.documents.length;
    const page = await this.fetchPage({ ...this.listed, limit: PAGE_SIZE, cursor: this.cursor });
    if (page === null || ticket !== this.ticket) return;
    this.list.show([...this.list.documents, ...page.documents]);
    this.#showPaging(page);
    // The keyboard goes on with the first document of the new page.
    this.list.focusTitle(shown);
  }

  /** Empties the list and its count (the token was forgotten). */
  clear() {
    this.ticket += 1;
    this.cursor = null;
    this.more.hidden = true;
    this.count.textContent = "";
    this.list.show([]);
  }

  #showPaging(page) {
    this.cursor = page.next_cursor ?? null;
    this.more.hidden = this.cursor === null;
    const shown = this.list.documents.length;
    const filtered = Object.keys(this.listed).length > 0;
    this.count.textContent =
      page.total === 0
        ? filtered
          ? "No document matches."
          : ""
        : `Showing ${shown} of ${page.total} ${page.total === 1 ? "document" : "documents"}${filtered ? " that match" : ""}.`;
  }

  /** The collections the filter offers (by name), the one chosen kept while it exists. */
  offerCollections(names) {
    offer(this.collection, names.map((name) => [name, name]), 1, this.#take("collection"));
  }

  /** The value the address named for `field`, once: its options are offered now. */
  #take(field) {
    const value = this.pending[field];
    delete this.pending[field];
    return value;
  }

  /** The people the filter offers, `[{id, display_name, username}]`. */
  offerPeople(people) {
    offer(
      this.addedBy,
      people.map((person) => [String(person.id), `${person.display_name} (${person.username})`]),
      2,
      this.#take("added_by"),
    );
  }
}

/** Replaces the options of `select` after its first `keep` with `[value, words]`,
 *  keeping the one chosen (or choosing `wanted`) when it is there. */
function offer(select, options, keep = 1, wanted = undefined) {
  const chosen = wanted ?? select.value;
  const kept = [...select.options].slice(0, keep);
  select.replaceChildren(
    ...kept,
    ...options.map(([value, words]) => element("option", { value }, words)),
  );
  select.value = [...select.options].some((option) => option.value === chosen) ? chosen : "";
}

export class DocumentList {
  /** `remove(document)` deletes it and redraws the list (through `show`); it reports
   *  its own failures and never rejects. */
  constructor({ remove }) {
    this.remove = remove;
    this.list = document.getElementById("documents");
    this.empty = document.getElementById("no-documents");
    this.heading = document.getElementById("documents-heading");
    this.documents = [];
    this.confirming = null;
    this.deleting = null;
    this.list.addEventListener("click", (event) => this.onClick(event));
    this.list.addEventListener("keydown", (event) => {
      if (event.key === "Escape" && this.confirming !== null && this.deleting === null) {
        event.preventDefault();
        this.cancel();
      }
    });
  }

  /** Moves the focus to the title of the document at `index`, if there is one. */
  focusTitle(index) {
    this.list.children[index]?.querySelector("a")?.focus();
  }

  /** Shows `documents` (as `GET /api/admin/documents` lists them, newest first). */
  show(documents) {
    this.documents = [...documents];
    const ids = new Set(this.documents.map((doc) => doc.id));
    if (!ids.has(this.confirming)) this.confirming = null;
    this.draw();
  }

  onClick(event) {
    const button = event.target.closest("button[data-action]");
    if (!button || button.disabled) return;
    const id = Number(button.closest("li").dataset.id);
    switch (button.dataset.action) {
      case "ask":
        this.confirming = id;
        this.draw(`cancel-${id}`);
        return;
      case "cancel":
        this.cancel();
        return;
      case "confirm":
        this.confirmDelete(id);
        return;
      default:
    }
  }

  cancel() {
    const id = this.confirming;
    this.confirming = null;
    this.draw(`ask-${id}`);
  }

  async confirmDelete(id) {
    const doc = this.documents.find((candidate) => candidate.id === id);
    if (!doc) return;
    const index = this.documents.indexOf(doc);
    this.deleting = id;
    this.draw(`confirm-${id}`);
    try {
      await this.remove(doc);
    } finally {
      this.deleting = null;
      if (this.confirming === id) this.confirming = null;
      // Focus stays on a document still there, else moves to the row that took its
      // place, else to the heading.
      const next =
        this.documents.find((candidate) => candidate.id === id) ??
        this.documents[index] ??
        this.documents.at(-1);
      this.draw(next ? `ask-${next.id}` : null);
      if (!next) this.heading.focus();
    }
  }

  /** Redraws the list; focus goes to the control keyed `focusKey`, or stays on the
   *  control that had it. */
  draw(focusKey = document.activeElement?.dataset?.focusKey) {
    this.list.replaceChildren(...this.documents.map((doc) => this.itemFor(doc)));
    this.list.hidden = this.documents.length === 0;
    this.empty.hidden = this.documents.length > 0;
    if (focusKey) this.list.querySelector(`[data-focus-key="${focusKey}"]`)?.focus();
  }

  itemFor(doc) {
    const confirming = this.confirming === doc.id;
    const busy = this.deleting !== null;
    const title = String(doc.title ?? "");
    const chunks = doc.chunks === 1 ? "1 chunk" : `${doc.chunks} chunks`;
    const item = element("li", { class: "document", "data-id": String(doc.id) });

    const meta = element("p", { class: "document-meta" }, `${chunks} · added `);
    const created = new Date(doc.created_at);
    meta.append(
      Number.isNaN(created.getTime())
        ? "—"
        : element("time", { datetime: String(doc.created_at) }, DATE_FORMAT.format(created)),
      ` by ${addedByWords(doc)}`,
    );
    const kind = kindWords().get(doc.content_type);
    if (kind) meta.append(` · ${kind}`);
    if (typeof doc.collection === "string") meta.append(` · in ${doc.collection}`);
    const text = element("div", { class: "document-text" });
    const heading = element("h3", { class: "document-title" });
    heading.append(element("a", { href: `/documents/${encodeURIComponent(doc.id)}` }, title));
    text.append(heading, meta);
    const ask = button("Delete", {
      "data-action": "ask",
      "data-focus-key": `ask-${doc.id}`,
      "aria-label": `Delete ${title}`,
      "aria-expanded": String(confirming),
    });
    ask.disabled = busy;
    const row = element("div", { class: "document-row" });
    row.append(text, ask);
    item.append(row);
    if (confirming) item.append(this.confirmation(doc, title, chunks, busy));
    return item;
  }

  confirmation(doc, title, chunks, busy) {
    const questionId = `confirm-${doc.id}-question`;
    const group = element("div", { class: "confirm", role: "group", "aria-labelledby": questionId });
    const yes = button(this.deleting === doc.id ? "Deleting…" : "Yes, delete", {
      "data-action": "confirm",
      "data-focus-key": `confirm-${doc.id}`,
      class: "danger",
    });
    const no = button("Cancel", { "data-action": "cancel", "data-focus-key": `cancel-${doc.id}` });
    yes.disabled = busy;
    no.disabled = busy;
    const buttons = element("div", { class: "buttons" });
    buttons.append(yes, no);
    const question = `Delete “${title}” and its ${chunks}? Questions will no longer find it.`;
    group.append(element("p", { id: questionId }, question), buttons);
    return group;
  }
}

function button(text, attributes) {
  return element("button", { type: "button", ...attributes }, text);
}
