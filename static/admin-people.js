// The admin page's People panel: make a user (the generated password shown once, with
// a Copy button, until Done or another section), and for each user change the role,
// disable or enable, give a new password (made here and shown alike) and delete (after
// a confirmation that names what goes with them). The server refuses to leave bor
// without an admin.

import {
  createUser,
  deleteUser,
  fetchAdminDocuments,
  fetchCollections,
  fetchUserKeys,
  fetchUsers,
  updateUser,
} from "./admin-api.js";
import { counted } from "./admin-collections.js";
import { confirmLoss } from "./admin-confirm.js";
import { copyText } from "./copy.js";
import { element } from "./dom.js";

/** A new random password: 24 hex digits, as the server makes them. */
function newPassword() {
  const bytes = crypto.getRandomValues(new Uint8Array(12));
  return Array.from(bytes, (byte) => byte.toString(16).padStart(2, "0")).join("");
}

export class People {
  /** `token()` is the admin token in use ("" with a session); `say(text, tone)` sets
   *  the panel's status line; `onChanged()` hears a person made or deleted. */
  constructor({ token, say, onChanged }) {
    this.token = token;
    this.say = say;
    this.onChanged = onChanged;
    this.list = document.getElementById("people");
    this.form = document.getElementById("person-form");
    this.username = document.getElementById("person-username");
    this.role = document.getElementById("person-role");
    this.secret = document.getElementById("person-secret");
    this.secretLabel = document.getElementById("person-secret-label");
    this.secretValue = document.getElementById("person-secret-value");
    this.secretStatus = document.getElementById("person-secret-status");
    this.form.addEventListener("submit", (event) => {
      event.preventDefault();
      this.#create();
    });
    document.getElementById("person-secret-copy").addEventListener("click", async () => {
      this.secretStatus.textContent = await copyText(this.secretValue.textContent, this.secretValue);
    });
    document.getElementById("person-secret-done").addEventListener("click", () => {
      this.forgetSecret();
      this.username.focus();
    });
  }

  /** Takes the one-time password off the screen (Done, or another section opened). */
  forgetSecret() {
    this.secret.hidden = true;
    this.secretLabel.textContent = "";
    this.secretValue.textContent = "";
    this.secretStatus.textContent = "";
  }

  async load() {
    try {
      this.#show(await fetchUsers(this.token()));
    } catch (error) {
      this.say(`Could not list the people. ${error.message}`, "error");
    }
  }

  /** Shows `password` for `username`, once: it is not kept anywhere. */
  #reveal(username, password) {
    this.secretLabel.textContent = `Password for ${username}: shown this once, hand it over.`;
    this.secretValue.textContent = password;
    this.secretStatus.textContent = "";
    this.secret.hidden = false;
    document.getElementById("person-secret-copy").focus();
  }

  /** The sentences saying what deleting `user` takes with it. */
  async #losses(user) {
    const [keys, collections, added] = await Promise.all([
      fetchUserKeys(this.token(), user.id),
      fetchCollections(this.token()),
      fetchAdminDocuments(this.token(), { added_by: user.id, limit: 1 }),
    ]);
    const granted = collections.filter((collection) =>
      (collection.grants ?? []).some((grant) => grant.user === user.username),
    );
    const groups = user.groups ?? [];
    const losses = [
      `Their ${counted(keys.length, "API key stops", "API keys stop")} working, their sessions end and their conversations are deleted.`,
    ];
    if (groups.length > 0) losses.push(`They leave ${counted(groups.length, "group", "groups")}: ${groups.join(", ")}.`);
    if (granted.length > 0) {
      losses.push(
        `${counted(granted.length, "grant", "grants")} to them ${granted.length === 1 ? "goes" : "go"}: ${granted.map(({ name }) => name).join(", ")}.`,
      );
    }
    if (added.total > 0) {
      losses.push(`The ${counted(added.total, "document", "documents")} they added ${added.total === 1 ? "stays" : "stay"}.`);
    }
    return losses;
  }

  async #remove(user) {
    let losses;
    try {
      losses = await this.#losses(user);
    } catch (error) {
      this.say(error.message, "error");
      return;
    }
    const confirmed = await confirmLoss({
      title: `Delete ${user.username}?`,
      losses,
      action: `Delete ${user.username}`,
    });
    if (!confirmed) return;
    try {
      await deleteUser(this.token(), user.id);
      this.say(`Deleted ${user.username}.`);
      await this.load();
      this.onChanged();
      this.username.focus();
    } catch (error) {
      this.say(error.message, "error");
    }
  }

  async #create() {
    const username = this.username.value.trim();
    if (username === "") {
      this.say("Enter a username first.", "error");
      this.username.focus();
      return;
    }
    try {
      const made = await createUser(this.token(), { username, role: this.role.value });
      this.username.value = "";
      this.#reveal(made.user.username, made.password);
      this.say(`Made ${made.user.username}.`);
      await this.load();
      this.onChanged();
    } catch (error) {
      this.say(error.message, "error");
    }
  }

  /** Changes `user`; true when the server took the change. */
  async #change(user, changes, done) {
    try {
      await updateUser(this.token(), user.id, changes);
      this.say(done);
      await this.load();
      return true;
    } catch (error) {
      this.say(error.message, "error");
      return false;
    }
  }

  #show(users) {
    this.list.replaceChildren(
      ...users.map((user) => {
        const item = element("li", { class: "person" });
        const facts = `${user.role}${user.disabled ? ", disabled" : ""}`;
        item.append(
          element("span", { class: "person-name" }, user.display_name),
          element("span", { class: "muted" }, ` ${user.username} — ${facts}`),
        );
        const buttons = element("div", { class: "person-actions" });
        const other = user.role === "admin" ? "member" : "admin";
        const roleButton = element("button", { type: "button" }, `Make ${other}`);
        roleButton.addEventListener("click", () =>
          this.#change(user, { role: other }, `${user.username} is now ${other === "admin" ? "an admin" : "a member"}.`),
        );
        const disable = element("button", { type: "button" }, user.disabled ? "Enable" : "Disable");
        disable.addEventListener("click", () =>
          this.#change(user, { disabled: !user.disabled }, `${user.username} ${user.disabled ? "enabled" : "disabled"}.`),
        );
        const reset = element("button", { type: "button" }, "New password");
        reset.addEventListener("click", async () => {
          const password = newPassword();
          if (await this.#change(user, { password }, `New password for ${user.username}.`)) {
            this.#reveal(user.username, password);
          }
        });
        const remove = element("button", { type: "button", class: "danger" }, "Delete");
        remove.addEventListener("click", () => this.#remove(user));
        for (const button of [roleButton, disable, reset, remove]) {
          button.setAttribute("aria-label", `${button.textContent}: ${user.username}`);
        }
        buttons.append(roleButton, disable, reset, remove);
        item.append(buttons);
        return item;
      }),
    );
  }
}
