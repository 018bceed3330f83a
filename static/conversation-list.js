// The list of conversations kept by the server (docs/PROTOCOL.md, "Conversations"):
// the pinned ones first, then the others newest first in groups by day and month
// (conversation-groups.js), each group a list under its heading; searched on the server
// as the reader types, a page at a time ("More"), the open one marked. The archived
// ones are a view of their own, searched alike.

import { appendPage, conversationHref, nextBefore, turnsLabel } from "./conversation.js";
import { groupConversations } from "./conversation-groups.js";
import { listConversations } from "./conversations-api.js";
import { element } from "./dom.js";

/** Typing pauses this long before the search goes to the server. */
const SEARCH_DELAY_MS = 250;

/** The pinned conversations listed (the server's largest page). */
const PINNED_LIMIT = 200;

/** What the list says of itself in each view. */
const VIEWS = {
  active: {
    heading: "Conversations",
    toggle: "Archived conversations",
    placeholder: "Search conversations…",
    empty: "No conversations yet.",
    unmatched: (query) => `No conversation matches “${query}”.`,
  },
  archived: {
    heading: "Archived conversations",
    toggle: "Back to conversations",
    placeholder: "Search archived conversations…",
    empty: "No archived conversations.",
    unmatched: (query) => `No archived conversation matches “${query}”.`,
  },
};

export class ConversationList {
  #ui;
  #onOpen;
  /** The pinned conversations on screen (none in the archived view). */
  #pinned = [];
  /** The others on screen, newest first, a page at a time. */
  #listed = [];
  /** Whether the archived ones are listed instead of the others. */
  #archived = false;
  #current = null;
  /** The `before` of the next page, or null when the last page is listed. */
  #before = null;
  /** The request in flight; a newer one aborts it, so an old answer never lands. */
  #request = null;
  #searchTimer = null;

  /**
   * `ui` holds the `list` (the groups go in it), the `search` box, the `more` button,
   * the `note` under the search box, the `heading` of the list and the `archivedToggle`
   * that switches between the views; `onOpen(id)` runs when the reader picks a
   * conversation.
   */
  constructor(ui, { onOpen }) {
    this.#ui = ui;
    this.#onOpen = onOpen;
    ui.archivedToggle.addEventListener("click", () => this.#showArchived(!this.#archived));
    ui.search.addEventListener("input", () => {
      clearTimeout(this.#searchTimer);
      this.#searchTimer = setTimeout(() => this.refresh(), SEARCH_DELAY_MS);
    });
    ui.more.addEventListener("click", () => this.#loadMore());
    ui.list.addEventListener("click", (event) => this.#onClick(event));
  }

  /** Lists the first page again, for the words in the search box (and the pinned
   *  ones, but in the archived view). */
  async refresh() {
    clearTimeout(this.#searchTimer);
    const pages = await this.#fetch(null);
    if (pages === null) return;
    [this.#listed, this.#pinned] = pages;
    this.#render();
  }

  /** Switches between the archived conversations and the others; the button keeps the
   *  keyboard, its label saying the way back. */
  async #showArchived(archived) {
    this.#archived = archived;
    const view = this.#view();
    this.#ui.heading.textContent = view.heading;
    this.#ui.archivedToggle.textContent = view.toggle;
    this.#ui.search.placeholder = view.placeholder;
    this.#pinned = [];
    this.#listed = [];
    this.#before = null;
    this.#render();
    await this.refresh();
  }

  #view() {
    return this.#archived ? VIEWS.archived : VIEWS.active;
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
    const updated = (listed) => (listed.id === summary.id ? summary : listed);
    this.#listed = this.#listed.map(updated);
    this.#pinned = this.#pinned.map(updated);
    this.#render();
  }

  remove(id) {
    this.#listed = this.#listed.filter((listed) => listed.id !== id);
    this.#pinned = this.#pinned.filter((listed) => listed.id !== id);
    this.#render();
  }

  async #loadMore() {
    if (this.#before === null) return;
    const shown = new Set([...this.#ui.list.querySelectorAll("a[data-id]")].map((link) => link.dataset.id));
    const pages = await this.#fetch(this.#before);
    if (pages === null) return;
    this.#listed = appendPage(this.#listed, pages[0]);
    this.#render();
    // The button may go (last page): keep the keyboard on the first new conversation.
    const links = [...this.#ui.list.querySelectorAll("a[data-id]")];
    (links.find((link) => !shown.has(link.dataset.id)) ?? links.at(-1) ?? this.#ui.search).focus();
  }

  /** `[page, pinned]` from the server: a page of the view's conversations (but the
   *  pinned ones), and with the first page of the others the pinned ones (else none);
   *  null when a newer request replaced this one or it failed (the note then says
   *  why). */
  async #fetch(before) {
    this.#request?.abort();
    const request = new AbortController();
    this.#request = request;
    this.#ui.list.setAttribute("aria-busy", "true");
    const asked = { query: this.#ui.search.value, archived: this.#archived, signal: request.signal };
    const withPinned = before === null && !this.#archived;
    try {
      const [page, pinned] = await Promise.all([
        listConversations({ ...asked, before, pinned: this.#archived ? null : false }),
        withPinned ? listConversations({ ...asked, pinned: true, limit: PINNED_LIMIT }) : this.#pinned,
      ]);
      this.#before = nextBefore(page);
      return [page, pinned];
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

  /** The groups, each a list under its heading (a screen reader moves between them by
   *  heading, and names each list by it). */
  #render() {
    const groups = groupConversations([...this.#pinned, ...this.#listed], { pinnedFirst: !this.#archived });
    this.#ui.list.replaceChildren(
      ...groups.map(({ label, conversations }, index) => {
        const id = `conversation-group-${index}`;
        const group = element("div", { class: "conversation-group" });
        const list = element("ul", { class: "conversation-list", role: "list", "aria-labelledby": id });
        list.append(...conversations.map((summary) => this.#item(summary)));
        group.append(element("h3", { class: "group-heading", id }, label), list);
        return group;
      }),
    );
    this.#ui.more.hidden = this.#before === null;
    const query = this.#ui.search.value.trim();
    const view = this.#view();
    if (groups.length > 0) this.#showNote("");
    else if (query === "") this.#showNote(view.empty);
    else this.#showNote(view.unmatched(query));
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
