// The admin page's Collections and Groups panels: make, describe and delete collections
// and edit who may read or write each (rows of a user or group and an access, saved
// together); make and delete groups and set their members. The server checks every
// name: its refusals are shown in the panel's alert region as it words them.

import {
  createCollection,
  createGroup,
  deleteCollection,
  deleteGroup,
  fetchCollections,
  fetchGroups,
  putGrants,
  putMembers,
  updateCollection,
} from "./admin-api.js";
import { element } from "./dom.js";

const ACCESS = ["read", "write"];
const GRANTEE_KINDS = [
  ["group", "Group"],
  ["user", "User"],
];

/** "1 document", "3 documents". */
export function counted(count, one, many) {
  return `${count} ${count === 1 ? one : many}`;
}

/** The usernames typed in a members box: split on commas and line ends, blanks dropped. */
export function usernamesOf(text) {
  return text
    .split(/[,\n]/)
    .map((name) => name.trim())
    .filter((name) => name !== "");
}

/** The grants a collection's rows say, `[{user | group: name, access}]`; rows without a
 *  name are left out. */
export function grantsOf(rows) {
  return rows
    .filter((row) => row.name.trim() !== "")
    .map((row) => ({ [row.kind]: row.name.trim(), access: row.access }));
}

/**
 * Runs `reload()`, which draws `list` anew, and gives the focus back to the control that
 * had it (found by its id or accessible name), so that a keyboard stays where it was.
 */
async function keepingFocus(list, reload) {
  const active = document.activeElement;
  const key = list.contains(active) ? (active.id ? `#${CSS.escape(active.id)}` : active.getAttribute("aria-label")) : null;
  await reload();
  if (key === null) return;
  const again = key.startsWith("#") ? list.querySelector(key) : list.querySelector(`[aria-label="${CSS.escape(key)}"]`);
  again?.focus();
}

/** A panel's status line (successes) and alert region (refusals). */
class PanelVoice {
  constructor(prefix) {
    this.alert = document.getElementById(`${prefix}-alert`);
    this.status = document.getElementById(`${prefix}-status`);
  }

  say(text) {
    this.alert.hidden = true;
    this.alert.textContent = "";
    this.status.textContent = text;
  }

  refuse(text) {
    this.status.textContent = "";
    this.alert.textContent = text;
    this.alert.hidden = false;
  }
}

export class Collections {
  /** `token()` is the admin token in use ("" with a session); `onList(collections)`
   *  hears every list loaded (the upload chooser offers its names); `onDeleted()` hears
   *  a collection deleted (its documents went with it). */
  constructor({ token, onList, onDeleted }) {
    this.token = token;
    this.onList = onList;
    this.onDeleted = onDeleted;
    this.voice = new PanelVoice("collections");
    this.list = document.getElementById("collections");
    this.name = document.getElementById("collection-name");
    this.description = document.getElementById("collection-description");
    document.getElementById("collection-form").addEventListener("submit", (event) => {
      event.preventDefault();
      this.#create();
    });
    this.name.addEventListener("input", () => this.name.removeAttribute("aria-invalid"));
  }

  async load() {
    try {
      const collections = await fetchCollections(this.token());
      this.#show(collections);
      this.onList(collections);
    } catch (error) {
      this.voice.refuse(`Could not list the collections. ${error.message}`);
    }
  }

