// The open conversation and the server's conversations (docs/PROTOCOL.md,
// "Conversations"): its exchanges (a question and what came back), where the page's URL
// names it, the body of a turn that continues it, and the addresses of the
// conversations API. Pure: no DOM, no fetch.

/** The query parameter naming the open conversation: `/?c=<uuid>`. A query rather than
 *  the fragment, because the fragment is the page's own in-page navigation (the skip
 *  link's `#message` would replace it); the server serves `/` for any query string. */
export const CONVERSATION_PARAM = "c";

/** Conversations asked for per page of the list (the server's default). */
export const PAGE_SIZE = 50;

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * One question and its answer. `turnId` names its turn once the server has;
 * `status` is `streaming`, `done`, `stopped` or `error`;
 * `sources` are `{n, document_id, title, chunk_id, score, heading, snippet, page}` from
 * the `done` frame (docs/PROTOCOL.md, "Sources and citations"), which also sets
 * `deflected` and `truncated`; `feedback` is the asker's rating of that turn.
 * `versions` are the versions of its turn, oldest first, itself among them (one array
 * that every version shares; docs/PROTOCOL.md, "Versions of a turn").
 */
export function newExchange(question) {
  const exchange = { question, turnId: null, answer: "", thinking: "", sources: [], status: "streaming", error: "" };
  exchange.versions = [exchange];
  return exchange;
}

/** A new version of `exchange`'s turn asking `question`, added after its versions. */
export function newVersion(exchange, question) {
  const version = newExchange(question);
  version.versions = exchange.versions;
  version.versions.push(version);
  return version;
}

/** A stored turn of `GET /api/conversations/{id}` as the exchange on screen: its
 *  chosen (newest) version, with every version of it. */
export function exchangeOfTurn(turn) {
  const rows = Array.isArray(turn?.versions) && turn.versions.length > 0 ? turn.versions : [turn];
  const versions = rows.map(exchangeOfRow);
  for (const version of versions) version.versions = versions;
  return versions.at(-1);
}

function exchangeOfRow(row) {
  return {
    ...newExchange(String(row?.question ?? "")),
    turnId: typeof row?.turn_id === "string" ? row.turn_id : null,
    answer: String(row?.answer ?? ""),
    sources: Array.isArray(row?.sources) ? row.sources : [],
    status: row?.status === "stopped" ? "stopped" : "done",
    deflected: row?.path === "deflected",
    feedback: row?.feedback ?? null,
  };
}

/** Whether `turnId` is one of the versions of `exchange`'s turn. */
export function hasVersion(exchange, turnId) {
  return exchange.versions.some((version) => version.turnId === turnId);
}

/** Whether an exchange left a turn on the server: a turn that ended in `error` (or
 *  never reached it) has no row, so it is not part of the stored conversation. */
export function isStored(exchange) {
  return exchange.status === "done" || exchange.status === "stopped";
}

export function isConversationId(value) {
  return typeof value === "string" && UUID.test(value);
}

/** The conversation a page address (`location.search`) names, or null. */
export function conversationIdOf(search) {
  const id = new URLSearchParams(search).get(CONVERSATION_PARAM);
  return isConversationId(id) ? id.toLowerCase() : null;
}

/** The page address of conversation `id`; `/` for a new chat (`id` null). */
export function conversationHref(id) {
  return id === null ? "/" : `/?${new URLSearchParams({ [CONVERSATION_PARAM]: id })}`;
}

/** The body of `POST /api/chat`: the conversation it continues, when there is one, is
 *  its history (the server refuses `history` beside it); `collections`, when given, are
 *  the only ones searched; `versionOf`, when given, names the turn asked again. */
export function chatBody(message, conversationId, collections = null, versionOf = null) {
  const body = conversationId === null ? { message } : { message, conversation_id: conversationId };
  if (collections !== null) body.collections = collections;
  if (versionOf !== null) body.version_of = versionOf;
  return body;
}

/** `GET /api/conversations` for the words of `query`, the page before `before` (an
 *  `updated_at`, or null for the first page); the `archived` ones instead of the others;
 *  with `pinned` true or false, only the pinned ones or only the others. */
export function listHref({ query = "", before = null, limit = PAGE_SIZE, archived = false, pinned = null } = {}) {
  const params = new URLSearchParams({ limit: String(limit) });
  if (query.trim() !== "") params.set("q", query.trim());
  if (archived) params.set("archived", "true");
  if (pinned !== null) params.set("pinned", String(pinned));
  if (before !== null) {
    params.set("before", before.updated_at);
    params.set("before_id", before.id);
  }
  return `/api/conversations?${params}`;
}

export function conversationApiHref(id) {
  return `/api/conversations/${encodeURIComponent(id)}`;
}

/** The download of conversation `id` as `format`, `markdown` or `json`. */
export function exportHref(id, format) {
  return `${conversationApiHref(id)}/export?${new URLSearchParams({ format })}`;
}

/** Where the next page of the list starts: the `updated_at` and `id` of a full page's
 *  last conversation (so that one updated at the same moment is not skipped), else null
 *  (a page shorter than asked for is the last). */
export function nextBefore(page, limit = PAGE_SIZE) {
  const last = page.at(-1);
  return page.length >= limit && last ? { updated_at: last.updated_at, id: last.id } : null;
}

/** `more` appended to `listed`, leaving out any conversation already listed (one that
 *  a new turn moved while the reader paged). */
export function appendPage(listed, more) {
  const seen = new Set(listed.map((conversation) => conversation.id));
  return [...listed, ...more.filter((conversation) => !seen.has(conversation.id))];
}

export function turnsLabel(turns) {
  return turns === 1 ? "1 turn" : `${Number(turns) || 0} turns`;
}
