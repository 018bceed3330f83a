// The account controls of the chat, admin and account pages: who is signed in (a link
// to the account page, where the password, the theme and the API keys are), Sign out,
// and an admin's way to the admin page. Shown only for a person signed in with a
// session (not in `BOR_AUTH=off` mode); a page whose session is gone goes to the
// sign-in page. On the chat and admin pages they are a menu at phone width, opened from
// one button with the person's initial and name, so that the top bar keeps to one row.

import { signOut, unlessSignedOut } from "./account.js";
import { Disclosure } from "./disclosure.js";
import { element } from "./dom.js";

/** Fills `container` with the controls (with `adminLink`, a link to the admin page for
 *  an admin; with `compact`, behind a menu button at phone width); resolves with
 *  `{user, session}` from `GET /api/auth/me` (null when it could not be read). */
export async function mountAccountMenu(container, { adminLink = false, compact = false } = {}) {
  let me;
  try {
    // An ended session goes to sign in (the throw ends here: null).
    const response = unlessSignedOut(
      await fetch("/api/auth/me", { credentials: "same-origin" }),
    );
    if (!response.ok) return null;
    me = await response.json();
  } catch {
    return null;
  }
  if (!me?.session) return me;
  const name = element("a", { class: "account-name", href: "/account" });
  showName(name, me.user.display_name);
  const out = element("button", { type: "button", class: "quiet", id: "sign-out" }, "Sign out");
  out.addEventListener("click", () => signOut());
  const menu = compact ? element("div", { class: "account-menu", id: "account-menu" }) : container;
  menu.replaceChildren(name, out);
  if (adminLink && me.user.role === "admin") {
    menu.prepend(element("a", { class: "top-link", href: "/admin" }, "Admin page"));
  }
  if (compact) {
    const toggle = accountToggle(me.user.display_name);
    container.replaceChildren(toggle, menu);
    container.classList.add("compact");
    new Disclosure({ toggle, area: container, menu });
  }
  container.hidden = false;
  return me;
}

/** The button that opens the account menu: the person's initial in a circle, and their
 *  name where there is room. */
function accountToggle(displayName) {
  const toggle = element("button", {
    type: "button",
    id: "account-toggle",
    class: "quiet account-toggle",
    "aria-controls": "account-menu",
    "aria-label": `${displayName}, account menu`,
  });
  const initial = [...displayName.trim()][0] ?? "?";
  toggle.append(
    element("span", { class: "account-initial", "aria-hidden": "true" }, initial.toUpperCase()),
    element("span", { class: "account-toggle-name", "aria-hidden": "true" }, displayName),
  );
  return toggle;
}

/** Shows `displayName` in the link to the account page (its accessible name says
 *  where it goes). */
export function showName(link, displayName) {
  link.textContent = displayName;
  link.setAttribute("aria-label", `${displayName}, your account`);
}
