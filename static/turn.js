// One chat turn: `POST /api/chat`, then the SSE frames (docs/PROTOCOL.md, "Event
// stream") read from the response body (EventSource cannot POST) and handed to the
// page, with a watchdog that notices a stream gone silent.

import { chatBody } from "./conversation.js";
import { readEventStream } from "./sse.js";

/** The server sends a keep-alive every 5 s by default: three missed ones mean trouble. */
const SILENCE_LIMIT_MS = 15_000;

/**
 * Runs a turn of conversation `conversationId` (null: the turn starts a new one) to its
 * end, searching `collections` only (null: every one the caller reads). `handlers`
 * receive `conversation(id)` from the response's `X-Conversation-Id`, the frames
 * (`retry`, `thinking`, `tool`, `delta`, `done`, `error`, each with the frame's data) and `silence(ms)` / `resumed()` from the watchdog. Resolves with how the turn ended:
 * `{kind: "done"|"error"}` after the terminal frame, `{kind: "stopped"}` when `signal`
 * aborted it, `{kind: "signedOut"}` when the caller is no longer signed in (401),
 * `{kind: "refused", message}` when the server refused the request otherwise,
 * `{kind: "unreachable"}` when it could not be reached, `{kind: "cut"}` when the stream
 * ended without a terminal frame.
 */
export async function runTurn({ message, conversationId, collections = null, signal, handlers }) {
  const watchdog = new Watchdog(handlers);
  let terminal = null;
  let responded = false;
  try {
    const response = await fetch("/api/chat", {
      method: "POST",
      headers: { "Content-Type": "application/json", Accept: "text/event-stream" },
      body: JSON.stringify(chatBody(message, conversationId, collections)),
      signal,
    });
    responded = true;
    watchdog.activity();
    if (response.status === 401) return { kind: "signedOut" };
    if (!response.ok || !isEventStream(response)) {
      return { kind: "refused", message: await refusalMessage(response) };
    }
    const conversation = response.headers.get("X-Conversation-Id");
    if (conversation !== null) handlers.conversation?.(conversation);
    await readEventStream(response.body, {
      onActivity: () => watchdog.activity(),
      onEvent: ({ event, data }) => {
        if (terminal) return;
        const frame = parseFrame(data);
        if (frame === null) return;
        handlers[event]?.(frame);
        if (event === "done" || event === "error") terminal = event;
      },
    });
    return { kind: terminal ?? "cut" };
  } catch (error) {
    if (terminal) return { kind: terminal };
    if (signal.aborted) return { kind: "stopped" };
    return { kind: responded ? "cut" : "unreachable", error };
  } finally {
    watchdog.stop();
  }
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
    if (typeof body?.error?.message === "string") return body.error.message;
  } catch {
    // Not the JSON error shape: fall back to the status.
  }
  return `The service refused the request (HTTP ${response.status}) — please try again.`;
}
