// The admin page's feedback section (docs/PROTOCOL.md, "Feedback"): the rated answers
// with their question, searched query, answer and sources; for one of them, a search
// as its asker to name the passages that should have been found; the ratings per
// collection; and the evaluation set's runs, newest first. Everything from the API is
// user content and only ever goes in as text.

import {
  fetchEvalRuns,
  fetchFeedback,
  putExpected,
  runFeedbackEval,
  searchAsAsker,
} from "./admin-api.js";
import { passageHref } from "./citations.js";
import { element } from "./dom.js";
import { REASONS } from "./feedback.js";

/** Characters of an answer shown before "…". */
const ANSWER_CHARS = 600;

const REASON_WORDS = new Map(REASONS);

/** A source's signals, in the words "Try retrieval" uses. */
const SIGNALS = [
  ["vector", "vector"],
  ["full_text", "full text"],
  ["fused", "fused"],
  ["rerank", "re-ranked"],
];

export class FeedbackReview {
  /** `token()` is the admin token in use (empty with a session). */
  constructor({ token }) {
    this.token = token;
    this.form = document.getElementById("feedback-filters");
    this.status = document.getElementById("feedback-status");
    this.list = document.getElementById("feedback-list");
    this.shares = document.getElementById("feedback-by-collection");
    this.runs = document.getElementById("eval-runs");
    this.byCollection = document.getElementById("eval-by-collection");
    this.evalStatus = document.getElementById("eval-status");
    this.missed = document.getElementById("eval-missed");
    this.shown = null;
    const reasons = document.getElementById("feedback-reason");
    for (const [value, words] of REASONS) reasons.append(element("option", { value }, words));
    this.form.addEventListener("submit", (event) => {
      event.preventDefault();
      this.load();
    });
    document.getElementById("feedback-export").addEventListener("click", () => this.export());
    document.getElementById("eval-run").addEventListener("click", () => this.runEval());
  }

  filters() {
    const data = new FormData(this.form);
    const since = String(data.get("since") ?? "");
    return {
      rating: String(data.get("rating") ?? ""),
      reason: String(data.get("reason") ?? ""),
      collection: String(data.get("collection") ?? "").trim(),
      since: since === "" ? "" : `${since}T00:00:00Z`,
    };
  }

  async load() {
    this.status.textContent = "Loading the ratings…";
    try {
      const found = await fetchFeedback(this.token(), this.filters());
      this.shown = found;
      this.#showShares(found.by_collection);
      this.list.replaceChildren(...found.feedback.map((turn) => this.#item(turn)));
      this.status.textContent =
        found.feedback.length === 1 ? "1 rated answer." : `${found.feedback.length} rated answers.`;
    } catch (error) {
      this.status.textContent = error.message;
    }
    this.#loadRuns();
  }

  /** The list as shown, as a JSON file. */
  export() {
    if (this.shown === null) {
      this.status.textContent = "Show the ratings first.";
      return;
    }
    const file = new Blob([JSON.stringify(this.shown, null, 2)], { type: "application/json" });
    const link = element("a", { href: URL.createObjectURL(file), download: "bor-feedback.json" });
    document.body.append(link);
    link.click();
    link.remove();
    setTimeout(() => URL.revokeObjectURL(link.href), 10_000);
  }

  async runEval() {
    this.evalStatus.textContent = "Running the evaluation set…";
    try {
      const evaluation = await runFeedbackEval(this.token());
      const missed = evaluation.queries.filter((query) => !query.answered);
      this.missed.replaceChildren(
        ...missed.map((query) => element("li", {}, `${query.query} (turn ${query.turn_id})`)),
      );
      this.missed.hidden = missed.length === 0;
      this.evalStatus.textContent =
        `Run ${evaluation.run.id}: ${evaluation.run.queries} queries, ` +
        `${missed.length} a turn would not answer from a named passage.`;
    } catch (error) {
      this.evalStatus.textContent = error.message;
    }
    this.#loadRuns();
  }

  async #loadRuns() {
    try {
      const runs = await fetchEvalRuns(this.token());
      this.runs.tBodies[0].replaceChildren(...runs.map(runRow));
      this.runs.hidden = runs.length === 0;
      // By collection only when the named passages are in more than one: with one, the
      // run's own row says it all.
      const byCollection = collectionRows(runs[0]);
      this.byCollection.tBodies[0].replaceChildren(...byCollection);
      this.byCollection.caption.textContent = runs[0] ? `Run ${runs[0].id} by the collection of the named passages` : "";
      this.byCollection.hidden = byCollection.length < 2;
    } catch (error) {
      this.evalStatus.textContent = error.message;
    }
  }

  #showShares(byCollection) {
    const rows = byCollection.map(({ collection, up, down }) => {
      const row = element("tr");
      const total = up + down;
      const share = total === 0 ? "–" : `${Math.round((100 * down) / total)} %`;
      row.append(
        element("th", { scope: "row" }, collection ?? "(no sources)"),
        element("td", {}, String(up)),
        element("td", {}, String(down)),
        element("td", {}, share),
      );
      return row;
    });
    this.shares.tBodies[0].replaceChildren(...rows);
    this.shares.hidden = rows.length === 0;
  }

