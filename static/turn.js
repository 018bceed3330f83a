// One chat turn: `POST /api/chat`, then the SSE frames (docs/PROTOCOL.md, "Event
// stream") read from the response body (EventSource cannot POST) and handed to the
// page, with a watchdog that notices a stream gone silent. The turn goes on at the
// server whatever the page does: a stream cut short is read again from its last frame
// (`GET /api/turns/{id}/events`), a page that comes back follows the turn from its
// first frame, and Stop asks the server (`POST /api/turns/{id}/stop`).

import { chatBody } from "./conversation.js";
import { readEventStream } from "./sse.js";

/** The server sends a keep-alive every 5 s by default: three missed ones mean trouble. */
const SILENCE_LIMIT_MS = 15_000;

/** A stream cut short is read again this many times, this long apart, before the page
 *  says the connection was lost. */
const RESUME_TRIES = 5;
const RESUME_DELAY_MS = 1_000;

/**
 * Runs a turn of conversation `conversationId` (null: the turn starts a new one) to its
 * end, searching `collections` only (null: every one the caller reads). `handlers`
 * receive `conversation(id)` and `turn(id)` from the response's `X-Conversation-Id` and
 * `X-Turn-Id`, the frames (`retry`, `thinking`, `tool`, `delta`, `done`, `error`, each
 * with the frame's data), `restart()` when the server tells the turn again from its
 * start (from its stored row), and `silence(ms)` / `resumed()` from the watchdog.
 * Resolves with how the turn ended (see [`streamTurn`]). With `versionOf`, the turn is
 * a new version of that turn (regenerated, or its question edited).
 */
export function runTurn({ message, conversationId, collections = null, versionOf = null, signal, handlers }) {
  const start = () =>
    fetch("/api/chat", {
      method: "POST",
      headers: { "Content-Type": "application/json", Accept: "text/event-stream" },
      body: JSON.stringify(chatBody(message, conversationId, collections, versionOf)),
      signal,
    });
  return streamTurn({ start, signal, handlers });
}

/** Follows turn `turnId` from its first frame (a reload, another tab, a conversation
 *  opened again), with the handlers of [`runTurn`]. */
export function followTurn({ turnId, signal, handlers }) {
  return streamTurn({ turnId, signal, handlers });
}

/** Asks the server to stop turn `turnId`; whether it knew the turn. */
export async function stopTurnOnServer(turnId) {
  try {
    const response = await fetch(`/api/turns/${encodeURIComponent(turnId)}/stop`, { method: "POST" });
    return response.ok;
  } catch {
    return false;
  }
}

/**
 * Reads a turn to its terminal frame: the response of `start()` when given, else (and
 * after a cut) its events from the last frame read. Resolves with
 * `{kind: "done"|"error"}` after the terminal frame, `{kind: "stopped"}` when its owner
 * stopped it, `{kind: "left"}` when `signal` aborted the reading (the turn goes on),
 * `{kind: "signedOut"}` when the caller is no longer signed in (401),
 * `{kind: "refused", message}` when the server refused the request otherwise,
 * `{kind: "gone"}` when the server knows no such turn, `{kind: "unreachable"}` when it
 * could not be reached, `{kind: "cut"}` when the stream ended without a terminal frame
 * and could not be read again.
 */
async function streamTurn({ start = null, turnId = null, signal, handlers }) {
  const watchdog = new Watchdog(handlers);
  const reading = { turnId, lastId: 0, terminal: null };
  try {
    if (start !== null) {
      let response;
      try {
        response = await start();
      } catch (error) {
        return signal.aborted ? { kind: "left" } : { kind: "unreachable", error };
      }
      watchdog.activity();
      const refused = await refusalOf(response);
      if (refused !== null) return refused;
      const conversation = response.headers.get("X-Conversation-Id");
      if (conversation !== null) handlers.conversation?.(conversation);
      reading.turnId = response.headers.get("X-Turn-Id");
      if (reading.turnId !== null) handlers.turn?.(reading.turnId);
      await readFrames(response, reading, handlers, watchdog);
      if (reading.terminal !== null) return reading.terminal;
      if (signal.aborted) return { kind: "left" };
    }
    for (let attempt = 0; reading.turnId !== null && attempt <= RESUME_TRIES; attempt += 1) {
      if (start !== null || attempt > 0) await pause(RESUME_DELAY_MS, signal);
      if (signal.aborted) return { kind: "left" };
      let response;
      try {
        response = await fetch(eventsPath(reading), { headers: { Accept: "text/event-stream" }, signal });
      } catch {
        continue;
      }
      watchdog.activity();
      if (response.status === 404) return { kind: start === null ? "gone" : "cut" };
      // Ended, with nothing after the last frame read: its terminal frame never came.
      if (response.status === 204) return { kind: "cut" };
      const refused = await refusalOf(response);
      if (refused !== null) return refused;
      await readFrames(response, reading, handlers, watchdog);
      if (reading.terminal !== null) return reading.terminal;
    }
    return { kind: signal.aborted ? "left" : "cut" };
  } finally {
    watchdog.stop();
  }
}

