// The admin page's sections, each at its own address (`/admin/people`, …): the section
// nav shows one at a time, marks the current one (aria-current), and keeps the address,
// the history (back and forward) and the tab's title in step. `/admin` opens the first.

/** The path every section's address starts with. */
const BASE = "/admin";

/** The section an address names; `null` when it names none of `sections`. */
export function sectionOfPath(pathname, sections) {
  const rest = pathname.startsWith(`${BASE}/`) ? pathname.slice(BASE.length + 1).replace(/\/$/, "") : "";
  if (rest === "") return sections[0] ?? null;
  return sections.includes(rest) ? rest : null;
}

/** The address of `section`. */
export function pathOfSection(section) {
  return `${BASE}/${section}`;
}

export class SectionNav {
  /** `onChange(section)` hears every change of section (not the first one shown). */
  constructor({ onChange }) {
    this.onChange = onChange;
    this.nav = document.getElementById("section-nav");
    this.links = [...this.nav.querySelectorAll("a[data-section]")];
    this.panels = new Map(
      [...document.querySelectorAll("[data-section-panel]")].map((panel) => [panel.dataset.sectionPanel, panel]),
    );
    this.baseTitle = document.title;
    this.current = null;
    this.nav.addEventListener("click", (event) => {
      const link = event.target.closest("a[data-section]");
      if (!link || event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) return;
      event.preventDefault();
      this.go(link.dataset.section);
    });
    window.addEventListener("popstate", () => this.show(this.#fromAddress(), { focus: true }));
  }

  /** The sections a person may open now, in the nav's order. */
  get sections() {
    return this.links.filter((link) => !link.parentElement.hidden).map((link) => link.dataset.section);
  }

  /** Offers `section` in the nav, or takes it away (People needs an admin's session). */
  offer(section, offered) {
    const link = this.links.find((candidate) => candidate.dataset.section === section);
    if (link) link.parentElement.hidden = !offered;
  }

  /** Shows the section the address names (the first one when it names none, or names
   *  one not offered: the address then says which opened). */
  start() {
    const section = this.#fromAddress();
    const path = window.location.pathname;
    if (path !== BASE && path !== `${BASE}/` && path !== pathOfSection(section)) {
      history.replaceState(null, "", pathOfSection(section) + window.location.hash);
    }
    this.show(section, { focus: false });
  }

  /** Moves the focus to the heading of the section shown. */
  focusCurrent() {
    this.#focusHeading(this.current);
  }

  /** Opens `section` as a new history entry, its heading focused. */
  go(section) {
    if (section === this.current) {
      this.focusCurrent();
      return;
    }
    history.pushState({ section }, "", pathOfSection(section));
    this.show(section, { focus: true });
  }

  /** Shows `section` alone; `focus` moves the focus to its heading. */
  show(section, { focus }) {
    const previous = this.current;
    this.current = section;
    for (const [name, panel] of this.panels) panel.hidden = name !== section;
    for (const link of this.links) {
      if (link.dataset.section === section) {
        link.setAttribute("aria-current", "page");
        link.scrollIntoView({ block: "nearest", inline: "nearest" });
      } else {
        link.removeAttribute("aria-current");
      }
    }
    const label = this.links.find((link) => link.dataset.section === section)?.textContent.trim();
    document.title = label ? `${label} — ${this.baseTitle}` : this.baseTitle;
    if (focus) this.#focusHeading(section);
    if (previous !== null && previous !== section) this.onChange(section);
  }

  #fromAddress() {
    const offered = this.sections;
    return sectionOfPath(window.location.pathname, offered) ?? offered[0];
  }

  #focusHeading(section) {
    this.panels.get(section)?.querySelector("h2")?.focus();
  }
}
