// The account page (/account): the person's display name, their use of the last 30 days,
// their theme in this browser,
// their password, and their API keys (made with a name and an optional expiry, the key
// shown once with a copy button, each key's last use, revoked after a confirmation
// that names it) beside the apps they allowed by OAuth (MCP clients), revoked alike.

import { unlessSignedOut } from "./account.js";
import { mountAccountMenu, showName } from "./account-menu.js";
import { element, enableForm } from "./dom.js";

const THEME_KEY = "bor-theme";

/** What the page says for the refusals it explains itself. */
const MESSAGES = {
  invalid_credentials: "The current password is wrong.",
  invalid_password: "The new password needs 12 to 1024 characters.",
  too_many_attempts: "Too many failed attempts. Wait a few minutes, then try again.",
  invalid_name: "A key's name needs 1 to 100 characters.",
  invalid_username: "A display name needs 1 to 64 characters.",
};

const when = new Intl.DateTimeFormat(undefined, { dateStyle: "medium", timeStyle: "short" });

/** A request with the session cookie; `{status, body}` (body null when not JSON).
 *  A session that has ended sends the browser to the sign-in page and back. */
async function call(path, { method = "GET", json } = {}) {
  const init = { method, credentials: "same-origin", headers: {} };
  if (json !== undefined) {
    init.headers["Content-Type"] = "application/json";
    init.body = JSON.stringify(json);
  }
  let response;
  try {
    response = await fetch(path, init);
  } catch {
    throw new Error("Could not reach bor: check the connection, then try again.");
  }
  // The password's 401 is a wrong current password, not an ended session.
  if (path !== "/api/auth/password") unlessSignedOut(response);
  const body = await response.json().catch(() => null);
  return { status: response.status, body };
}

/** The sentence a person reads for a refusal. */
function refusal(body) {
  const code = body?.error?.code;
  return MESSAGES[code] ?? body?.error?.message ?? "Something went wrong: try again.";
}

function say(node, text, tone) {
  node.textContent = text;
  if (tone) node.dataset.tone = tone;
  else delete node.dataset.tone;
}

function mountProfile(user) {
  document.getElementById("profile-username").textContent = user.username;
  document.getElementById("profile-role").textContent = user.role === "admin" ? "an admin" : "a member";
  const input = document.getElementById("display-name");
  const status = document.getElementById("profile-status");
  input.value = user.display_name;
  const form = document.getElementById("profile-form");
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    input.removeAttribute("aria-invalid");
    try {
      const { status: code, body } = await call("/api/auth/me", {
        method: "PATCH",
        json: { display_name: input.value },
      });
      if (code !== 200) {
        input.setAttribute("aria-invalid", "true");
        say(status, refusal(body), "error");
        return;
      }
      input.value = body.user.display_name;
      document.querySelectorAll(".account-name").forEach((link) => showName(link, body.user.display_name));
      say(status, "Name saved.", "success");
    } catch (error) {
      say(status, error.message, "error");
    }
  });
  enableForm(form);
}

function mountTheme() {
  let current = "system";
  try {
    current = window.localStorage.getItem(THEME_KEY) ?? "system";
  } catch {
    // Storage refused: the system's theme, and the choice lasts this page only.
  }
  for (const radio of document.querySelectorAll('input[name="theme"]')) {
    radio.checked = radio.value === current;
    radio.addEventListener("change", () => {
      const root = document.documentElement;
      if (radio.value === "system") delete root.dataset.theme;
      else root.dataset.theme = radio.value;
      try {
        if (radio.value === "system") window.localStorage.removeItem(THEME_KEY);
        else window.localStorage.setItem(THEME_KEY, radio.value);
      } catch {
        // As above.
      }
    });
  }
}

function mountPassword() {
  const form = document.getElementById("password-form");
  const current = document.getElementById("account-current-password");
  const fresh = document.getElementById("account-new-password");
  const status = document.getElementById("password-status");
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    try {
      const { status: code, body } = await call("/api/auth/password", {
        method: "POST",
        json: { current: current.value, new: fresh.value },
      });
      if (code !== 204) {
        say(status, refusal(body), "error");
        return;
      }
      current.value = "";
      fresh.value = "";
      say(status, "Password changed. Your other sessions are signed out.", "success");
    } catch (error) {
      say(status, error.message, "error");
    }
  });
  enableForm(form);
}

/** An app connected by OAuth (`kind` "oauth"): its name is the client's. */
const isApp = (key) => key.kind === "oauth";

const count = new Intl.NumberFormat();

/** The caller's own use by day (`GET /api/usage`, their rows), newest first. */
async function mountUsage() {
  const summary = document.getElementById("usage-summary");
  const table = document.getElementById("usage-table");
  const { status, body } = await call("/api/usage");
  if (status !== 200) {
    summary.textContent = refusal(body);
    return;
  }
  const days = body.rows.filter((row) => row.dimension === "user").sort((a, b) => b.day.localeCompare(a.day));
  const total = days.reduce((sum, row) => sum + row.turns, 0);
  const tokens = days.reduce((sum, row) => sum + row.prompt_tokens + row.completion_tokens, 0);
  summary.textContent =
    total === 0
      ? "No questions in the last 30 days."
      : `${count.format(total)} ${total === 1 ? "question" : "questions"}, ${count.format(tokens)} tokens in all.`;
  table.tBodies[0].replaceChildren(
    ...days.map((row) => {
      const mark = row.estimated_share > 0 ? "≈ " : "";
      const tr = element("tr");
      tr.append(
        element("th", { scope: "row" }, row.day),
        element("td", {}, count.format(row.turns)),
        element("td", {}, mark + count.format(row.prompt_tokens)),
        element("td", {}, mark + count.format(row.completion_tokens)),
      );
      return tr;
    }),
  );
  table.hidden = days.length === 0;
}

