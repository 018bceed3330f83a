// A button that shows and hides the menu it controls: Escape (the keyboard back on the
// button), the keyboard leaving it, or an item chosen in it closes it. The area gets
// the class `open` while it is open; style.css says what that shows (some menus are
// menus at phone width only, and lie open in a row wider than that).

export class Disclosure {
  #toggle;
  #area;

  /** `toggle` is the button (its `aria-expanded` follows), `area` holds it and its
   *  menu, `menu` the items. */
  constructor({ toggle, area, menu }) {
    this.#toggle = toggle;
    this.#area = area;
    toggle.setAttribute("aria-expanded", "false");
    toggle.addEventListener("click", () => this.setOpen(!this.isOpen));
    area.addEventListener("keydown", (event) => {
      if (event.key === "Escape" && this.isOpen) {
        event.stopPropagation();
        this.setOpen(false);
        toggle.focus();
      }
    });
    area.addEventListener("focusout", (event) => {
      if (!area.contains(event.relatedTarget)) this.setOpen(false);
    });
    menu.addEventListener("click", (event) => {
      // A menu inside this one (Export) stays open for its own items.
      const item = event.target.closest("a, button");
      if (item !== null && item.getAttribute("aria-expanded") === null) this.setOpen(false);
    });
  }

  get isOpen() {
    return this.#area.classList.contains("open");
  }

  setOpen(open) {
    this.#area.classList.toggle("open", open);
    this.#toggle.setAttribute("aria-expanded", String(open));
  }
}
