// Rating an answer (docs/PROTOCOL.md, "Feedback"): two toggle buttons under a finished
// answer; a thumbs-down opens a reason and a comment. Pressing the pressed button
// again takes the rating back. The line beside them says, before anything is sent,
// that a rating shares the turn with the admins.

import { element } from "./dom.js";

export const SHARING_NOTE = "A rating shares this question, its answer and its sources with your admins.";

/** The reasons of a thumbs-down, as the API names them, in the words the page uses. */
export const REASONS = [
  ["missing_source", "The right passage was not found"],
  ["wrong_source", "It cites a passage that does not say this"],
  ["should_not_answer", "It should have said it does not know"],
  ["wrong_answer", "The answer is wrong"],
  ["other", "Something else"],
];

const MAX_COMMENT_CHARS = 2000;

let nextId = 0;

/** `PUT` (a rating) or `DELETE` (null) of a turn's feedback; the stored rating or null. */
async function sendFeedback(turnId, rating) {
  const response = await fetch(`/api/turns/${encodeURIComponent(turnId)}/feedback`, {
    method: rating === null ? "DELETE" : "PUT",
    headers: rating === null ? {} : { "Content-Type": "application/json" },
    body: rating === null ? undefined : JSON.stringify(rating),
  });
  if (!response.ok) {
    let message = `The rating was not saved (HTTP ${response.status}).`;
    try {
      const body = await response.json();
      if (typeof body?.error?.message === "string") message = `The rating was not saved: ${body.error.message}`;
    } catch {
      // Not the JSON error shape: the status says it.
    }
    throw new Error(message);
  }
  return rating === null ? null : response.json();
}

/** The rating controls of one answer; `show(exchange)` follows the exchange. */
export class FeedbackControls {
  constructor() {
    const id = `feedback-${(nextId += 1)}`;
    this.turnId = null;
    this.rating = null;
    this.root = element("div", { class: "feedback", hidden: "" });
    const group = element("div", {
      class: "feedback-buttons",
      role: "group",
      "aria-label": "Rate this answer",
      "aria-describedby": `${id}-note`,
    });
    // Words, not pictures: no emoji font is needed, and the pressed one is bold and
    // framed, not told by colour alone.
    this.up = element("button", { type: "button", "aria-pressed": "false" }, "Helpful");
    this.down = element("button", { type: "button", "aria-pressed": "false" }, "Not helpful");
    group.append(this.up, this.down);
    const note = element("p", { class: "feedback-note", id: `${id}-note` }, SHARING_NOTE);

    this.form = element("form", { class: "feedback-form", hidden: "", "aria-label": "Why it was not helpful" });
    this.reason = element("select", { id: `${id}-reason`, name: "reason" });
    for (const [value, label] of REASONS) this.reason.append(element("option", { value }, label));
    this.comment = element("textarea", {
      id: `${id}-comment`,
      name: "comment",
      rows: "2",
      maxlength: String(MAX_COMMENT_CHARS),
    });
    const send = element("button", { type: "submit" }, "Send rating");
    const cancel = element("button", { type: "button", class: "secondary" }, "Cancel");
    this.form.append(
      element("label", { for: this.reason.id }, "What went wrong?"),
      this.reason,
      element("label", { for: this.comment.id }, "Comment (optional)"),
      this.comment,
      element("div", { class: "feedback-actions" }),
    );
    this.form.lastChild.append(send, cancel);
    this.status = element("p", { class: "feedback-status", role: "status" });
    this.root.append(group, note, this.form, this.status);

    this.up.addEventListener("click", () =>
      this.#save(this.rating?.rating === "up" ? null : { rating: "up" }),
    );
    this.down.addEventListener("click", () => {
      if (this.rating?.rating === "down") {
        this.#save(null);
        return;
      }
      this.form.hidden = false;
      this.reason.focus();
    });
    cancel.addEventListener("click", () => {
      this.form.hidden = true;
      this.down.focus();
    });
    this.form.addEventListener("submit", (event) => {
      event.preventDefault();
      const comment = this.comment.value.trim();
      this.#save({
        rating: "down",
        reason: this.reason.value,
        ...(comment === "" ? {} : { comment }),
      });
    });
  }

  /** Shown for a finished answer that left a turn (`exchange.turnId`), with its rating. */
  show(exchange) {
    const finished = exchange.status === "done" || exchange.status === "stopped";
    const turnId = typeof exchange.turnId === "string" ? exchange.turnId : null;
    this.root.hidden = !finished || turnId === null;
    if (turnId !== this.turnId) {
      this.turnId = turnId;
      this.#showRating(exchange.feedback ?? null);
    }
  }

  async #save(rating) {
    this.status.textContent = "Saving…";
    try {
      const stored = await sendFeedback(this.turnId, rating);
      this.#showRating(stored);
      this.form.hidden = true;
      this.status.textContent = stored === null ? "Rating removed." : "Thanks — your rating was sent.";
    } catch (error) {
      this.status.textContent = error.message;
    }
  }

  #showRating(rating) {
    this.rating = rating;
    this.up.setAttribute("aria-pressed", String(rating?.rating === "up"));
    this.down.setAttribute("aria-pressed", String(rating?.rating === "down"));
    if (rating?.rating === "down") {
      if (rating.reason) this.reason.value = rating.reason;
      this.comment.value = rating.comment ?? "";
    }
  }
}
