// The admin page's requests: the bearer token on every admin call, and every failure
// turned into an `ApiError` whose message can be shown as it is.

/** How long a health check may take before the page gives up on it. */
const HEALTH_TIMEOUT_MS = 15_000;
const DEFAULT_TIMEOUT_MS = 30_000;
/** An upload whose bytes stop going up for this long is given up (the server answers
 *  a stall of its own `BOR_REQUEST_BODY_TIMEOUT` with 408; this covers a lost network). */
const UPLOAD_STALL_MS = 120_000;
/** Once the bytes are up the server reads the file and embeds every chunk: allow it time. */
const UPLOAD_ANSWER_MS = 300_000;

/** What the page says for each refusal it explains itself. */
const MESSAGES = {
  unauthorized:
    "The server did not accept this admin token (401). Check the value of BOR_ADMIN_TOKEN and enter it again.",
  admin_disabled:
    "The admin API is disabled on this server (403). Set BOR_ADMIN_TOKEN in the service's environment, restart bor, then enter that token here.",
  unreachable: "Could not reach the service: check that bor is running, then try again.",
  timeout: "The service did not answer in time: try again.",
};

/** A failed request: `code` is the server's error code, or "unreachable"/"timeout". */
export class ApiError extends Error {
  constructor(status, code, message) {
    super(message);
    this.status = status;
    this.code = code;
  }

  /** True when the token is wrong or the admin API is off: the page asks again. */
  get isAuthFailure() {
    return this.code === "unauthorized" || this.code === "admin_disabled";
  }
}

/** `GET /api/admin/health`: the report, for 200 and for 503 (`down`) alike. */
export async function fetchHealth(token) {
  const { status, body } = await request("/api/admin/health", { token, timeoutMs: HEALTH_TIMEOUT_MS });
  if (typeof body?.status === "string" && (status === 200 || status === 503)) return body;
  throw failure(status, body);
}

/**
 * `POST /api/admin/documents` into `collection` with `file` as the one `file` part of a
 * multipart body:
 * resolves with the server's report, `{documents: [{file, id, title, chunks, status}],
 * skipped: [{file, reason}]}`, each reason made a sentence. `onProgress(sent, total)`
 * follows the bytes going up; `onSent()` says they are all there and the server is
 * reading the file.
 *
 * XMLHttpRequest rather than fetch: only it reports the progress of a request body.
 */
export function uploadFile(token, file, collection, { onProgress, onSent }) {
  const body = new FormData();
  // The server reads the collection only from a part before the files.
  body.append("collection", collection);
  body.append("file", file, file.name);
  return new Promise((resolve, reject) => {
    const xhr = new XMLHttpRequest();
    let watchdog;
    /** (Re)starts the clock: no news for `ms` gives the upload up. */
    const watch = (ms) => {
      clearTimeout(watchdog);
      watchdog = setTimeout(() => {
        xhr.abort();
        reject(new ApiError(0, "timeout", MESSAGES.timeout));
      }, ms);
    };
    xhr.upload.addEventListener("progress", (event) => {
      watch(UPLOAD_STALL_MS);
      if (event.lengthComputable) onProgress(event.loaded, event.total);
    });
    xhr.upload.addEventListener("load", () => {
      watch(UPLOAD_ANSWER_MS);
      onSent();
    });
    xhr.addEventListener("load", () => {
      clearTimeout(watchdog);
      const report = parseJson(xhr.responseText);
      if (xhr.status === 200 && Array.isArray(report?.documents) && Array.isArray(report?.skipped)) {
        const skipped = report.skipped.map(({ file, reason }) => ({
          file,
          reason: asSentence(String(reason)),
        }));
        resolve({ documents: report.documents, skipped });
      } else {
        reject(failure(xhr.status, report));
      }
    });
    xhr.addEventListener("error", () => {
      clearTimeout(watchdog);
      reject(new ApiError(0, "unreachable", MESSAGES.unreachable));
    });
    xhr.open("POST", "/api/admin/documents");
    xhr.setRequestHeader("Accept", "application/json");
    if (token) xhr.setRequestHeader("Authorization", `Bearer ${token}`);
    watch(UPLOAD_STALL_MS);
    xhr.send(body);
  });
}

