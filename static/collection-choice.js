// The chat page's collections: which of the caller's readable collections a question
// searches (all of them, or the ones ticked, kept in this browser), and "Add documents"
// for a person who may write to some collection. Both come from `GET /api/collections`.

import { pagesRead } from "./document-file.js";
import { element } from "./dom.js";

const CHOICE_KEY = "bor.collections";

/** `GET /api/collections`: `[{name, description, documents, chunks, access}]`; [] when
 *  it cannot be read (the page then searches all, as the server does by default). */
export async function fetchReadableCollections() {
  try {
    const response = await fetch("/api/collections", { headers: { Accept: "application/json" } });
    if (!response.ok) return [];
    const body = await response.json();
    return Array.isArray(body?.collections) ? body.collections : [];
  } catch {
    return [];
  }
}

/** The names kept in `stored` (a JSON array, or null) that are still readable; null
 *  (every collection) when none is. */
export function keptChoice(stored, readable) {
  let names;
  try {
    names = JSON.parse(stored ?? "null");
  } catch {
    return null;
  }
  if (!Array.isArray(names)) return null;
  const chosen = readable.filter((name) => names.includes(name));
  return chosen.length === 0 || chosen.length === readable.length ? null : chosen;
}

/** What the chooser's summary says for `chosen` (null: all). */
export function choiceSummary(chosen) {
  return chosen === null ? "Searching all my collections" : `Searching ${chosen.join(", ")}`;
}

/** The chooser: shown only to a caller who reads more than one collection. */
export class CollectionChoice {
  constructor({ details, summary, all, options }) {
    this.details = details;
    this.summary = summary;
    this.all = all;
    this.options = options;
    this.names = [];
    this.all.addEventListener("change", () => {
      if (this.all.checked) for (const box of this.#boxes()) box.checked = false;
      else this.all.checked = true;
      this.#keep();
    });
  }

  /** The collections a question should search: null for all of them. */
  chosen() {
    const ticked = this.#boxes()
      .filter((box) => box.checked)
      .map((box) => box.value);
    return ticked.length === 0 || ticked.length === this.names.length ? null : ticked;
  }

  /** Offers `collections` (from `fetchReadableCollections`). */
  show(collections) {
    this.names = collections.map(({ name }) => String(name));
    const kept = keptChoice(readKept(), this.names);
    this.options.replaceChildren(
      ...this.names.map((name) => {
        const box = element("input", { type: "checkbox", value: name });
        box.checked = kept?.includes(name) ?? false;
        box.addEventListener("change", () => {
          this.all.checked = this.chosen() === null;
          if (this.all.checked) for (const other of this.#boxes()) other.checked = false;
          this.#keep();
        });
        const label = element("label", { class: "choice" });
        label.append(box, document.createTextNode(` ${name}`));
        return label;
      }),
    );
    this.all.checked = kept === null;
    this.summary.textContent = choiceSummary(kept);
    this.details.hidden = this.names.length < 2;
  }

  #boxes() {
    return [...this.options.querySelectorAll("input[type=checkbox]")];
  }

  #keep() {
    const chosen = this.chosen();
    this.summary.textContent = choiceSummary(chosen);
    try {
      if (chosen === null) localStorage.removeItem(CHOICE_KEY);
      else localStorage.setItem(CHOICE_KEY, JSON.stringify(chosen));
    } catch {
      // A browser that keeps nothing: the choice holds until the page reloads.
    }
  }
}

function readKept() {
  try {
    return localStorage.getItem(CHOICE_KEY);
  } catch {
    return null;
  }
}

/** The lines of an upload's report: `{documents: [{file, title, chunks, status,
 *  ocr_pages, skipped_pages}], skipped: [{file, reason}]}` as a person reads them. */
export function reportLines(report) {
  const stored = report.documents.map((document) => {
    const { file, title, chunks, status } = document;
    const what = status === "unchanged" ? "already there" : `stored, ${chunks} ${chunks === 1 ? "chunk" : "chunks"}`;
    const pages = pagesRead(document);
    return { tone: "success", text: `${file}: “${title}”, ${what}${pages ? `; ${pages}` : ""}` };
  });
  const skipped = report.skipped.map(({ file, reason }) => ({ tone: "error", text: `${file}: skipped, ${reason}` }));
  return [...stored, ...skipped];
}

/**
 * "Add documents": a button in the account controls opening a dialog that uploads files
 * with `POST /api/documents` into a collection the caller can write. Shown only when
 * some collection says `access: "write"` and the caller is not an admin (the admin page
 * is theirs).
 */
export class AddDocuments {
  constructor({ dialog, form, collection, files, status, report, close, upload }, { onStored }) {
    Object.assign(this, { dialog, form, collection, files, status, report, upload });
    this.onStored = onStored;
    this.button = element("button", { type: "button", class: "quiet", id: "add-documents" }, "Add documents");
    this.button.addEventListener("click", () => this.#open());
    close.addEventListener("click", () => dialog.close());
    form.addEventListener("submit", (event) => {
      event.preventDefault();
      this.#send();
    });
  }

  /** Puts the button in `container` when some of `collections` may be written by `me`. */
  offer(container, collections, me) {
    const writable = collections.filter(({ access }) => access === "write").map(({ name }) => String(name));
    if (writable.length === 0 || me?.user?.role === "admin" || container.hidden) return;
    this.collection.replaceChildren(...writable.map((name) => element("option", { value: name }, name)));
    const name = container.querySelector(".account-name");
    if (name === null) container.prepend(this.button);
    else name.after(this.button);
  }

  #open() {
    this.files.value = "";
    this.status.textContent = "";
    this.report.hidden = true;
    this.report.replaceChildren();
    this.dialog.showModal();
    this.collection.focus();
  }

  async #send() {
    const files = [...this.files.files];
    if (files.length === 0) {
      this.status.textContent = "Choose one or more files first.";
      this.files.focus();
      return;
    }
    const body = new FormData();
    // The server reads the collection only from a part before the files.
    body.append("collection", this.collection.value);
    for (const file of files) body.append("file", file, file.name);
    this.upload.disabled = true;
    this.status.textContent = "Uploading…";
    try {
      const response = await fetch("/api/documents", {
        method: "POST",
        headers: { Accept: "application/json" },
        body,
      });
      const answer = await response.json().catch(() => null);
      if (response.status !== 200 || !Array.isArray(answer?.documents) || !Array.isArray(answer?.skipped)) {
        this.status.textContent = answer?.error?.message ?? `The server answered ${response.status}.`;
        return;
      }
      const lines = reportLines(answer);
      this.report.replaceChildren(...lines.map(({ tone, text }) => element("li", { "data-tone": tone }, text)));
      this.report.hidden = false;
      const stored = answer.documents.length;
      this.status.textContent = `${stored} stored, ${answer.skipped.length} skipped, in ${this.collection.value}.`;
      if (stored > 0) this.onStored();
    } catch {
      this.status.textContent = "Could not reach bor: try again.";
    } finally {
      this.upload.disabled = false;
    }
  }
}
