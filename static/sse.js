// Reads a Server-Sent Events body incrementally, following the HTML standard's
// event-stream rules: lines end in LF, CR or CRLF; `data` lines are joined with LF;
// lines starting with ":" are comments; a blank line dispatches the event, with the
// last `id` seen (the stream's last event ID).
// Frames, lines and UTF-8 characters may be split anywhere across network reads.

/** Splits event-stream text, fed piece by piece, into events. */
export class EventStreamParser {
  #buffer = "";
  #skipLineFeed = false;
  #eventName = "";
  #dataLines = [];
  #hasData = false;
  #lastEventId = "";

  /**
   * Feeds decoded text; calls `onEvent({event, data, id})` for every complete event and
   * `onComment(text)` for every comment line (keep-alives).
   */
  push(text, onEvent, onComment = () => {}) {
    if (text === "") return;
    let input = text;
    if (this.#skipLineFeed && input.startsWith("\n")) input = input.slice(1);
    this.#skipLineFeed = false;
    this.#buffer += input;
    let start = 0;
    for (;;) {
      const end = nextLineEnd(this.#buffer, start);
      if (end === -1) break;
      const line = this.#buffer.slice(start, end);
      if (this.#buffer[end] === "\r") {
        if (end + 1 === this.#buffer.length) {
          // The LF of a CRLF may come with the next read.
          this.#skipLineFeed = true;
          start = end + 1;
        } else {
          start = this.#buffer[end + 1] === "\n" ? end + 2 : end + 1;
        }
      } else {
        start = end + 1;
      }
      this.#line(line, onEvent, onComment);
    }
    this.#buffer = this.#buffer.slice(start);
  }

  #line(line, onEvent, onComment) {
    if (line === "") {
      if (this.#hasData) {
        onEvent({
          event: this.#eventName || "message",
          data: this.#dataLines.join("\n"),
          id: this.#lastEventId,
        });
      }
      this.#eventName = "";
      this.#dataLines = [];
      this.#hasData = false;
      return;
    }
    if (line.startsWith(":")) {
      onComment(line.slice(1));
      return;
    }
    const colon = line.indexOf(":");
    const field = colon === -1 ? line : line.slice(0, colon);
    let value = colon === -1 ? "" : line.slice(colon + 1);
    if (value.startsWith(" ")) value = value.slice(1);
    if (field === "event") {
      this.#eventName = value;
    } else if (field === "data") {
      this.#dataLines.push(value);
      this.#hasData = true;
    } else if (field === "id" && !value.includes("\0")) {
      this.#lastEventId = value;
    }
    // `retry` and unknown fields mean nothing to a fetch-based reader.
  }
}

function nextLineEnd(text, from) {
  const lineFeed = text.indexOf("\n", from);
  const carriageReturn = text.indexOf("\r", from);
  if (lineFeed === -1) return carriageReturn;
  if (carriageReturn === -1) return lineFeed;
  return Math.min(lineFeed, carriageReturn);
}

/**
 * Reads a byte stream (a fetch response body) to its end, calling `onEvent` for each
 * event and `onActivity()` whenever bytes arrive (frames or keep-alives). Rejects
 * when the stream fails or is aborted.
 */
export async function readEventStream(body, { onEvent, onActivity = () => {} }) {
  const reader = body.getReader();
  const decoder = new TextDecoder("utf-8");
  const parser = new EventStreamParser();
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      onActivity();
      parser.push(decoder.decode(value, { stream: true }), onEvent);
    }
    parser.push(decoder.decode(), onEvent);
  } finally {
    reader.releaseLock();
  }
}