/** `GET /api/admin/watched-files`: `{imported, skipped, removed, skipped_files: [{path, reason}]}`. */
export async function fetchWatchedFiles(token) {
  const { status, body } = await request("/api/admin/watched-files", { token });
  if (status === 200 && Array.isArray(body?.skipped_files)) return body;
  throw failure(status, body);
}

/** A fetch of pages reads and embeds each one: allow it time. */
const URL_ANSWER_MS = 600_000;

/**
 * `POST /api/admin/documents/url` `{url, crawl?, collection}`: resolves with the server's
 * report, `{documents: [{url, id, title, chunks, status}], skipped: [{url, reason}], notes}`.
 */
export async function addFromUrl(token, url, crawl, collection) {
  const body = crawl > 1 ? { url, crawl, collection } : { url, collection };
  const { status, body: report } = await request("/api/admin/documents/url", {
    token,
    method: "POST",
    json: body,
    timeoutMs: URL_ANSWER_MS,
  });
  if (status === 200 && Array.isArray(report?.documents) && Array.isArray(report?.skipped)) {
    return report;
  }
  throw failure(status, report);
}

/** `DELETE /api/admin/documents/{id}`; resolves with false when it was already gone. */
export async function deleteDocument(token, id) {
  const { status, body } = await request(`/api/admin/documents/${encodeURIComponent(id)}`, {
    token,
    method: "DELETE",
  });
  if (status === 204) return true;
  if (status === 404) return false;
  throw failure(status, body);
}

/** `GET /api/admin/users`: `[{id, username, display_name, role, disabled, created_at, groups}]`. */
export async function fetchUsers(token) {
  const { status, body } = await request("/api/admin/users", { token });
  if (status === 200 && Array.isArray(body?.users)) return body.users;
  throw failure(status, body);
}

/** `GET /api/admin/users/{id}/keys`: the person's API keys. */
export async function fetchUserKeys(token, id) {
  const { status, body } = await request(`/api/admin/users/${encodeURIComponent(id)}/keys`, { token });
  if (status === 200 && Array.isArray(body?.keys)) return body.keys;
  throw failure(status, body);
}

/**
 * `GET /api/admin/documents`: a page of documents, newest first, `{documents: [{id,
 * title, source, content_type, created_at, collection, chunks, added_by, origin}],
 * total, next_cursor}`; `filters` as the route takes them (`q`, `collection`, `kind`,
 * `added_by`, `since`, `until`, `cursor`, `limit`), the empty ones left out.
 */
export async function fetchAdminDocuments(token, filters = {}) {
  const query = new URLSearchParams(Object.entries(filters).filter(([, value]) => value !== "" && value != null));
  const { status, body } = await request(`/api/admin/documents?${query}`, { token });
  if (status === 200 && Array.isArray(body?.documents)) return body;
  throw failure(status, body);
}

/** `POST /api/admin/users`: `{user, password}` (the generated password, shown once). */
export async function createUser(token, user) {
  const { status, body } = await request("/api/admin/users", { token, method: "POST", json: user });
  if (status === 201 && body?.user) return body;
  throw failure(status, body);
}

/** `PATCH /api/admin/users/{id}` with `changes`: the user as they are now. */
export async function updateUser(token, id, changes) {
  const path = `/api/admin/users/${encodeURIComponent(id)}`;
  const { status, body } = await request(path, { token, method: "PATCH", json: changes });
  if (status === 200 && body?.id) return body;
  throw failure(status, body);
}

/** `DELETE /api/admin/users/{id}`. */
export async function deleteUser(token, id) {
  const path = `/api/admin/users/${encodeURIComponent(id)}`;
  const { status, body } = await request(path, { token, method: "DELETE" });
  if (status !== 204) throw failure(status, body);
}

/** `GET /api/admin/collections`: `[{name, description, documents, chunks, created_at,
 *  grants: [{user | group, access}]}]`, every collection. */
export async function fetchCollections(token) {
  const { status, body } = await request("/api/admin/collections", { token });
  if (status === 200 && Array.isArray(body?.collections)) return body.collections;
  throw failure(status, body);
}

