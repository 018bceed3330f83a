// The conversation list as a drawer at phone width: a button opens it over the chat,
// the keyboard goes into it and stays there (the rest of the page is inert) until
// Escape, its Close button, a tap beside it or a chosen conversation closes it.

/** Matches the width at which style.css turns the list into a drawer. */
const PHONE = "(max-width: 760px)";

export class Drawer {
  #ui;
  #phone = matchMedia(PHONE);

  /** `ui` holds the `drawer`, its `toggle` and `close` buttons, the `backdrop`, and the
   *  `outside` elements made inert while it is open. */
  constructor(ui) {
    this.#ui = ui;
    ui.toggle.addEventListener("click", () => (this.isOpen ? this.close() : this.open()));
    ui.close.addEventListener("click", () => this.close());
    ui.backdrop.addEventListener("click", () => this.close());
    ui.drawer.addEventListener("keydown", (event) => {
      if (event.key === "Escape" && this.isOpen) {
        event.stopPropagation();
        this.close();
      }
    });
    // Wider than a phone the list is always beside the chat.
    this.#phone.addEventListener("change", () => this.close({ restoreFocus: false }));
  }

  get isOpen() {
    return this.#ui.drawer.classList.contains("open");
  }

  /** Whether the list shows only when opened (phone width). */
  get isDrawer() {
    return this.#phone.matches;
  }

  open() {
    if (!this.isDrawer) return;
    this.#set(true);
    this.#ui.focusOnOpen.focus();
  }

  /** Closes the drawer; focus goes back to the button that opened it unless the caller
   *  moves it elsewhere (`restoreFocus: false`). */
  close({ restoreFocus = true } = {}) {
    if (!this.isOpen) return;
    this.#set(false);
    if (restoreFocus) this.#ui.toggle.focus();
  }

  #set(open) {
    this.#ui.drawer.classList.toggle("open", open);
    this.#ui.backdrop.hidden = !open;
    this.#ui.toggle.setAttribute("aria-expanded", String(open));
    for (const node of this.#ui.outside) node.inert = open;
  }
}
