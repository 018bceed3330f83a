// The account controls of the chat, admin and account pages: who is signed in (a link
// to the account page, where the password, the theme and the API keys are), Sign out,
// and an admin's way to the admin page. Shown only for a person signed in with a
// session (not in `BOR_AUTH=off` mode); a page whose session is gone goes to the
// sign-in page.

import { signOut, unlessSignedOut } from "./account.js";
import { element } from "./dom.js";

/** Fills `container` with the controls (with `adminLink`, a link to the admin page for
 *  an admin); resolves with `{user, session}` from `GET /api/auth/me` (null when it
 *  could not be read). */
export async function mountAccountMenu(container, { adminLink = false } = {}) {
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
  container.replaceChildren(name, out);
  if (adminLink && me.user.role === "admin") {
    container.prepend(element("a", { class: "top-link", href: "/admin" }, "Admin page"));
  }
  container.hidden = false;
  return me;
}

/** Shows `displayName` in the link to the account page (its accessible name says
 *  where it goes). */
export function showName(link, displayName) {
  link.textContent = displayName;
  link.setAttribute("aria-label", `${displayName}, your account`);
}
