// The admin page's "Try retrieval" box: a question searched as a turn would search it
// (`POST /api/search`), each passage shown with its place in both rankings, in their
// fusion and (with re-ranking on) in the re-ranked order, and whether a turn would be
// grounded. Titles, headings and snippets are user
// content: they only ever go in as text.

import { element } from "./dom.js";

/** The rankings of a result, in the order shown, with the words that name them. */
const SIGNALS = [
  ["vector", "Vectors", "cosine"],
  ["full_text", "Full text", "BM25"],
  ["fused", "Fused", "score"],
];
/** Shown only when the server re-ranked. */
const RERANK_SIGNAL = ["rerank", "Re-ranked", "cross-encoder"];

export class RetrievalTrial {
  /** `search(query, topK)` resolves with the answer of `POST /api/search`, or rejects
   *  with an `ApiError` whose message can be shown. */
  constructor({ search }) {
    this.search = search;
    this.form = document.getElementById("search-form");
    this.query = document.getElementById("search-query");
    this.topK = document.getElementById("search-top-k");
    this.run = document.getElementById("search-run");
    this.status = document.getElementById("search-status");
    this.results = document.getElementById("search-results");
    this.ticket = 0;
    this.form.addEventListener("submit", (event) => {
      event.preventDefault();
      this.submit();
    });
    this.query.addEventListener("input", () => this.query.removeAttribute("aria-invalid"));
  }

  async submit() {
    const query = this.query.value.trim();
    if (query === "") {
      this.query.setAttribute("aria-invalid", "true");
      this.say("Type a question first.", "error");
      this.query.focus();
      return;
    }
    const topK = Number.parseInt(this.topK.value, 10);
    const ticket = ++this.ticket;
    this.run.setAttribute("aria-disabled", "true");
    this.say("Searching…");
    try {
      const found = await this.search(query, Number.isFinite(topK) ? topK : undefined);
      if (ticket !== this.ticket) return;
      this.show(found);
    } catch (error) {
      if (ticket !== this.ticket) return;
      this.results.replaceChildren();
      this.results.hidden = true;
      this.say(error.message, "error");
    } finally {
      if (ticket === this.ticket) this.run.removeAttribute("aria-disabled");
    }
  }

  show({ grounded, results, timings_ms: timings, rerank_error: rerankError }) {
    const reranked = results.some((result) => result.signals.rerank);
    this.results.replaceChildren(...results.map((result) => resultItem(result, reranked)));
    this.results.hidden = results.length === 0;
    const verdict = grounded
      ? "Grounded: a turn would answer from these passages."
      : "Deflected: no cosine similarity reaches the threshold and no passage holds every word, so a turn would answer without these passages.";
    const count = results.length === 1 ? "1 passage" : `${results.length} passages`;
    let took = `embedding ${milliseconds(timings.embedding)}, ranking ${milliseconds(timings.retrieval)}`;
    if (timings.rerank !== undefined) took += `, re-ranking ${milliseconds(timings.rerank)}`;
    const fallback = rerankError ? ` Re-ranking failed, so this is the fused order: ${rerankError}.` : "";
    this.say(`${verdict} ${count}; ${took}.${fallback}`, grounded ? "success" : undefined);
  }

  say(text, tone) {
    this.status.textContent = text;
    if (tone) this.status.dataset.tone = tone;
    else delete this.status.dataset.tone;
  }
}

function resultItem(result, reranked) {
  const item = element("li", { class: "search-result" });
  const title = element("h3", { class: "document-title" });
  title.append(
    element(
      "a",
      { href: `/documents/${encodeURIComponent(result.document_id)}#chunk-${encodeURIComponent(result.chunk_id)}` },
      result.title,
    ),
  );
  item.append(title);
  const where = [result.heading, result.page ? `page ${result.page}` : ""].filter(Boolean).join(" · ");
  if (where) item.append(element("p", { class: "document-meta" }, where));
  item.append(element("p", { class: "search-snippet" }, result.snippet));
  const signals = element("dl", { class: "search-signals" });
  for (const [key, name, measure] of reranked ? [...SIGNALS, RERANK_SIGNAL] : SIGNALS) {
    const signal = result.signals[key];
    signals.append(
      element("dt", {}, name),
      element(
        "dd",
        {},
        signal ? `rank ${signal.rank}, ${measure} ${signal.score.toFixed(4)}` : "not in its top 50",
      ),
    );
  }
  item.append(signals);
  return item;
}

function milliseconds(value) {
  return `${value < 10 ? value.toFixed(1) : Math.round(value)} ms`;
}
