// The documents list of the admin page: one item per document, newest first (title,
// chunks, when added, its collection), with a Delete button that opens a confirmation
// below it (Escape or Cancel closes it). Titles are user content: they only ever go in
// as text.

import { element } from "./dom.js";

const DATE_FORMAT = new Intl.DateTimeFormat(undefined, { dateStyle: "medium", timeStyle: "short" });

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

  /** Shows `documents` (as `GET /api/documents` lists them). */
  show(documents) {
    this.documents = [...documents].sort(newestFirst);
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
    );
    if (typeof doc.collection === "string") meta.append(` · in ${doc.collection}`);
    const text = element("div", { class: "document-text" });
    text.append(element("h3", { class: "document-title" }, title), meta);
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

function newestFirst(a, b) {
  const byDate = String(b.created_at).localeCompare(String(a.created_at));
  return byDate !== 0 ? byDate : b.id - a.id;
}

function button(text, attributes) {
  return element("button", { type: "button", ...attributes }, text);
}
