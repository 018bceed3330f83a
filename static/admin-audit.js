// The admin page's audit trail (docs/PROTOCOL.md, "Audit trail"): a page of entries,
// newest first, filtered by action and by who, and older pages on demand. Entries are
// shown as text only.

import { fetchAudit } from "./admin-api.js";
import { element } from "./dom.js";

/** The actions in the words the page shows. */
const ACTIONS = [
  ["signed_in", "Signed in"],
  ["sign_in_failed", "Sign-in failed"],
  ["password_changed", "Password changed"],
  ["key_created", "API key made"],
  ["key_revoked", "API key revoked"],
  ["user_created", "Person added"],
  ["user_changed", "Person changed"],
  ["user_deleted", "Person deleted"],
  ["group_created", "Group made"],
  ["group_deleted", "Group deleted"],
  ["group_members_set", "Group members set"],
  ["collection_created", "Collection made"],
  ["collection_changed", "Collection changed"],
  ["collection_deleted", "Collection deleted"],
  ["grants_set", "Grants set"],
  ["document_added", "Document added"],
  ["document_deleted", "Document deleted"],
  ["oauth_client_registered", "OAuth client registered"],
  ["oauth_grant_allowed", "OAuth client allowed"],
  ["oauth_grant_denied", "OAuth client denied"],
  ["oauth_tokens_issued", "OAuth tokens issued"],
  ["oauth_tokens_revoked", "OAuth tokens revoked"],
  ["oauth_refresh_reused", "OAuth refresh token reused"],
  ["limit_set", "Limit set"],
  ["limit_removed", "Limit removed"],
];
const ACTION_WORDS = new Map(ACTIONS);

export class AuditTrail {
  /** `token()` is the admin token in use (empty with a session). */
  constructor({ token }) {
    this.token = token;
    this.form = document.getElementById("audit-filters");
    this.table = document.getElementById("audit-entries");
    this.status = document.getElementById("audit-status");
    this.older = document.getElementById("audit-older");
    this.nextBefore = null;
    const actions = document.getElementById("audit-action");
    for (const [value, words] of ACTIONS) actions.append(element("option", { value }, words));
    this.form.addEventListener("submit", (event) => {
      event.preventDefault();
      this.load();
    });
    this.older.addEventListener("click", () => this.load({ more: true }));
  }

  async load({ more = false } = {}) {
    const data = new FormData(this.form);
    const filters = {
      action: String(data.get("action") ?? ""),
      actor: String(data.get("actor") ?? "").trim(),
      before: more && this.nextBefore !== null ? String(this.nextBefore) : "",
    };
    this.status.textContent = "Loading the audit trail…";
    try {
      const page = await fetchAudit(this.token(), filters);
      const rows = page.entries.map(entryRow);
      if (more) this.table.tBodies[0].append(...rows);
      else this.table.tBodies[0].replaceChildren(...rows);
      this.table.hidden = this.table.tBodies[0].rows.length === 0;
      this.nextBefore = page.next_before ?? null;
      this.older.hidden = this.nextBefore === null;
      const shown = this.table.tBodies[0].rows.length;
      this.status.textContent = shown === 1 ? "1 entry." : `${shown} entries.`;
    } catch (error) {
      this.status.textContent = error.message;
    }
  }
}

function entryRow(entry) {
  const row = element("tr");
  row.append(
    element("td", {}, new Date(entry.at).toLocaleString()),
    element("td", {}, String(entry.actor ?? "")),
    element("td", {}, ACTION_WORDS.get(entry.action) ?? String(entry.action)),
    element("td", {}, String(entry.target ?? "")),
    element("td", {}, String(entry.address ?? "")),
  );
  return row;
}
