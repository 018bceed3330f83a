// The sign-in page: the form posts to /api/auth/login; on success the browser goes
// back to `next` (a path inside bor only), else the error banner says why. When an
// identity provider is configured (GET /api/auth/providers), a "Sign in with …" link
// starts its sign-in, coming back to `next` as well.

import { safeNext } from "./account.js";

const form = document.getElementById("login-form");
const username = document.getElementById("username");
const password = document.getElementById("password");
const button = document.getElementById("sign-in");
const banner = document.getElementById("login-error");
const elsewhere = document.getElementById("other-sign-in");
const providerLink = document.getElementById("sign-in-oidc");

/** `next` of this page's address, kept inside bor. */
function nextPath() {
  return safeNext(new URLSearchParams(window.location.search).get("next"));
}

/** Shows "Sign in with …" when bor offers an identity provider. */
async function offerProviders() {
  try {
    const response = await fetch("/api/auth/providers", { credentials: "same-origin" });
    if (!response.ok) return;
    const { oidc } = await response.json();
    if (!oidc) return;
    providerLink.textContent = `Sign in with ${oidc.name}`;
    providerLink.href = `${oidc.start}?next=${encodeURIComponent(nextPath())}`;
    elsewhere.hidden = false;
  } catch {
    // Without the list the password form is still there.
  }
}

offerProviders();

const MESSAGES = {
  invalid_credentials: "Wrong username or password.",
  too_many_attempts: "Too many failed sign-ins. Wait a few minutes, then try again.",
};

function showError(message) {
  banner.textContent = message;
  banner.hidden = false;
}

form.addEventListener("submit", async (event) => {
  event.preventDefault();
  banner.hidden = true;
  const empty = [username, password].filter((input) => input.value === "");
  for (const input of [username, password]) {
    input.setAttribute("aria-invalid", String(empty.includes(input)));
  }
  if (empty.length > 0) {
    showError("Enter your username and password.");
    empty[0].focus();
    return;
  }
  button.disabled = true;
  try {
    const response = await fetch("/api/auth/login", {
      method: "POST",
      credentials: "same-origin",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ username: username.value, password: password.value }),
    });
    if (response.ok) {
      window.location.assign(nextPath());
      return;
    }
    const body = await response.json().catch(() => null);
    const code = body?.error?.code;
    showError(MESSAGES[code] ?? body?.error?.message ?? `The server answered ${response.status}.`);
    password.value = "";
    password.setAttribute("aria-invalid", "true");
    password.focus();
  } catch {
    showError("Could not reach bor: check that it is running, then try again.");
  } finally {
    button.disabled = false;
  }
});
