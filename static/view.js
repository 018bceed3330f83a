// The DOM of the conversation: one block per exchange, the question as plain text (with
// Edit on the last one) and the answer as an `article` (thinking, a notice on a
// deflected answer, rendered answer with its citations linked and its code blocks' copy
// buttons, a note, sources, the versions of the turn and Regenerate, Copy answer, its
// rating).

import { linkCitations, passageHref, placeLabel } from "./citations.js";
import { AnswerCopy, addCodeCopyButtons } from "./copy.js";
import { element } from "./dom.js";
import { FeedbackControls } from "./feedback.js";
import { renderInto } from "./render.js";

let nextId = 0;

export const DEFLECTED_NOTICE =
  "Not from your documents: nothing in your knowledge base matched this question, so this answer is the model's general knowledge.";

export const TRUNCATED_NOTE = "The answer was cut at its length limit.";

/** How bor asks the model to begin a deflected answer (its turn prompts), for the
 *  clients that show no notice of their own; this page shows its notice instead, so the
 *  answer is shown without the opening (which small models end with a colon, a full
 *  stop or a dash). */
const DEFLECTED_OPENING = /^\s*(\*\*|__)?This is not from your documents\s*[:.!—–-]\1\s*/i;

/**
 * The elements of one exchange on screen; `update(exchange)` redraws it (the version of
 * the turn shown, when it has several). `actions` are called when the reader asks for
 * another version to be shown (`version(step)`, -1 or +1), asks the turn again
 * (`regenerate()`), or sends an edited question (`edit(question)`).
 */
export class ExchangeView {
  constructor(exchange, actions = {}) {
    const id = `exchange-${(nextId += 1)}`;
    this.actions = actions;
    this.root = element("div", { class: "exchange" });

    this.question = element("div", { class: "question" });
    this.questionText = element("p", { class: "question-text" }, exchange.question);
    this.edit = element("button", { type: "button", class: "quiet edit-question", hidden: "" }, "Edit");
    this.edit.addEventListener("click", () => this.#openEdit());
    this.editForm = this.#editForm(id);
    this.question.append(
      element("h2", { class: "visually-hidden" }, "You asked"),
      this.questionText,
      this.edit,
      this.editForm,
    );

    this.article = element("article", { class: "answer", "aria-labelledby": `${id}-heading` });
    const heading = element("h2", { class: "visually-hidden", id: `${id}-heading` }, "Answer");

    this.thinking = element("details", { class: "thinking", hidden: "" });
    this.thinkingText = element("div", { class: "thinking-text" });
    this.thinking.append(element("summary", {}, "Thinking"), this.thinkingText);

    // A deflected turn (`done.path`): nothing in the knowledge base matched, so the
    // answer is the model's own. Said in words before the answer, not by colour alone.
    this.deflected = element(
      "p",
      { class: "deflected-notice", id: `${id}-deflected`, hidden: "" },
      DEFLECTED_NOTICE,
    );
    this.body = element("div", { class: "answer-body" });
    this.note = element("p", { class: "answer-note", hidden: "" });
    this.copy = new AnswerCopy(this.body);

    // The sources the answer cites, then the other passages the model was given, folded.
    this.sources = element("section", { class: "sources", hidden: "" });
    // `role` keeps the list a list for screen readers that drop it with the bullets.
    this.sourceList = element("ul", { role: "list", "aria-labelledby": `${id}-sources` });
    this.uncited = element("details", { class: "uncited-sources", hidden: "" });
    this.uncitedSummary = element("summary");
    this.uncitedList = element("ul", { role: "list", "aria-label": "Passages not cited" });
    this.uncited.append(this.uncitedSummary, this.uncitedList);
    this.sources.append(
      element("h3", { id: `${id}-sources` }, "Sources"),
      this.sourceList,
      this.uncited,
    );

    this.feedback = new FeedbackControls();

    // The versions of the turn ("‹ 2 / 3 ›") and Regenerate, on the last turn.
    this.tools = element("div", { class: "turn-tools" });
    this.versions = element("div", { class: "versions", role: "group", "aria-label": "Versions of this answer", hidden: "" });
    this.previous = element("button", { type: "button", class: "quiet", "aria-label": "Previous version" }, "‹");
    this.next = element("button", { type: "button", class: "quiet", "aria-label": "Next version" }, "›");
    this.position = element("span", { class: "version-position", "aria-live": "polite", "aria-atomic": "true" });
    this.previous.addEventListener("click", () => this.actions.version?.(-1));
    this.next.addEventListener("click", () => this.actions.version?.(1));
    this.versions.append(this.previous, this.position, this.next);
    this.regenerate = element("button", { type: "button", class: "quiet", hidden: "" }, "Regenerate");
    this.regenerate.addEventListener("click", () => this.actions.regenerate?.());
    this.tools.append(this.versions, this.regenerate);

    this.article.append(
      heading,
      this.thinking,
      this.deflected,
      this.body,
      this.note,
      this.sources,
      this.tools,
      this.copy.root,
      this.feedback.root,
    );
    this.root.append(this.question, this.article);
    this.renderedAnswer = null;
    this.renderedThinking = null;
    this.renderedSources = null;
    this.askAgain = false;
    this.switchable = true;
    this.update(exchange);
  }

  /** What the reader may do with the turn: ask it again (`askAgain`: the last turn,
   *  ended, none in flight) and show its other versions (`switchable`: none in flight). */
  offer({ askAgain, switchable }) {
    this.askAgain = askAgain;
    this.switchable = switchable;
    this.regenerate.hidden = !askAgain;
    this.edit.hidden = !askAgain || !this.editForm.hidden;
    if (!askAgain && !this.editForm.hidden) this.#closeEdit({ restoreFocus: false });
    this.#showVersions();
  }

  #editForm(id) {
    const form = element("form", { class: "question-edit", hidden: "", novalidate: "" });
    this.editText = element("textarea", { id: `${id}-edit`, rows: "3", autocomplete: "off" });
    const cancel = element("button", { type: "button", class: "quiet" }, "Cancel");
    const send = element("button", { type: "submit", class: "primary" }, "Send");
    const buttons = element("div", { class: "question-edit-buttons" });
    buttons.append(cancel, send);
    form.append(element("label", { for: this.editText.id }, "Edit your question"), this.editText, buttons);
    form.addEventListener("submit", (event) => {
      event.preventDefault();
      this.#sendEdit();
    });
    cancel.addEventListener("click", () => this.#closeEdit({ restoreFocus: true }));
    this.editText.addEventListener("keydown", (event) => {
      if (event.key === "Escape") {
        // Escape leaves the edit, and nothing else (it stops a turn elsewhere).
        event.preventDefault();
        event.stopPropagation();
        this.#closeEdit({ restoreFocus: true });
      } else if (event.key === "Enter" && !event.shiftKey && !event.isComposing) {
        event.preventDefault();
        this.#sendEdit();
      }
    });
    return form;
  }

  #openEdit() {
    this.editText.value = this.questionText.textContent;
    this.question.classList.add("editing");
    this.questionText.hidden = true;
    this.edit.hidden = true;
    this.editForm.hidden = false;
    this.editText.focus();
  }