  async #create() {
    const name = this.name.value.trim();
    if (name === "") {
      this.voice.refuse("Enter the collection's name first.");
      this.name.focus();
      return;
    }
    try {
      const made = await createCollection(this.token(), name, this.description.value.trim());
      this.name.value = "";
      this.description.value = "";
      this.voice.say(`Made the collection ${made.name}. Grant it to someone below.`);
      await this.load();
    } catch (error) {
      this.name.setAttribute("aria-invalid", "true");
      this.voice.refuse(error.message);
      this.name.focus();
    }
  }

  /** Runs `action`; says `done` after it and reloads the list, or shows the refusal. */
  async #act(action, done) {
    try {
      await action();
      this.voice.say(done);
      await keepingFocus(this.list, () => this.load());
      return true;
    } catch (error) {
      this.voice.refuse(error.message);
      return false;
    }
  }

  #show(collections) {
    this.list.replaceChildren(...collections.map((collection) => this.#item(collection)));
  }

  #item(collection) {
    const name = String(collection.name);
    const item = element("li", { class: "collection" });
    const headingId = `collection-${name}-heading`;
    item.setAttribute("aria-labelledby", headingId);
    const head = element("div", { class: "collection-head" });
    head.append(
      element("h3", { id: headingId, class: "collection-name" }, name),
      element(
        "span",
        { class: "muted" },
        `${counted(collection.documents, "document", "documents")}, ${counted(collection.chunks, "chunk", "chunks")}`,
      ),
    );
    const remove = element("button", { type: "button", class: "danger", "aria-label": `Delete collection ${name}` }, "Delete");
    remove.addEventListener("click", async () => {
      const documents = counted(collection.documents, "document goes", "documents go");
      if (!window.confirm(`Delete the collection ${name}? Its ${documents} with it.`)) return;
      const deleted = await this.#act(() => deleteCollection(this.token(), name), `Deleted the collection ${name}.`);
      if (deleted) this.onDeleted();
    });
    head.append(remove);
    item.append(head, this.#descriptionForm(name, collection.description ?? ""), this.#grantsEditor(name, collection.grants ?? []));
    return item;
  }

  #descriptionForm(name, description) {
    const form = element("form", { class: "token-form", novalidate: "" });
    const field = element("div", { class: "field" });
    const inputId = `collection-${name}-description`;
    const input = element("input", { id: inputId, autocomplete: "off" });
    input.value = description;
    field.append(element("label", { for: inputId }, "Description"), input);
    form.append(field, element("button", { type: "submit", "aria-label": `Save the description of ${name}` }, "Save description"));
    form.addEventListener("submit", (event) => {
      event.preventDefault();
      this.#act(() => updateCollection(this.token(), name, input.value.trim()), `Saved the description of ${name}.`);
    });
    return form;
  }

  #grantsEditor(name, grants) {
    const fieldset = element("fieldset", { class: "grants" });
    fieldset.append(element("legend", {}, `Who reads ${name}`));
    const rows = element("ul", { class: "grant-rows", "aria-label": `Grants of ${name}` });
    const empty = element("p", { class: "muted grants-empty" }, "No one but the admins.");
    const refreshEmpty = () => {
      empty.hidden = rows.children.length > 0;
    };
    const addRow = (grant) => {
      rows.append(this.#grantRow(name, grant, refreshEmpty));
      refreshEmpty();
    };
    for (const grant of grants) {
      const kind = "group" in grant ? "group" : "user";
      addRow({ kind, name: String(grant[kind]), access: grant.access });
    }
    refreshEmpty();
    const add = element("button", { type: "button", "aria-label": `Add a grant to ${name}` }, "Add grant");
    add.addEventListener("click", () => {
      addRow({ kind: "group", name: "", access: "read" });
      rows.lastElementChild.querySelector("input").focus();
    });
    const save = element("button", { type: "button", class: "primary", "aria-label": `Save the grants of ${name}` }, "Save grants");
    save.addEventListener("click", () => {
      const typed = [...rows.children].map((row) => ({
        kind: row.querySelector(".grant-kind").value,
        name: row.querySelector(".grant-name").value,
        access: row.querySelector(".grant-access").value,
      }));
      this.#act(() => putGrants(this.token(), name, grantsOf(typed)), `Saved the grants of ${name}.`);
    });
    const buttons = element("div", { class: "grant-buttons" });
    buttons.append(add, save);
    fieldset.append(rows, empty, buttons);
    return fieldset;
  }

  #grantRow(collection, grant, onRemoved) {
    const row = element("li", { class: "grant-row" });
    const kind = element("select", { class: "grant-kind", "aria-label": `Grantee kind, ${collection}` });
    for (const [value, label] of GRANTEE_KINDS) kind.append(element("option", { value }, label));
    kind.value = grant.kind;
    const name = element("input", {
      class: "grant-name",
      autocomplete: "off",
      autocapitalize: "none",
      spellcheck: "false",
      "aria-label": `User or group name, ${collection}`,
    });
    name.value = grant.name;
    const access = element("select", { class: "grant-access", "aria-label": `Access, ${collection}` });
    for (const value of ACCESS) access.append(element("option", { value }, value));
    access.value = grant.access;
    const remove = element("button", { type: "button", class: "quiet" }, "Remove");
    const describeRemove = () => remove.setAttribute("aria-label", `Remove the grant to ${name.value.trim() || "no one yet"}, ${collection}`);
    describeRemove();
    name.addEventListener("input", describeRemove);
    remove.addEventListener("click", () => {
      const next = row.nextElementSibling ?? row.previousElementSibling;
      row.remove();
      onRemoved();
      (next?.querySelector("input") ?? remove.closest("fieldset")?.querySelector("button"))?.focus();
    });
    row.append(kind, name, access, remove);
    return row;
  }
}

