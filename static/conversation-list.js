// The list of conversations kept by the server (docs/PROTOCOL.md, "Conversations"):
// newest first, searched on the server as the reader types, a page at a time ("More"),
// the open one marked.

import { appendPage, conversationHref, nextBefore, turnsLabel } from "./conversation.js";
import { listConversations } from "./conversations-api.js";
import { element } from "./dom.js";

/** Typing pauses this long before the search goes to the server. */
const SEARCH_DELAY_MS = 250;

export class ConversationList {
  #ui;
  #onOpen;
  /** The conversations on screen, in list order. */
  #listed = [];
  #current = null;
  /** The `before` of the next page, or null when the last page is listed. */
  #before = null;
  /** The request in flight; a newer one aborts it, so an old answer never lands. */
  #request = null;
  #searchTimer = null;

  /**
   * `ui` holds the `list`, the `search` box, the `more` button and the `note` under the
   * search box; `onOpen(id)` runs when the reader picks a conversation.
   */
  constructor(ui, { onOpen }) {
    this.#ui = ui;
    this.#onOpen = onOpen;
    ui.search.addEventListener("input", () => {
      clearTimeout(this.#searchTimer);
      this.#searchTimer = setTimeout(() => this.refresh(), SEARCH_DELAY_MS);
    });
    ui.more.addEventListener("click", () => this.#loadMore());
    ui.list.addEventListener("click", (event) => this.#onClick(event));
  }

  /** Lists the first page again, for the words in the search box. */
  async refresh() {
    clearTimeout(this.#searchTimer);
    const page = await this.#fetch(null);
    if (page === null) return;
    this.#listed = page;
    this.#render();
  }

  /** Marks conversation `id` (null: none) as the open one. */
  setCurrent(id) {
    this.#current = id;
    for (const link of this.#ui.list.querySelectorAll("a[data-id]")) {
      if (link.dataset.id === id) link.setAttribute("aria-current", "page");
      else link.removeAttribute("aria-current");
    }
  }

  /** Shows a conversation's new summary (after a rename) where it is listed. */
  update(summary) {
    this.#listed = this.#listed.map((listed) => (listed.id === summary.id ? summary : listed));
    this.#render();
  }

  remove(id) {
    this.#listed = this.#listed.filter((listed) => listed.id !== id);
    this.#render();
  }

  async #loadMore() {
    if (this.#before === null) return;
    const count = this.#listed.length;
    const page = await this.#fetch(this.#before);
    if (page === null) return;
    this.#listed = appendPage(this.#listed, page);
    this.#render();
    // The button may go (last page): keep the keyboard on the first new conversation.
    const links = this.#ui.list.querySelectorAll("a[data-id]");
    (links[count] ?? links[links.length - 1] ?? this.#ui.search).focus();
  }

  /** One page from the server, or null when a newer request replaced this one or it
   *  failed (the note then says why). */
  async #fetch(before) {
    this.#request?.abort();
    const request = new AbortController();
    this.#request = request;
    this.#ui.list.setAttribute("aria-busy", "true");
    try {
      const page = await listConversations({
        query: this.#ui.search.value,
        before,
        signal: request.signal,
      });
      this.#before = nextBefore(page);
      return page;
    } catch (error) {
      if (request.signal.aborted) return null;
      this.#showNote(`The conversations could not be listed. ${error.message}`);
      return null;
    } finally {
      if (this.#request === request) {
        this.#request = null;
        this.#ui.list.removeAttribute("aria-busy");
      }
    }
  }

  #render() {
    this.#ui.list.replaceChildren(...this.#listed.map((summary) => this.#item(summary)));
    this.#ui.more.hidden = this.#before === null;
    const query = this.#ui.search.value.trim();
    if (this.#listed.length > 0) this.#showNote("");
    else if (query === "") this.#showNote("No conversations yet.");
    else this.#showNote(`No conversation matches “${query}”.`);
  }

  /** A conversation: its title opens it; how many turns and when it was last added to. */
  #item(summary) {
    const link = element("a", {
      class: "conversation-link",
      href: conversationHref(summary.id),
      "data-id": summary.id,
    });
    if (summary.id === this.#current) link.setAttribute("aria-current", "page");
    const when = element(
      "time",
      { datetime: String(summary.updated_at) },
      whenLabel(summary.updated_at),
    );
    const facts = element("span", { class: "conversation-facts" }, `${turnsLabel(summary.turns)} · `);
    facts.append(when);
    link.append(element("span", { class: "conversation-title" }, String(summary.title)), facts);
    const item = element("li", { class: "conversation-item" });
    item.append(link);
    return item;
  }

  /** A plain click opens the conversation in place; a click that asks for a new tab or
   *  window (modifier keys, middle button) is left to the browser. */
  #onClick(event) {
    const link = event.target.closest("a[data-id]");
    if (link === null) return;
    if (event.button !== 0 || event.ctrlKey || event.metaKey || event.shiftKey || event.altKey) return;
    event.preventDefault();
    this.#onOpen(link.dataset.id);
  }

  #showNote(text) {
    this.#ui.note.textContent = text;
    this.#ui.note.hidden = text === "";
  }
}

/** The time of day for today, else the date. */
function whenLabel(iso) {
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return "";
  const today = new Date().toDateString() === date.toDateString();
  return new Intl.DateTimeFormat(undefined, today ? { timeStyle: "short" } : { dateStyle: "medium" }).format(date);
}
