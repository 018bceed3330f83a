// The conversation of this chat: its exchanges (a question and what came back), the
// history sent with each turn (SPEC §3), and their copy in localStorage so that a
// reload keeps them.

const STORAGE_KEY = "bor.conversation.v1";
/** Most history entries a turn may carry (the server refuses more). */
const MAX_HISTORY_ENTRIES = 20;
/** Exchanges kept on screen and in storage; older ones are dropped. */
const MAX_KEPT_EXCHANGES = 100;

/**
 * One question and its answer. `status` is `streaming`, `done`, `stopped` or `error`;
 * `sources` are `{n, document_id, title, chunk_id, score, heading, snippet, page}` from
 * the `done` frame (SPEC §11), which also sets `deflected` and `truncated`.
 */
export function newExchange(question) {
  return { question, answer: "", thinking: "", sources: [], status: "streaming", error: "" };
}

/**
 * The history for the next turn: the user/assistant pairs of the exchanges that ended
 * with an answer (a stopped turn keeps its partial answer), oldest first, at most
 * `MAX_HISTORY_ENTRIES` entries.
 */
export function historyOf(exchanges) {
  const entries = exchanges
    .filter((exchange) => exchange.status === "done" || exchange.status === "stopped")
    .filter((exchange) => exchange.answer.trim() !== "")
    .flatMap((exchange) => [
      { role: "user", content: exchange.question },
      { role: "assistant", content: exchange.answer },
    ]);
  return entries.slice(Math.max(0, entries.length - MAX_HISTORY_ENTRIES));
}

/** The saved exchanges, or none when nothing (or nothing readable) is saved. */
export function loadExchanges(storage = globalThis.localStorage) {
  let saved;
  try {
    saved = JSON.parse(storage.getItem(STORAGE_KEY) ?? "null");
  } catch {
    return [];
  }
  if (!Array.isArray(saved?.exchanges)) return [];
  return saved.exchanges.filter(isExchange).map((exchange) => ({
    ...exchange,
    // A turn still streaming when the page went away was cut short.
    status: exchange.status === "streaming" ? "stopped" : exchange.status,
  }));
}

/** Saves the exchanges; returns false when the browser refused (storage full or off). */
export function saveExchanges(exchanges, storage = globalThis.localStorage) {
  const kept = exchanges.slice(Math.max(0, exchanges.length - MAX_KEPT_EXCHANGES));
  try {
    storage.setItem(STORAGE_KEY, JSON.stringify({ exchanges: kept }));
    return true;
  } catch {
    return false;
  }
}

export function clearSavedExchanges(storage = globalThis.localStorage) {
  try {
    storage.removeItem(STORAGE_KEY);
  } catch {
    // Storage is off: there is nothing to clear.
  }
}

function isExchange(value) {
  return (
    typeof value?.question === "string" &&
    typeof value.answer === "string" &&
    typeof value.thinking === "string" &&
    Array.isArray(value.sources) &&
    ["streaming", "done", "stopped", "error"].includes(value.status)
  );
}
