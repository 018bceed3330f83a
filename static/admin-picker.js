// A picker of one existing name (a person or a group): an ARIA combobox whose listbox
// offers the names that contain what is typed (WAI-ARIA APG, "list autocomplete"). The
// arrows move through the offers, Enter or a click takes one, Escape closes the list
// (and a second Escape empties the box). Only a name offered counts: text that names
// no one is marked invalid and read as no name.

import { element } from "./dom.js";

/** Offers shown at most; typing narrows them. */
const MAX_OFFERS = 50;
let pickers = 0;

/** The `{value, label}` offers whose value or label contains `text` (any case). */
export function matchingOffers(offers, text) {
  const wanted = text.trim().toLowerCase();
  return offers.filter(
    ({ value, label }) => wanted === "" || value.toLowerCase().includes(wanted) || label.toLowerCase().includes(wanted),
  );
}

export class NamePicker {
  /**
   * `label` is the box's accessible name (or its `<label>`'s words, when `id` is the id
   * that label is for); `offers()` the names it may take now, `[{value, label}]`;
   * `kind` says what a name is in the refusal ("person", "group"); `onPick(value)`
   * hears each name taken.
   */
  constructor({ id = `picker-${(pickers += 1)}`, label, offers, kind, onPick = () => {} }) {
    const labelled = document.querySelector(`label[for="${CSS.escape(id)}"]`) !== null;
    this.offers = offers;
    this.kind = kind;
    this.onPick = onPick;
    this.root = element("div", { class: "picker" });
    this.input = element("input", {
      id,
      role: "combobox",
      "aria-autocomplete": "list",
      "aria-expanded": "false",
      "aria-controls": `${id}-list`,
      autocomplete: "off",
      autocapitalize: "none",
      spellcheck: "false",
    });
    if (!labelled) this.input.setAttribute("aria-label", label);
    this.list = element("ul", { id: `${id}-list`, role: "listbox", "aria-label": `Suggestions: ${label}`, class: "picker-list" });
    this.list.hidden = true;
    this.problem = element("p", { id: `${id}-problem`, class: "picker-problem" });
    this.problem.hidden = true;
    this.root.append(this.input, this.list, this.problem);
    this.shown = [];
    this.active = -1;
    this.input.addEventListener("input", () => {
      this.#clearProblem();
      this.open();
    });
    this.input.addEventListener("keydown", (event) => this.#onKey(event));
    // Leaving the box marks a name of no one, without words: words appearing there
    // would move the button being pressed from under the pointer.
    this.input.addEventListener("blur", () => {
      this.close();
      this.check({ explain: false });
    });
    // A press on an offer takes it without taking the focus from the box.
    this.list.addEventListener("mousedown", (event) => event.preventDefault());
    this.list.addEventListener("click", (event) => {
      const option = event.target.closest("[role=option]");
      if (option) this.#take(Number(option.dataset.index));
    });
  }

  /** The name picked: an offered one, else "". */
  get value() {
    const typed = this.input.value.trim().toLowerCase();
    return this.offers().find(({ value }) => value.toLowerCase() === typed)?.value ?? "";
  }

  set value(name) {
    this.input.value = name;
    this.#clearProblem();
  }

  /** True when the box is empty or holds an offered name; else marks it invalid, and
   *  with `explain` says why below it. */
  check({ explain = true } = {}) {
    if (this.input.value.trim() === "" || this.value !== "") {
      this.#clearProblem();
      return true;
    }
    this.input.setAttribute("aria-invalid", "true");
    if (!explain) return false;
    this.input.setAttribute("aria-describedby", this.problem.id);
    this.problem.textContent = `No ${this.kind} is named “${this.input.value.trim()}”: pick one from the list.`;
    this.problem.hidden = false;
    return false;
  }

  focus() {
    this.input.focus();
  }

  /** Shows the offers that match what is typed. */
  open() {
    this.shown = matchingOffers(this.offers(), this.input.value).slice(0, MAX_OFFERS);
    this.active = this.shown.length > 0 && this.input.value.trim() !== "" ? 0 : -1;
    this.#draw();
  }

  close() {
    this.list.hidden = true;
    this.input.setAttribute("aria-expanded", "false");
    this.input.removeAttribute("aria-activedescendant");
  }

  #draw() {
    const empty = element("li", { class: "picker-empty", role: "option", "aria-disabled": "true" }, `No ${this.kind} matches.`);
    this.list.replaceChildren(
      ...(this.shown.length === 0
        ? [empty]
        : this.shown.map(({ value, label }, index) => {
            const option = element("li", {
              id: `${this.list.id}-${index}`,
              role: "option",
              "data-index": String(index),
              "aria-selected": String(index === this.active),
            });
            option.append(element("span", {}, label));
            if (label !== value) option.append(element("span", { class: "muted" }, ` ${value}`));
            return option;
          })),
    );
    this.list.hidden = false;
    this.input.setAttribute("aria-expanded", "true");
    if (this.active >= 0) {
      const option = this.list.children[this.active];
      this.input.setAttribute("aria-activedescendant", option.id);
      option.scrollIntoView({ block: "nearest" });
    } else {
      this.input.removeAttribute("aria-activedescendant");
    }
  }

  #onKey(event) {
    const open = !this.list.hidden;
    switch (event.key) {
      case "ArrowDown":
      case "ArrowUp": {
        event.preventDefault();
        if (!open) {
          this.open();
          return;
        }
        if (this.shown.length === 0) return;
        const step = event.key === "ArrowDown" ? 1 : -1;
        // With none chosen yet, Down goes to the first offer and Up to the last.
        const from = this.active < 0 ? (step > 0 ? -1 : this.shown.length) : this.active;
        this.active = (from + step + this.shown.length) % this.shown.length;
        this.#draw();
        return;
      }
      case "Enter":
        if (open && this.active >= 0) {
          event.preventDefault();
          this.#take(this.active);
        }
        return;
      case "Escape":
        if (open) {
          event.preventDefault();
          this.close();
        } else if (this.input.value !== "") {
          event.preventDefault();
          this.value = "";
        }
        return;
      default:
    }
  }

  #take(index) {
    const offer = this.shown[index];
    if (!offer) return;
    this.input.value = offer.value;
    this.#clearProblem();
    this.close();
    this.onPick(offer.value);
  }

  #clearProblem() {
    this.input.removeAttribute("aria-invalid");
    this.input.removeAttribute("aria-describedby");
    this.problem.hidden = true;
    this.problem.textContent = "";
  }
}
