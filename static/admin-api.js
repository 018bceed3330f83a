// The admin page's requests: the bearer token on every admin call, and every failure
// turned into an `ApiError` whose message can be shown as it is.

/** How long a health check may take before the page gives up on it. */
const HEALTH_TIMEOUT_MS = 15_000;
/** Storing a large document embeds every chunk: allow it time. */
const UPLOAD_TIMEOUT_MS = 300_000;
const DEFAULT_TIMEOUT_MS = 30_000;

/** What the page says for each refusal it explains itself. */
const MESSAGES = {
  unauthorized:
    "The server did not accept this admin token (401). Check the value of BOR_ADMIN_TOKEN and enter it again.",
  admin_disabled:
    "The admin API is disabled on this server (403). Set BOR_ADMIN_TOKEN in the service's environment, restart bor, then enter that token here.",
  body_too_large: "The file is too large for the server (413): a document may be at most 4 MiB.",
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

/** `GET /api/documents`: `[{id, title, chunks, created_at}]`. */
export async function fetchDocuments() {
  const { status, body } = await request("/api/documents");
  if (status === 200 && Array.isArray(body)) return body;
  throw failure(status, body);
}

/** `POST /api/admin/documents`: `{id, chunks, created}`, `created` false when the
 *  same content was already stored. */
export async function storeDocument(token, { title, content }) {
  const { status, body } = await request("/api/admin/documents", {
    token,
    method: "POST",
    json: { title, content },
    timeoutMs: UPLOAD_TIMEOUT_MS,
  });
  if ((status === 201 || status === 200) && typeof body?.chunks === "number") {
    return { id: body.id, chunks: body.chunks, created: status === 201 };
  }
  throw failure(status, body);
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