export class Groups {
  /** `token()` as for `Collections`; `onChanged()` hears a group deleted (its grants
   *  went with it). */
  constructor({ token, onChanged }) {
    this.token = token;
    this.onChanged = onChanged;
    this.voice = new PanelVoice("groups");
    this.list = document.getElementById("groups");
    this.name = document.getElementById("group-name");
    document.getElementById("group-form").addEventListener("submit", (event) => {
      event.preventDefault();
      this.#create();
    });
  }

  async load() {
    try {
      this.#show(await fetchGroups(this.token()));
    } catch (error) {
      this.voice.refuse(`Could not list the groups. ${error.message}`);
    }
  }

  async #create() {
    const name = this.name.value.trim();
    if (name === "") {
      this.voice.refuse("Enter the group's name first.");
      this.name.focus();
      return;
    }
    try {
      const made = await createGroup(this.token(), name);
      this.name.value = "";
      this.voice.say(`Made the group ${made.name}.`);
      await this.load();
    } catch (error) {
      this.voice.refuse(error.message);
      this.name.focus();
    }
  }

  #show(groups) {
    this.list.replaceChildren(...groups.map((group) => this.#item(group)));
  }

  #item(group) {
    const name = String(group.name);
    const item = element("li", { class: "group" });
    const head = element("div", { class: "collection-head" });
    head.append(element("h3", { class: "collection-name" }, name));
    item.append(head);
    if (group.built_in) {
      head.append(element("span", { class: "muted" }, "built in: every user, always"));
      return item;
    }
    const remove = element("button", { type: "button", class: "danger", "aria-label": `Delete group ${name}` }, "Delete");
    remove.addEventListener("click", async () => {
      if (!window.confirm(`Delete the group ${name}, with its memberships and grants?`)) return;
      try {
        await deleteGroup(this.token(), name);
        this.voice.say(`Deleted the group ${name}.`);
        await this.load();
        this.onChanged();
      } catch (error) {
        this.voice.refuse(error.message);
      }
    });
    head.append(remove);
    const form = element("form", { class: "members-form", novalidate: "" });
    const boxId = `group-${name}-members`;
    const hintId = `${boxId}-hint`;
    const box = element("textarea", { id: boxId, rows: "3", spellcheck: "false", autocapitalize: "none", "aria-describedby": hintId });
    box.value = (group.members ?? []).join("\n");
    form.append(
      element("label", { for: boxId }, `Members of ${name}`),
      box,
      element("p", { id: hintId, class: "hint" }, "Usernames, separated by commas or one per line."),
      element("button", { type: "submit", "aria-label": `Save the members of ${name}` }, "Save members"),
    );
    form.addEventListener("submit", async (event) => {
      event.preventDefault();
      try {
        const saved = await putMembers(this.token(), name, usernamesOf(box.value));
        this.voice.say(`Saved the members of ${name}: ${counted(saved.members.length, "person", "people")}.`);
        await keepingFocus(this.list, () => this.load());
      } catch (error) {
        this.voice.refuse(error.message);
        box.focus();
      }
    });
    item.append(form);
    return item;
  }
}