  #closeEdit({ restoreFocus }) {
    this.question.classList.remove("editing");
    this.questionText.hidden = false;
    this.editForm.hidden = true;
    this.edit.hidden = !this.askAgain;
    if (restoreFocus) this.edit.focus();
  }

  #sendEdit() {
    const question = this.editText.value.trim();
    if (question === "") {
      this.editText.focus();
      return;
    }
    this.#closeEdit({ restoreFocus: false });
    this.actions.edit?.(question);
  }

  /** "‹ n / N ›" when the turn has more than one version. */
  #showVersions() {
    const versions = this.shownVersions ?? [];
    const at = versions.indexOf(this.shownExchange) + 1;
    this.versions.hidden = versions.length < 2;
    if (versions.length < 2) return;
    const position = `Version ${at} of ${versions.length}`;
    if (this.position.dataset.position !== position) {
      this.position.dataset.position = position;
      this.position.replaceChildren(
        element("span", { "aria-hidden": "true" }, `${at} / ${versions.length}`),
        element("span", { class: "visually-hidden" }, position),
      );
    }
    const focused = document.activeElement;
    this.previous.disabled = !this.switchable || at <= 1;
    this.next.disabled = !this.switchable || at >= versions.length;
    // At the first or the last version the keyboard stays on the other button.
    if (focused === this.previous && this.previous.disabled && !this.next.disabled) this.next.focus();
    if (focused === this.next && this.next.disabled && !this.previous.disabled) this.previous.focus();
  }

  /** Redraws what changed since the last call. */
  update(exchange) {
    const streaming = exchange.status === "streaming";
    this.article.setAttribute("aria-busy", String(streaming));
    this.article.dataset.status = exchange.status;
    if (this.questionText.textContent !== exchange.question) this.questionText.textContent = exchange.question;
    this.shownExchange = exchange;
    this.shownVersions = exchange.versions ?? [exchange];
    this.#showVersions();

    if (exchange.thinking !== this.renderedThinking) {
      this.thinking.hidden = exchange.thinking === "";
      this.thinkingText.textContent = exchange.thinking;
      this.renderedThinking = exchange.thinking;
    }
    const sourcesChanged = exchange.sources !== this.renderedSources;
    if (exchange.answer !== this.renderedAnswer || sourcesChanged) {
      renderInto(this.body, shownAnswer(exchange));
      const cited = linkCitations(this.body, exchange.sources);
      addCodeCopyButtons(this.body, this.copy.status);
      this.renderedAnswer = exchange.answer;
      this.renderedSources = exchange.sources;
      this.#showSources(exchange.sources, cited);
    }
    this.body.classList.toggle("pending", streaming && exchange.answer === "");

    const deflected = exchange.deflected === true;
    this.deflected.hidden = !deflected;
    // Screen readers announce the notice with the answer's article.
    if (deflected) this.article.setAttribute("aria-describedby", this.deflected.id);
    else this.article.removeAttribute("aria-describedby");

    const note = noteFor(exchange);
    this.note.hidden = note === "";
    this.note.textContent = note;
    this.copy.show(shownAnswer(exchange), !streaming);
    this.feedback.show(exchange);
  }

  /** The sources numbered in `cited` listed, the others folded below them; all of them
   *  listed when the answer cites none. */
  #showSources(sources, cited) {
    const ordered = inNumberOrder(sources);
    const shown = cited.size === 0 ? ordered : ordered.filter((source) => cited.has(source.n));
    const folded = cited.size === 0 ? [] : ordered.filter((source) => !cited.has(source.n));
    this.sourceList.replaceChildren(...shown.map(sourceItem));
    this.uncitedList.replaceChildren(...folded.map(sourceItem));
    this.uncitedSummary.textContent =
      folded.length === 1
        ? "1 more passage the answer does not cite"
        : `${folded.length} more passages the answer does not cite`;
    this.uncited.hidden = folded.length === 0;
    this.sources.hidden = ordered.length === 0;
  }
}