/** `POST /api/admin/collections` `{name, description}`: the collection made. */
export async function createCollection(token, name, description) {
  const { status, body } = await request("/api/admin/collections", {
    token,
    method: "POST",
    json: { name, description },
  });
  if (status === 201 && body?.collection) return body.collection;
  throw failure(status, body);
}

/** `PATCH /api/admin/collections/{name}` `{description}`: the collection as it is now. */
export async function updateCollection(token, name, description) {
  const { status, body } = await request(collectionPath(name), {
    token,
    method: "PATCH",
    json: { description },
  });
  if (status === 200 && body?.collection) return body.collection;
  throw failure(status, body);
}

/** `DELETE /api/admin/collections/{name}`, with its documents and their chunks. */
export async function deleteCollection(token, name) {
  const { status, body } = await request(collectionPath(name), { token, method: "DELETE" });
  if (status !== 204) throw failure(status, body);
}

/** `PUT /api/admin/collections/{name}/grants`: the grants become exactly `grants`. */
export async function putGrants(token, name, grants) {
  const { status, body } = await request(`${collectionPath(name)}/grants`, {
    token,
    method: "PUT",
    json: grants,
  });
  if (status === 200 && body?.collection) return body.collection;
  throw failure(status, body);
}

/** `GET /api/admin/groups`: `[{name, built_in, members: [username]}]`. */
export async function fetchGroups(token) {
  const { status, body } = await request("/api/admin/groups", { token });
  if (status === 200 && Array.isArray(body?.groups)) return body.groups;
  throw failure(status, body);
}

/** `POST /api/admin/groups` `{name}`: the group made. */
export async function createGroup(token, name) {
  const { status, body } = await request("/api/admin/groups", { token, method: "POST", json: { name } });
  if (status === 201 && body?.group) return body.group;
  throw failure(status, body);
}

/** `DELETE /api/admin/groups/{name}`, with its memberships and grants. */
export async function deleteGroup(token, name) {
  const { status, body } = await request(groupPath(name), { token, method: "DELETE" });
  if (status !== 204) throw failure(status, body);
}

/** `PUT /api/admin/groups/{name}/members`: the members become exactly `usernames`. */
export async function putMembers(token, name, usernames) {
  const { status, body } = await request(`${groupPath(name)}/members`, {
    token,
    method: "PUT",
    json: usernames,
  });
  if (status === 200 && body?.group) return body.group;
  throw failure(status, body);
}

const collectionPath = (name) => `/api/admin/collections/${encodeURIComponent(name)}`;
const groupPath = (name) => `/api/admin/groups/${encodeURIComponent(name)}`;

/**
 * `POST /api/search`: `{grounded, results: [{chunk_id, document_id, title, heading, page,
 * snippet, score, signals: {vector, full_text, fused, rerank?}}], rerank_error?,
 * timings_ms: {embedding, retrieval, rerank?}}`.
 */
export async function searchKnowledge(query, topK) {
  const { status, body } = await request("/api/search", {
    method: "POST",
    json: { query, top_k: topK },
  });
  if (status === 200 && Array.isArray(body?.results)) return body;
  throw failure(status, body);
}

async function request(path, { token, method = "GET", json, timeoutMs = DEFAULT_TIMEOUT_MS } = {}) {
  const headers = { Accept: "application/json" };
  if (token) headers.Authorization = `Bearer ${token}`;
  if (json !== undefined) headers["Content-Type"] = "application/json";
  let response;
  let text;
  try {
    response = await fetch(path, {
      method,
      headers,
      body: json === undefined ? undefined : JSON.stringify(json),
      cache: "no-store",
      signal: AbortSignal.timeout(timeoutMs),
    });
    text = await response.text();
  } catch (error) {
    const code = error?.name === "TimeoutError" ? "timeout" : "unreachable";
    throw new ApiError(0, code, MESSAGES[code]);
  }
  return { status: response.status, body: parseJson(text) };
}

/** The `ApiError` for an answer that is not the one wanted. */
function failure(status, body) {
  const code = typeof body?.error?.code === "string" ? body.error.code : `http_${status}`;
  const message =
    MESSAGES[code] ??
    (typeof body?.error?.message === "string"
      ? asSentence(body.error.message)
      : `The service answered with HTTP ${status}.`);
  return new ApiError(status, code, message);
}

