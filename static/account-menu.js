// The account controls of the chat and admin pages: who is signed in, Change password
// (a dialog), Sign out, and on the chat page an admin's way to the admin page. Shown only for a person signed in with a session (not in
// `BOR_AUTH=off` mode); a page whose session is gone goes to the sign-in page.

import { loginLocation, signOut } from "./account.js";
import { element } from "./dom.js";

const PASSWORD_MESSAGES = {
  invalid_credentials: "The current password is wrong.",
  invalid_password: "The new password needs 12 to 1024 characters.",
  too_many_attempts: "Too many failed attempts. Wait a few minutes, then try again.",
};

/** Fills `container` with the controls (with `adminLink`, a link to the admin page for
 *  an admin); resolves with `{user, session}` from `GET /api/auth/me` (null when it
 *  could not be read). */
export async function mountAccountMenu(container, { adminLink = false } = {}) {
  let me;
  try {
    const response = await fetch("/api/auth/me", { credentials: "same-origin" });
    if (response.status === 401) {
      window.location.assign(loginLocation());
      return null;
    }
    if (!response.ok) return null;
    me = await response.json();
  } catch {
    return null;
  }
  if (!me?.session) return me;
  const name = element("span", { class: "account-name" }, me.user.display_name);
  const change = element("button", { type: "button", class: "quiet" }, "Change password");
  const out = element("button", { type: "button", class: "quiet", id: "sign-out" }, "Sign out");
  const dialog = passwordDialog();
  change.addEventListener("click", () => dialog.open());
  out.addEventListener("click", () => signOut());
  container.replaceChildren(name, change, out, dialog.node);
  if (adminLink && me.user.role === "admin") {
    container.prepend(element("a", { class: "top-link", href: "/admin" }, "Admin page"));
  }
  container.hidden = false;
  return me;
}

/** The Change password dialog: current and new password, its error line. */
function passwordDialog() {
  const node = element("dialog", { class: "dialog", "aria-labelledby": "password-heading" });
  const form = element("form", { novalidate: "" });
  const current = element("input", { type: "password", id: "current-password", autocomplete: "current-password" });
  const fresh = element("input", { type: "password", id: "new-password", autocomplete: "new-password", "aria-describedby": "new-password-hint" });
  const error = element("p", { class: "dialog-error", role: "alert" });
  error.hidden = true;
  const cancel = element("button", { type: "button", class: "quiet" }, "Cancel");
  const save = element("button", { type: "submit", class: "primary" }, "Change password");
  const buttons = element("div", { class: "dialog-buttons" });
  buttons.append(cancel, save);
  form.append(
    element("h2", { id: "password-heading" }, "Change your password"),
    element("label", { for: "current-password" }, "Current password"),
    current,
    element("label", { for: "new-password" }, "New password"),
    fresh,
    element("p", { id: "new-password-hint" }, "12 to 1024 characters. Your other sessions are signed out."),
    error,
    buttons,
  );
  node.append(form);
  cancel.addEventListener("click", () => node.close());
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    error.hidden = true;
    save.disabled = true;
    try {
      const response = await fetch("/api/auth/password", {
        method: "POST",
        credentials: "same-origin",
        headers: { "Content-Type": "application/json" },
        body: JSON.stringify({ current: current.value, new: fresh.value }),
      });
      if (response.status === 204) {
        node.close();
        return;
      }
      const body = await response.json().catch(() => null);
      const code = body?.error?.code;
      error.textContent = PASSWORD_MESSAGES[code] ?? body?.error?.message ?? `The server answered ${response.status}.`;
      error.hidden = false;
    } catch {
      error.textContent = "Could not reach bor: try again.";
      error.hidden = false;
    } finally {
      save.disabled = false;
    }
  });
  return {
    node,
    open() {
      current.value = "";
      fresh.value = "";
      error.hidden = true;
      node.showModal();
      current.focus();
    },
  };
}
