// The admin page's People panel: make a user (the generated password shown once), and
// for each user change the role, disable or enable, give a new password (made here and
// shown once) and delete. The server refuses to leave bor without an admin.

import { createUser, deleteUser, fetchUsers, updateUser } from "./admin-api.js";
import { element } from "./dom.js";

/** A new random password: 24 hex digits, as the server makes them. */
function newPassword() {
  const bytes = crypto.getRandomValues(new Uint8Array(12));
  return Array.from(bytes, (byte) => byte.toString(16).padStart(2, "0")).join("");
}

export class People {
  /** `token()` is the admin token in use ("" with a session); `say(text, tone)` sets
   *  the panel's status line. */
  constructor({ token, say }) {
    this.token = token;
    this.say = say;
    this.list = document.getElementById("people");
    this.form = document.getElementById("person-form");
    this.username = document.getElementById("person-username");
    this.role = document.getElementById("person-role");
    this.secret = document.getElementById("person-secret");
    this.form.addEventListener("submit", (event) => {
      event.preventDefault();
      this.#create();
    });
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
    this.secret.replaceChildren(
      element("span", {}, `Password for ${username} (shown this once; hand it over): `),
      element("code", {}, password),
    );
    this.secret.hidden = false;
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
    } catch (error) {
      this.say(error.message, "error");
    }
  }

  async #change(user, changes, done) {
    try {
      await updateUser(this.token(), user.id, changes);
      this.say(done);
      await this.load();
    } catch (error) {
      this.say(error.message, "error");
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
          await this.#change(user, { password }, `New password for ${user.username}.`);
          this.#reveal(user.username, password);
        });
        const remove = element("button", { type: "button", class: "danger" }, "Delete");
        remove.addEventListener("click", async () => {
          if (!window.confirm(`Delete ${user.username}, with their sessions and keys?`)) return;
          try {
            await deleteUser(this.token(), user.id);
            this.say(`Deleted ${user.username}.`);
            await this.load();
          } catch (error) {
            this.say(error.message, "error");
          }
        });
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
