// The turns this browser asked that may still be running, by conversation, kept in
// localStorage so that a reload, another tab or coming back to the conversation can
// follow them (docs/PROTOCOL.md, "Following a turn"). A turn is forgotten when its end
// is read or its conversation holds it as stored; entries older than a day are dropped.

const KEY = "bor.runningTurns";
const MAX_AGE_MS = 24 * 60 * 60 * 1000;

/** Remembers turn `turnId` of conversation `conversationId`, asked as `question`; a
 *  new version of turn `versionOf`, when that is given. */
export function rememberTurn({ conversationId, turnId, question, versionOf = null }) {
  const turns = read().filter((turn) => turn.conversationId !== conversationId);
  turns.push({ conversationId, turnId, question, versionOf, startedAt: Date.now() });
  write(turns);
}

export function forgetTurn(turnId) {
  const turns = read();
  const kept = turns.filter((turn) => turn.turnId !== turnId);
  if (kept.length !== turns.length) write(kept);
}

/** The turn of conversation `conversationId` that may be running:
 *  `{turnId, question, versionOf}` (`versionOf` null for a turn of its own), or null. */
export function runningTurnOf(conversationId) {
  const turn = read().find((remembered) => remembered.conversationId === conversationId);
  if (turn === undefined) return null;
  const versionOf = typeof turn.versionOf === "string" ? turn.versionOf : null;
  return { turnId: turn.turnId, question: turn.question, versionOf };
}

/** Whether a storage event is about the remembered turns. */
export function isAboutRunningTurns(event) {
  return event.key === KEY || event.key === null;
}

function read() {
  try {
    const turns = JSON.parse(localStorage.getItem(KEY) ?? "[]");
    if (!Array.isArray(turns)) return [];
    const since = Date.now() - MAX_AGE_MS;
    return turns.filter(
      (turn) =>
        typeof turn?.conversationId === "string" &&
        typeof turn.turnId === "string" &&
        typeof turn.question === "string" &&
        Number(turn.startedAt) > since,
    );
  } catch {
    return []; // No storage (a private window may refuse it), or not ours to read.
  }
}

function write(turns) {
  try {
    // Nothing is left behind once every turn's end has been read.
    if (turns.length === 0) localStorage.removeItem(KEY);
    else localStorage.setItem(KEY, JSON.stringify(turns));
  } catch {
    // Without storage, a reload cannot find the turn; the turn itself goes on.
  }
}
