// Who is signed in, signing out, and where to go back after signing in: shared by the
// sign-in, chat and admin pages.

/** The path to go back to after signing in: `next` when it is a path inside bor
 *  (one leading slash, no scheme or host), else the chat page. */
export function safeNext(next) {
  if (typeof next !== "string" || !next.startsWith("/") || next.startsWith("//")) return "/";
  if (next.includes("\\") || /[\u0000-\u001f]/.test(next)) return "/";
  try {
    const url = new URL(next, "http://bor.invalid");
    if (url.origin !== "http://bor.invalid") return "/";
    return url.pathname + url.search + url.hash;
  } catch {
    return "/";
  }
}

/** The sign-in page, coming back to where the browser is now. */
export function loginLocation() {
  const here = window.location.pathname + window.location.search + window.location.hash;
  return `/login?next=${encodeURIComponent(here)}`;
}

/** Sends the browser to sign in, and back here after. */
export function signInAgain() {
  window.location.assign(loginLocation());
}

/** Sends the browser to sign in and back when `response` says the session has ended
 *  (401), and throws; else returns `response`. */
export function unlessSignedOut(response) {
  if (response.status !== 401) return response;
  signInAgain();
  throw new Error("Your session has ended: sign in again.");
}

/** `GET /api/auth/me`: the user, or null when nobody is signed in. */
export async function currentUser() {
  const response = await fetch("/api/auth/me", { credentials: "same-origin" });
  if (response.status === 401) return null;
  if (!response.ok) throw new Error(`the server answered ${response.status}`);
  const body = await response.json();
  return body.user ?? null;
}

/** `POST /api/auth/logout`, then the sign-in page. */
export async function signOut() {
  await fetch("/api/auth/logout", { method: "POST", credentials: "same-origin" });
  window.location.assign("/login");
}