function parseJson(text) {
  try {
    return text === "" ? null : JSON.parse(text);
  } catch {
    return null;
  }
}

/** The server's messages are lowercase phrases: "the request body is …" → "The request body is ….". */
function asSentence(text) {
  const trimmed = text.trim();
  const capitalised = trimmed.charAt(0).toUpperCase() + trimmed.slice(1);
  return /[.!?]$/.test(capitalised) ? capitalised : `${capitalised}.`;
}

/**
 * `GET /api/admin/feedback` with `filters` (`rating`, `reason`, `collection`, `since`,
 * `limit`; empty ones left out): `{feedback: [...], by_collection: [...]}`.
 */
export async function fetchFeedback(token, filters = {}) {
  const query = new URLSearchParams(Object.entries(filters).filter(([, value]) => value));
  const { status, body } = await request(`/api/admin/feedback?${query}`, { token });
  if (status === 200 && Array.isArray(body?.feedback)) return body;
  throw failure(status, body);
}

/** `POST /api/admin/feedback/{turn_id}/search`: `POST /api/search`'s answer, as the asker. */
export async function searchAsAsker(token, turnId, query, topK) {
  const { status, body } = await request(`${feedbackPath(turnId)}/search`, {
    token,
    method: "POST",
    json: { query, top_k: topK },
  });
  if (status === 200 && Array.isArray(body?.results)) return body;
  throw failure(status, body);
}

/** `PUT /api/admin/feedback/{turn_id}/expected`. */
export async function putExpected(token, turnId, chunkIds) {
  const { status, body } = await request(`${feedbackPath(turnId)}/expected`, {
    token,
    method: "PUT",
    json: { chunk_ids: chunkIds },
  });
  if (status === 200) return body;
  throw failure(status, body);
}

/** `POST /api/admin/eval/feedback`: `{run, queries, previous}`. */
export async function runFeedbackEval(token) {
  const { status, body } = await request("/api/admin/eval/feedback", {
    token,
    method: "POST",
    timeoutMs: 120_000,
  });
  if (status === 200 && body?.run) return body;
  throw failure(status, body);
}

/** `GET /api/admin/eval/feedback`: `{runs}`, newest first. */
export async function fetchEvalRuns(token) {
  const { status, body } = await request("/api/admin/eval/feedback", { token });
  if (status === 200 && Array.isArray(body?.runs)) return body.runs;
  throw failure(status, body);
}

const feedbackPath = (turnId) => `/api/admin/feedback/${encodeURIComponent(turnId)}`;

/** `GET /api/admin/audit` with `filters` (`action`, `actor`, `before`; empty ones left
 *  out): `{entries, next_before}`. */
export async function fetchAudit(token, filters = {}) {
  const query = new URLSearchParams(Object.entries(filters).filter(([, value]) => value));
  const { status, body } = await request(`/api/admin/audit?${query}`, { token });
  if (status === 200 && Array.isArray(body?.entries)) return body;
  throw failure(status, body);
}

/** `GET /api/admin/limits`: every limit. */
export async function fetchLimits(token) {
  const { status, body } = await request("/api/admin/limits", { token });
  if (status === 200 && Array.isArray(body?.limits)) return body.limits;
  throw failure(status, body);
}

/** `POST /api/admin/limits`: `{user|group|key|everyone, turns_per_day?, tokens_per_day?,
 *  tokens_per_month?}`; the limit set. */
export async function setLimit(token, limit) {
  const { status, body } = await request("/api/admin/limits", { token, method: "POST", json: limit });
  if (status === 201 && body?.id !== undefined) return body;
  throw failure(status, body);
}

/** `DELETE /api/admin/limits/{id}`. */
export async function deleteLimit(token, id) {
  const { status, body } = await request(`/api/admin/limits/${encodeURIComponent(id)}`, {
    token,
    method: "DELETE",
  });
  if (status !== 204) throw failure(status, body);
}

/** `GET /api/admin/usage`: `{since, until, rows}`. */
export async function fetchUsage(token) {
  const { status, body } = await request("/api/admin/usage", { token });
  if (status === 200 && Array.isArray(body?.rows)) return body;
  throw failure(status, body);
}
