// The admin page's Collections and Groups panels: make, describe and delete collections
// and edit who may read or write each (rows of a user or group, picked from those that
// exist, and an access, saved together); make and delete groups and set their members
// (picked alike). The server checks every name again: its refusals are shown in the
// panel's alert region as it words them.

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
import { confirmLoss } from "./admin-confirm.js";
import { NamePicker } from "./admin-picker.js";
import { element } from "./dom.js";

const ACCESS = ["read", "write"];
/** The collection the server never deletes. */
const DEFAULT_COLLECTION = "default";
const GRANTEE_KINDS = [
  ["group", "Group"],
  ["user", "User"],
];

/** "1 document", "3 documents". */
export function counted(count, one, many) {
  return `${count} ${count === 1 ? one : many}`;
}

/** The `offers` whose value is not among `taken`. */
function offersNotIn(offers, taken) {
  return offers.filter(({ value }) => !taken.includes(value));
}

/** A grant in words: "ann (write)", "group staff (read)". */
function grantee(grant) {
  return "group" in grant ? `group ${grant.group} (${grant.access})` : `${grant.user} (${grant.access})`;
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
  /** `token()` is the admin token in use ("" with a session); `names` offers the people
   *  and groups a grant may name (`people()`, `groups()`: `[{value, label}]`);
   *  `onList(collections)` hears every list loaded (the upload chooser offers its
   *  names); `onDeleted()` hears a collection deleted (its documents went with it). */
  constructor({ token, names, onList, onDeleted }) {
    this.token = token;
    this.names = names;
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
    // `default` is where documents go when no collection is named: the server keeps it.
    if (name !== DEFAULT_COLLECTION) head.append(this.#deleteButton(collection, name));
    item.append(head, this.#descriptionForm(name, collection.description ?? ""), this.#grantsEditor(name, collection.grants ?? []));
    return item;
  }

  #deleteButton(collection, name) {
    const remove = element("button", { type: "button", class: "danger", "aria-label": `Delete collection ${name}` }, "Delete");
    remove.addEventListener("click", async () => {
      const grants = collection.grants ?? [];
      const confirmed = await confirmLoss({
        title: `Delete the collection ${name}?`,
        losses: [
          `Its ${counted(collection.documents, "document", "documents")} (${counted(collection.chunks, "chunk", "chunks")}) ${collection.documents === 1 ? "is" : "are"} deleted with it: questions will no longer find them.`,
          grants.length === 0
            ? "It is granted to no one."
            : `Its ${counted(grants.length, "grant goes", "grants go")}: ${grants.map(grantee).join(", ")}.`,
        ],
        action: `Delete ${name}`,
      });
      if (!confirmed) return;
      const deleted = await this.#act(() => deleteCollection(this.token(), name), `Deleted the collection ${name}.`);
      if (deleted) {
        this.onDeleted();
        this.name.focus();
      }
    });
    return remove;
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
      rows.lastElementChild.picker.focus();
    });
    const save = element("button", { type: "button", class: "primary", "aria-label": `Save the grants of ${name}` }, "Save grants");
    save.addEventListener("click", () => {
      const unknown = [...rows.children].find((row) => !row.picker.check());
      if (unknown) {
        this.voice.refuse(`Pick who the grant is for from the list: no one is named “${unknown.picker.input.value.trim()}”.`);
        unknown.picker.focus();
        return;
      }
      const picked = [...rows.children].map((row) => ({
        kind: row.querySelector(".grant-kind").value,
        name: row.picker.value,
        access: row.querySelector(".grant-access").value,
      }));
      this.#act(() => putGrants(this.token(), name, grantsOf(picked)), `Saved the grants of ${name}.`);
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
    const picker = new NamePicker({
      label: `User or group name, ${collection}`,
      offers: () => (kind.value === "user" ? this.names.people() : this.names.groups()),
      kind: "user or group",
    });
    picker.value = grant.name;
    picker.root.classList.add("grant-name");
    row.picker = picker;
    kind.addEventListener("change", () => {
      if (picker.input.value.trim() !== "") picker.check();
    });
    const name = picker.input;
    const access = element("select", { class: "grant-access", "aria-label": `Access, ${collection}` });
    for (const value of ACCESS) access.append(element("option", { value }, value));
    access.value = grant.access;
    const remove = element("button", { type: "button", class: "quiet" }, "Remove");
    const describeRemove = () => remove.setAttribute("aria-label", `Remove the grant to ${name.value.trim() || "no one yet"}, ${collection}`);
    describeRemove();
    name.addEventListener("input", describeRemove);
    picker.onPick = describeRemove;
    remove.addEventListener("click", () => {
      const next = row.nextElementSibling ?? row.previousElementSibling;
      row.remove();
      onRemoved();
      (next?.querySelector("input") ?? remove.closest("fieldset")?.querySelector("button"))?.focus();
    });
    row.append(kind, picker.root, access, remove);
    return row;
  }
}

export class Groups {
  /** `token()` and `names` as for `Collections`; `onChanged()` hears a group made,
   *  deleted or changed (grants name groups). */
  constructor({ token, names, onChanged }) {
    this.token = token;
    this.names = names;
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
      this.onChanged();
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
      let granted;
      try {
        granted = (await fetchCollections(this.token())).filter((collection) =>
          (collection.grants ?? []).some((grant) => grant.group === name),
        );
      } catch (error) {
        this.voice.refuse(error.message);
        return;
      }
      const members = group.members ?? [];
      const confirmed = await confirmLoss({
        title: `Delete the group ${name}?`,
        losses: [
          members.length === 0
            ? "It has no members."
            : `Its ${counted(members.length, "member", "members")} (${members.join(", ")}) leave it; they stay as people.`,
          granted.length === 0
            ? "It is granted no collection."
            : `Its ${counted(granted.length, "grant goes", "grants go")}: ${granted.map(({ name: collection }) => collection).join(", ")}; its members no longer read them through it.`,
        ],
        action: `Delete ${name}`,
      });
      if (!confirmed) return;
      try {
        await deleteGroup(this.token(), name);
        this.voice.say(`Deleted the group ${name}.`);
        await this.load();
        this.onChanged();
        this.name.focus();
      } catch (error) {
        this.voice.refuse(error.message);
      }
    });
    head.append(remove);
    item.append(this.#membersEditor(name, group.members ?? []));
    return item;
  }

  /** The members of `name`, each with a Remove button, a picker that adds a person, and
   *  Save members. */
  #membersEditor(name, members) {
    const fieldset = element("fieldset", { class: "members-form" });
    fieldset.append(element("legend", {}, `Members of ${name}`));
    const list = element("ul", { class: "member-list", "aria-label": `Members of ${name}` });
    const empty = element("p", { class: "muted" }, "No members yet.");
    const refreshEmpty = () => {
      empty.hidden = list.children.length > 0;
    };
    const picker = new NamePicker({ label: `Add a member to ${name}`, offers: () => offersNotIn(this.names.people(), chosen()), kind: "person" });
    const chosen = () => [...list.children].map((item) => item.dataset.username);
    const addMember = (username) => {
      const item = element("li", { class: "member", "data-username": username });
      const remove = element("button", { type: "button", class: "quiet", "aria-label": `Remove ${username} from ${name}` }, "Remove");
      remove.addEventListener("click", () => {
        const next = item.nextElementSibling ?? item.previousElementSibling;
        item.remove();
        refreshEmpty();
        (next?.querySelector("button") ?? picker.input).focus();
      });
      item.append(element("span", {}, username), remove);
      list.append(item);
      refreshEmpty();
    };
    for (const username of members) addMember(String(username));
    refreshEmpty();
    picker.onPick = (username) => {
      if (!chosen().includes(username)) addMember(username);
      picker.value = "";
    };
    const save = element("button", { type: "button", "aria-label": `Save the members of ${name}` }, "Save members");
    save.addEventListener("click", async () => {
      if (!picker.check()) {
        this.voice.refuse(`Pick a member of ${name} from the list: no one is named “${picker.input.value.trim()}”.`);
        picker.focus();
        return;
      }
      // A name typed in full but not taken with Enter is a member all the same.
      if (picker.value !== "") picker.onPick(picker.value);
      try {
        const saved = await putMembers(this.token(), name, chosen());
        this.voice.say(`Saved the members of ${name}: ${counted(saved.members.length, "person", "people")}.`);
        await keepingFocus(this.list, () => this.load());
      } catch (error) {
        this.voice.refuse(error.message);
        picker.focus();
      }
    });
    const pickerLabel = element("label", { for: picker.input.id }, "Add a member");
    fieldset.append(list, empty, pickerLabel, picker.root, save);
    return fieldset;
  }
}
