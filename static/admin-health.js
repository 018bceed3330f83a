// The health part of the admin page: the overall state, the problems and one
// definition list per section, redrawn in place (the page's own elements stay, so
// focus and the open state of the configuration survive a refresh).

import { element } from "./dom.js";
import { OVERALL, formatUptime, healthSections } from "./health-rows.js";

export class HealthView {
  constructor() {
    this.overall = document.getElementById("overall");
    this.label = document.getElementById("overall-label");
    this.summary = document.getElementById("overall-summary");
    this.meta = document.getElementById("health-meta");
    this.problems = document.getElementById("problems");
    this.noProblems = document.getElementById("no-problems");
    this.lists = new Map(
      ["database", "llm", "llm_embeddings", "knowledge", "turns", "log", "config"].map((id) => [
        id,
        document.getElementById(`health-${id}`),
      ]),
    );
  }

  /** Shows `report`, checked at `when` (a Date). */
  show(report, when) {
    const overall = OVERALL[report.status] ?? {
      label: String(report.status),
      summary: "The service reported a status this page does not know.",
    };
    this.overall.dataset.status = report.status in OVERALL ? report.status : "unknown";
    this.label.textContent = overall.label;
    this.summary.textContent = overall.summary;
    this.meta.textContent = [
      `bor ${report.version ?? "?"}`,
      `up ${formatUptime(report.uptime_seconds)}`,
      `checked at ${when.toLocaleTimeString()}`,
    ].join(" · ");

    const problems = Array.isArray(report.problems) ? report.problems.map(String) : [];
    this.problems.replaceChildren(...problems.map((problem) => element("li", {}, problem)));
    this.problems.hidden = problems.length === 0;
    this.noProblems.hidden = problems.length > 0;

    for (const [id, rows] of healthSections(report)) {
      const list = this.lists.get(id);
      list.closest("section").hidden = rows === null;
      list.replaceChildren(...(rows ?? []).map(definition));
    }
  }

  /** Keeps the last report on screen but says it could not be checked again. */
  showFailure(message) {
    this.overall.dataset.status = "unknown";
    this.label.textContent = "Unknown";
    this.summary.textContent = message;
  }
}

/** One term and its value, grouped (`dl > div`) so that they lay out as a row. */
function definition({ label, value, tone }) {
  const pair = element("div", { class: "pair" });
  pair.append(element("dt", {}, label), element("dd", tone ? { "data-tone": tone } : {}, value));
  return pair;
}