function keyFacts(key) {
  const facts = isApp(key)
    ? ["an app you allowed to read as you", `allowed ${when.format(new Date(key.created_at))}`]
    : [`starts ${key.prefix}…`, `made ${when.format(new Date(key.created_at))}`];
  facts.push(key.last_used_at ? `last used ${when.format(new Date(key.last_used_at))}` : "never used");
  if (key.expires_at) {
    const expiry = new Date(key.expires_at);
    facts.push(`${expiry <= new Date() ? "expired" : "expires"} ${when.format(expiry)}`);
  }
  return facts.join(" · ");
}

function mountKeys() {
  const list = document.getElementById("key-list");
  const status = document.getElementById("keys-status");
  const form = document.getElementById("key-form");
  const name = document.getElementById("key-name");
  const expiry = document.getElementById("key-expiry");
  const shown = document.getElementById("new-key");
  const value = document.getElementById("new-key-value");

  async function refresh() {
    const { status: code, body } = await call("/api/keys");
    if (code !== 200) throw new Error(refusal(body));
    list.replaceChildren(...body.keys.map(keyRow));
    if (body.keys.length === 0) {
      list.append(element("li", { class: "person muted" }, "No keys yet."));
    }
  }

  function keyRow(key) {
    const row = element("li", { class: "person" });
    const text = element("div", { class: "key-text" });
    text.append(element("span", { class: "person-name" }, key.name), element("span", { class: "meta key-facts" }, keyFacts(key)));
    const revoke = element("button", { type: "button", class: "danger" }, "Revoke");
    revoke.setAttribute("aria-label", `Revoke ${key.name}`);
    const actions = element("div", { class: "person-actions" });
    actions.append(revoke);
    row.append(text, actions);
    revoke.addEventListener("click", () => {
      const confirm = element("div", { class: "confirm", role: "group", "aria-label": `Revoke ${key.name}?` });
      const yes = element("button", { type: "button", class: "danger" }, `Revoke ${key.name}`);
      const no = element("button", { type: "button" }, "Keep it");
      const buttons = element("div", { class: "buttons" });
      buttons.append(yes, no);
      const loss = isApp(key)
        ? `Revoke “${key.name}”? The app loses access at once; connecting it again asks you again.`
        : `Revoke “${key.name}”? Whatever uses it stops working at once; this cannot be undone.`;
      confirm.append(element("p", {}, loss), buttons);
      row.append(confirm);
      revoke.disabled = true;
      no.focus();
      no.addEventListener("click", () => {
        confirm.remove();
        revoke.disabled = false;
        revoke.focus();
      });
      yes.addEventListener("click", async () => {
        try {
          const { status: code, body } = await call(`/api/keys/${encodeURIComponent(key.id)}`, { method: "DELETE" });
          if (code !== 204 && code !== 404) throw new Error(refusal(body));
          await refresh();
          say(status, `Revoked ${key.name}.`, "success");
          name.focus();
        } catch (error) {
          say(status, error.message, "error");
        }
      });
    });
    return row;
  }

  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    name.removeAttribute("aria-invalid");
    const json = { name: name.value };
    if (expiry.value) json.expires_at = new Date(`${expiry.value}T23:59:59`).toISOString();
    try {
      const { status: code, body } = await call("/api/keys", { method: "POST", json });
      if (code !== 201) {
        if (body?.error?.code === "invalid_name") name.setAttribute("aria-invalid", "true");
        say(status, refusal(body), "error");
        return;
      }
      document.getElementById("new-key-label").textContent =
        `Your new key “${body.name}”. Copy it now: bor keeps only a hash of it and cannot show it again.`;
      value.textContent = body.key;
      shown.hidden = false;
      name.value = "";
      expiry.value = "";
      say(status, "");
      await refresh();
      document.getElementById("copy-key").focus();
    } catch (error) {
      say(status, error.message, "error");
    }
  });

  document.getElementById("copy-key").addEventListener("click", async () => {
    try {
      await navigator.clipboard.writeText(value.textContent);
      say(status, "Key copied.", "success");
    } catch {
      window.getSelection()?.selectAllChildren(value);
      say(status, "Copying was refused: the key is selected, copy it with the keyboard.", "error");
    }
  });
  document.getElementById("hide-key").addEventListener("click", () => {
    value.textContent = "";
    shown.hidden = true;
    name.focus();
  });
  enableForm(form);
  return refresh();
}

async function main() {
  const banner = document.getElementById("page-message");
  mountTheme();
  const me = await mountAccountMenu(document.getElementById("account"), { adminLink: true });
  if (!me) {
    banner.textContent = "Could not read who is signed in: reload the page.";
    banner.hidden = false;
    return;
  }
  mountProfile(me.user);
  if (me.session) mountPassword();
  else document.getElementById("password-section").hidden = true;
  try {
    await Promise.all([mountKeys(), mountUsage()]);
  } catch (error) {
    banner.textContent = error.message;
    banner.hidden = false;
  }
}

main();