/** The answer as the page shows it: without the opening of a deflected answer. */
function shownAnswer(exchange) {
  return exchange.answer.replace(DEFLECTED_OPENING, "");
}

function noteFor(exchange) {
  const hasAnswer = exchange.answer.trim() !== "";
  switch (exchange.status) {
    case "stopped":
      return hasAnswer ? "Stopped — the answer above is partial." : "Stopped before any answer.";
    case "error": {
      const detail = exchange.error ?? "";
      return hasAnswer ? `The answer was cut short. ${detail}`.trim() : `No answer. ${detail}`.trim();
    }
    case "done":
      if (!hasAnswer) return "The model gave an empty answer.";
      return exchange.truncated === true ? TRUNCATED_NOTE : "";
    default:
      return "";
  }
}

/** The sources in the order of their numbers (a source saved before sources were
 *  numbered has none and comes last). */
function inNumberOrder(sources) {
  const numberOf = (source) => (Number.isInteger(source.n) ? source.n : Number.MAX_SAFE_INTEGER);
  return [...sources].sort((a, b) => numberOf(a) - numberOf(b));
}

/** A source: its number and title, opening its passage (in a new tab, as a citation
 *  does), where in the document it is, its score (shown to admins only, by style.css)
 *  and the start of its text. */
function sourceItem(source) {
  const item = element("li", { class: "source" });
  const link = element("a", {
    class: "source-link",
    href: passageHref(source),
    target: "_blank",
    rel: "noopener",
  });
  if (Number.isInteger(source.n)) {
    link.append(element("span", { class: "source-n" }, `[${source.n}]`), " ");
  }
  link.append(element("span", { class: "source-title" }, String(source.title ?? "Untitled")));
  const place = placeLabel(source);
  const facts = element("span", { class: "source-facts" }, place);
  const score = `score\u00a0${formatScore(source.score)}`;
  facts.append(element("span", { class: "source-score" }, place === "" ? score : ` · ${score}`));
  item.append(link, " ", facts);
  if (typeof source.snippet === "string" && source.snippet !== "") {
    item.append(element("span", { class: "source-snippet" }, source.snippet));
  }
  return item;
}

function formatScore(score) {
  return typeof score === "number" && Number.isFinite(score) ? score.toFixed(2) : "n/a";
}
