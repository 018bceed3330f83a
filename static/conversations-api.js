// The chat page's calls to the conversations API (docs/PROTOCOL.md, "Conversations"),
// every failure turned into an `ApiError` whose message can be shown as it is.

import { conversationApiHref, listHref } from "./conversation.js";

const UNREACHABLE = "Could not reach the service — check your connection and try again.";

/** A failed request: `status` is the HTTP status (0 when the service was not reached),
 *  `code` the server's error code. */
export class ApiError extends Error {
  constructor(status, code, message) {
    super(message);
    this.status = status;
    this.code = code;
  }
}

/** One page of the list: `[{id, title, created_at, updated_at, turns, pinned,
 *  archived}]`, newest first (`archived`, `pinned`: as `listHref` takes them). */
export function listConversations({ query, before, limit, archived, pinned, signal }) {
  return request(listHref({ query, before, limit, archived, pinned }), { signal });
}

/** `{id, title, created_at, updated_at, turns: [...]}`; `ApiError` 404 when absent. */
export function fetchConversation(id, { signal } = {}) {
  return request(conversationApiHref(id), { signal });
}

/** Renames, pins or archives a conversation (`changes`: any of `{title, pinned,
 *  archived}`); resolves with its new summary. */
export function changeConversation(id, changes) {
  return request(conversationApiHref(id), {
    method: "PATCH",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify(changes),
  });
}

export function deleteConversation(id) {
  return request(conversationApiHref(id), { method: "DELETE" });
}

/** The JSON body of a successful response (null for 204); rejects with an `ApiError`,
 *  or the `AbortError` of an aborted request. */
async function request(href, init = {}) {
  let response;
  try {
    response = await fetch(href, { ...init, headers: { Accept: "application/json", ...init.headers } });
  } catch (error) {
    if (error?.name === "AbortError") throw error;
    throw new ApiError(0, "unreachable", UNREACHABLE);
  }
  if (response.status === 204) return null;
  let body = null;
  try {
    body = await response.json();
  } catch {
    // Not JSON: the status says what happened.
  }
  if (response.ok && body !== null) return body;
  const error = body?.error;
  throw new ApiError(
    response.status,
    typeof error?.code === "string" ? error.code : "http",
    typeof error?.message === "string"
      ? error.message
      : `The service refused the request (HTTP ${response.status}) — please try again.`,
  );
}