  #item(turn) {
    const item = element("li", { class: "feedback-item" });
    const verdict = turn.rating === "up" ? "Helpful" : "Not helpful";
    const reason = turn.reason ? ` — ${REASON_WORDS.get(turn.reason) ?? turn.reason}` : "";
    item.append(
      element("p", { class: "feedback-verdict" }, `${verdict}${reason}`),
      element("p", { class: "feedback-meta" }, `${turn.asker}, ${new Date(turn.rated_at).toLocaleString()}`),
    );
    if (turn.comment) item.append(element("blockquote", { class: "feedback-comment" }, turn.comment));
    const facts = element("dl", { class: "feedback-facts" });
    const answer = turn.answer.length > ANSWER_CHARS ? `${turn.answer.slice(0, ANSWER_CHARS)}…` : turn.answer;
    for (const [term, value] of [
      ["Question", turn.question],
      ["Searched", turn.searched_query ?? turn.question],
      ["Answer", answer],
    ]) {
      facts.append(element("dt", {}, term), element("dd", {}, value));
    }
    item.append(facts);
    const sources = element("ol", { class: "feedback-sources", "aria-label": "Sources given" });
    for (const source of turn.sources) {
      const place = [source.collection, source.path].filter(Boolean).join(" · ");
      const score = signalWords(source.signals ?? {});
      const entry = element("li", {});
      entry.append(
        element("a", { href: passageHref(source), target: "_blank", rel: "noopener" }, String(source.title ?? "Untitled")),
        element("span", { class: "source-facts" }, ` ${place}${score}`),
      );
      sources.append(entry);
    }
    if (turn.sources.length > 0) item.append(sources);
    const expected = element(
      "p",
      { class: "feedback-expected" },
      expectedWords(turn.expected_chunk_ids.length),
    );
    const open = element("button", { type: "button", "aria-expanded": "false" }, "Name the right passages");
    const picker = new PassagePicker({
      token: this.token,
      turn,
      onSaved: (chunkIds) => {
        turn.expected_chunk_ids = chunkIds;
        expected.textContent = expectedWords(chunkIds.length);
      },
    });
    open.addEventListener("click", () => {
      const opening = picker.root.hidden;
      picker.root.hidden = !opening;
      open.setAttribute("aria-expanded", String(opening));
      if (opening) picker.open();
    });
    item.append(expected, open, picker.root);
    return item;
  }
}

/** Each ranking's score of a source, as " · vector 0.71 · full text 3.20 · …". */
function signalWords(signals) {
  return SIGNALS.filter(([key]) => typeof signals[key] === "number")
    .map(([key, words]) => ` · ${words} ${signals[key].toFixed(2)}`)
    .join("");
}

function expectedWords(count) {
  if (count === 0) return "No passages named: not in the evaluation set.";
  return count === 1 ? "1 passage named: in the evaluation set." : `${count} passages named: in the evaluation set.`;
}