/** Hands the response's frames to `handlers` until its stream ends or fails. */
async function readFrames(response, reading, handlers, watchdog) {
  try {
    await readEventStream(response.body, {
      onActivity: () => watchdog.activity(),
      onEvent: ({ event, data, id }) => {
        if (reading.terminal !== null) return;
        const frame = parseFrame(data);
        if (frame === null) return;
        const number = Number.parseInt(id, 10);
        if (Number.isSafeInteger(number)) {
          // Numbers only grow within a telling of the turn: a smaller one starts it
          // again (the server answers from the stored row).
          if (number <= reading.lastId) handlers.restart?.();
          reading.lastId = number;
        }
        handlers[event]?.(frame);
        if (event === "done") reading.terminal = { kind: frame.stopped === true ? "stopped" : "done" };
        if (event === "error") reading.terminal = { kind: "error" };
      },
    });
  } catch {
    // A cut stream: read again from the last frame, unless the reading was aborted.
  }
}

function eventsPath({ turnId, lastId }) {
  return `/api/turns/${encodeURIComponent(turnId)}/events?after=${lastId}`;
}

/** Waits `ms`, or less when `signal` aborts. */
function pause(ms, signal) {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, ms);
    signal.addEventListener(
      "abort",
      () => {
        clearTimeout(timer);
        resolve();
      },
      { once: true },
    );
  });
}

/** The outcome of a response that is not a turn's event stream; null when it is. */
async function refusalOf(response) {
  if (response.status === 401) return { kind: "signedOut" };
  if (!response.ok || !isEventStream(response)) {
    return { kind: "refused", message: await refusalMessage(response) };
  }
  return null;
}

/** Calls `silence(ms)` once the stream has said nothing for `SILENCE_LIMIT_MS`, and
 *  `resumed()` when bytes flow again after that. */
class Watchdog {
  #handlers;
  #timer = null;
  #silent = false;

  constructor(handlers) {
    this.#handlers = handlers;
    this.#arm();
  }

  activity() {
    if (this.#silent) {
      this.#silent = false;
      this.#handlers.resumed?.();
    }
    this.#arm();
  }

  stop() {
    clearTimeout(this.#timer);
  }

  #arm() {
    clearTimeout(this.#timer);
    this.#timer = setTimeout(() => {
      this.#silent = true;
      this.#handlers.silence?.(SILENCE_LIMIT_MS);
    }, SILENCE_LIMIT_MS);
  }
}

const MEASURE_WORDS = {
  turns_per_day: (n) => `${n} ${n === 1 ? "question" : "questions"} a day`,
  tokens_per_day: (n) => `${n} tokens a day`,
  tokens_per_month: (n) => `${n} tokens a month`,
};

/** A 429 `quota_exceeded` in words: whose limit, what it allows, and when it resets,
 *  in the reader's time and in UTC. */
function quotaMessage(limit) {
  const allows = (MEASURE_WORDS[limit.measure] ?? ((n) => `${n}`))(limit.limit);
  const whose = {
    user: "your limit",
    group: `the limit of the group ${limit.name}`,
    key: `the limit of the API key ${limit.name}`,
  }[limit.subject] ?? "the limit set for everyone";
  const resets = new Date(limit.resets_at);
  const local = resets.toLocaleString(undefined, { dateStyle: "medium", timeStyle: "short" });
  const utc = `${limit.resets_at.slice(0, 16).replace("T", " ")} UTC`;
  return `You have reached ${whose} of ${allows}. You can ask again from ${local} (${utc}).`;
}

function isEventStream(response) {
  return (response.headers.get("Content-Type") ?? "").startsWith("text/event-stream");
}

function parseFrame(data) {
  try {
    const frame = JSON.parse(data);
    return frame !== null && typeof frame === "object" ? frame : null;
  } catch {
    return null;
  }
}

/** The server's explanation of a refused request (`{"error":{"code","message"}}`). */
async function refusalMessage(response) {
  try {
    const body = await response.json();
    if (body?.error?.code === "quota_exceeded" && body.error.limit) {
      return quotaMessage(body.error.limit);
    }
    if (typeof body?.error?.message === "string") return body.error.message;
  } catch {
    // Not the JSON error shape: fall back to the status.
  }
  return `The service refused the request (HTTP ${response.status}) — please try again.`;
}
