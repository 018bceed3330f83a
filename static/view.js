// The DOM of the conversation: one block per exchange, the question as plain text and
// the answer as an `article` (thinking, a notice on a deflected answer, rendered answer,
// a note, sources).

import { element } from "./dom.js";
import { renderInto } from "./render.js";

let nextId = 0;

export const DEFLECTED_NOTICE =
  "Not from your documents: nothing in your knowledge base matched this question, so this answer is the model's general knowledge.";

/** The elements of one exchange on screen; `update(exchange)` redraws it. */
export class ExchangeView {
  constructor(exchange) {
    const id = `exchange-${(nextId += 1)}`;
    this.root = element("div", { class: "exchange" });

    const question = element("div", { class: "question" });
    question.append(
      element("h2", { class: "visually-hidden" }, "You asked"),
      element("p", { class: "question-text" }, exchange.question),
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

    this.sources = element("section", { class: "sources", hidden: "" });
    this.sourceList = element("ul", { "aria-labelledby": `${id}-sources` });
    this.sources.append(element("h3", { id: `${id}-sources` }, "Sources"), this.sourceList);

    this.article.append(heading, this.thinking, this.deflected, this.body, this.note, this.sources);
    this.root.append(question, this.article);
    this.renderedAnswer = null;
    this.renderedThinking = null;
    this.renderedSources = null;
    this.update(exchange);
  }

  /** Redraws what changed since the last call. */
  update(exchange) {
    const streaming = exchange.status === "streaming";
    this.article.setAttribute("aria-busy", String(streaming));
    this.article.dataset.status = exchange.status;

    if (exchange.thinking !== this.renderedThinking) {
      this.thinking.hidden = exchange.thinking === "";
      this.thinkingText.textContent = exchange.thinking;
      this.renderedThinking = exchange.thinking;
    }
    if (exchange.answer !== this.renderedAnswer) {
      renderInto(this.body, exchange.answer);
      this.renderedAnswer = exchange.answer;
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

    if (exchange.sources !== this.renderedSources) {
      this.sourceList.replaceChildren(...sourceItems(exchange.sources));
      this.sources.hidden = this.sourceList.childElementCount === 0;
      this.renderedSources = exchange.sources;
    }
  }
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
      return hasAnswer ? "" : "The model gave an empty answer.";
    default:
      return "";
  }
}

/** One item per document, at its best score (sources arrive best first). */
function sourceItems(sources) {
  const seen = new Set();
  const items = [];
  for (const source of sources) {
    const key = source.document_id ?? source.title;
    if (seen.has(key)) continue;
    seen.add(key);
    const item = element("li");
    item.append(
      element("span", { class: "source-title" }, String(source.title ?? "Untitled")),
      " ",
      element("span", { class: "source-score" }, `score ${formatScore(source.score)}`),
    );
    items.push(item);
  }
  return items;
}

function formatScore(score) {
  return typeof score === "number" && Number.isFinite(score) ? score.toFixed(2) : "n/a";
}