/** A search as the turn's asker, with a checkbox per passage, and a save. */
class PassagePicker {
  constructor({ token, turn, onSaved }) {
    this.token = token;
    this.turn = turn;
    this.onSaved = onSaved;
    this.chosen = new Set(turn.expected_chunk_ids);
    const id = `picker-${turn.turn_id}`;
    this.root = element("div", { class: "passage-picker", hidden: "" });
    this.form = element("form", { class: "token-form", role: "search", "aria-label": "Search as the asker" });
    this.query = element("input", { type: "search", id: `${id}-query`, autocomplete: "off" });
    const field = element("div", { class: "field" });
    field.append(element("label", { for: this.query.id }, "Search as the asker"), this.query);
    this.form.append(field, element("button", { type: "submit" }, "Search"));
    this.results = element("fieldset", { class: "picker-results" });
    this.results.append(element("legend", {}, "Passages that should have been found"));
    this.save = element("button", { type: "button", class: "primary" }, "Save passages");
    this.status = element("p", { class: "status-line", role: "status" });
    this.root.append(this.form, this.results, this.save, this.status);
    this.form.addEventListener("submit", (event) => {
      event.preventDefault();
      this.search();
    });
    this.save.addEventListener("click", () => this.store());
  }

  open() {
    if (this.query.value === "") this.query.value = this.turn.searched_query ?? this.turn.question;
    this.query.focus();
    this.search();
  }

  async search() {
    this.status.textContent = "Searching…";
    try {
      const found = await searchAsAsker(this.token(), this.turn.turn_id, this.query.value, 20);
      const boxes = found.results.map((result) => {
        const box = element("input", { type: "checkbox", id: `pick-${this.turn.turn_id}-${result.chunk_id}` });
        box.checked = this.chosen.has(result.chunk_id);
        box.addEventListener("change", () => {
          if (box.checked) this.chosen.add(result.chunk_id);
          else this.chosen.delete(result.chunk_id);
        });
        const label = element("label", { for: box.id });
        const fused = result.signals?.fused;
        label.append(
          element("strong", {}, String(result.title ?? "Untitled")),
          ` (${result.collection}${fused ? `, fused ${fused.score.toFixed(2)}, rank ${fused.rank}` : ""}) `,
          element("span", { class: "source-snippet" }, String(result.snippet ?? "")),
        );
        const row = element("div", { class: "picker-row" });
        row.append(box, label);
        return row;
      });
      this.results.replaceChildren(this.results.firstChild, ...boxes);
      this.status.textContent = `${found.results.length} passages the asker can read.`;
    } catch (error) {
      this.status.textContent = error.message;
    }
  }

  async store() {
    this.status.textContent = "Saving…";
    try {
      const chunkIds = [...this.chosen];
      await putExpected(this.token(), this.turn.turn_id, chunkIds);
      this.onSaved(chunkIds);
      this.status.textContent = chunkIds.length === 0 ? "Taken out of the evaluation set." : "Saved.";
    } catch (error) {
      this.status.textContent = error.message;
    }
  }
}

export function runRow(run) {
  const settings = run.settings ?? {};
  const rerank = settings.rerank ? (settings.rerank_model ?? "on") : "off";
  const row = element("tr");
  row.append(
    element("th", { scope: "row" }, String(run.id)),
    element("td", {}, new Date(run.created_at).toLocaleString()),
    element("td", {}, String(settings.embedding_model ?? "")),
    element("td", {}, String(settings.chunk_chars ?? "")),
    element("td", {}, rerank),
    element("td", {}, String(run.queries)),
    ...measureCells(run.measures),
  );
  return row;
}

/** The rows of a run's measures by collection (none before runs kept them). */
export function collectionRows(run) {
  const byCollection = Array.isArray(run?.measures?.by_collection) ? run.measures.by_collection : [];
  return byCollection.map((measures) => {
    const row = element("tr");
    row.append(
      element("th", { scope: "row" }, String(measures.collection)),
      element("td", {}, String(measures.queries)),
      ...measureCells(measures),
    );
    return row;
  });
}

/** Documents nDCG@10, passages Recall@10 and MRR@10 (re-ranked when re-ranking ran, else
 * fused), and the share answered. */
function measureCells(measures) {
  const ranking = measures?.reranked ? measures.reranked : measures?.fused;
  const figure = (level, name) => {
    const value = ranking?.[level]?.[name];
    return typeof value === "number" ? value.toFixed(4) : "–";
  };
  return [
    element("td", {}, figure("documents", "ndcg_at_10")),
    element("td", {}, figure("passages", "recall_at_10")),
    element("td", {}, figure("passages", "mrr_at_10")),
    element("td", {}, typeof measures?.answered === "number" ? `${Math.round(100 * measures.answered)} %` : "–"),
  ];
}
