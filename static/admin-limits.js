// The admin page's limits and usage (docs/PROTOCOL.md, "Usage and limits"): the limits
// set, a form to set one for a person, a group, a key or everyone, and each person's
// use per day as a table. Everything is shown as text only.

import { deleteLimit, fetchLimits, fetchUsage, setLimit } from "./admin-api.js";
import { NamePicker } from "./admin-picker.js";
import { element } from "./dom.js";
import { drawUsageChart } from "./usage-chart.js";

const MEASURES = ["turns_per_day", "tokens_per_day", "tokens_per_month"];
const SUBJECT_WORDS = { user: "Person", group: "Group", key: "API key", everyone: "Everyone" };

export class LimitsAndUsage {
  /** `token()` is the admin token in use (empty with a session); `names` offers the
   *  people and groups a limit may name (`people()`, `groups()`: `[{value, label}]`). */
  constructor({ token, names }) {
    this.token = token;
    this.names = names;
    this.form = document.getElementById("limit-form");
    this.subject = document.getElementById("limit-subject");
    this.who = new NamePicker({
      id: "limit-who",
      label: "Name",
      offers: () => (this.subject.value === "group" ? this.names.groups() : this.names.people()),
      kind: "person or group",
    });
    document.getElementById("limit-who-slot").replaceWith(this.who.root);
    this.whoField = document.getElementById("limit-who-field");
    this.keyField = document.getElementById("limit-key-field");
    this.key = document.getElementById("limit-key");
    this.table = document.getElementById("limits-table");
    this.status = document.getElementById("limits-status");
    this.usageTable = document.getElementById("usage-table");
    this.usageChart = document.getElementById("usage-chart");
    this.usageStatus = document.getElementById("usage-status");
    this.subject.addEventListener("change", () => this.offerNames());
    this.form.addEventListener("submit", (event) => {
      event.preventDefault();
      this.set();
    });
  }

  async load() {
    this.offerNames();
    await Promise.all([this.loadLimits(), this.loadUsage()]);
  }

  /** The name picker for a person or a group, the key's id box for a key, neither
   *  for everyone. */
  offerNames() {
    const kind = this.subject.value;
    this.whoField.hidden = kind !== "user" && kind !== "group";
    this.keyField.hidden = kind !== "key";
    if (this.who.input.value.trim() !== "") this.who.check({ explain: false });
  }

  async loadLimits() {
    try {
      const limits = await fetchLimits(this.token());
      this.table.tBodies[0].replaceChildren(...limits.map((limit) => this.limitRow(limit)));
      this.table.hidden = limits.length === 0;
      this.status.textContent = limits.length === 0 ? "No limits are set." : "";
    } catch (error) {
      this.status.textContent = error.message;
    }
  }

  limitRow(limit) {
    const who = limit.subject === "everyone" ? "Everyone" : `${SUBJECT_WORDS[limit.subject] ?? limit.subject} ${limit.name}`;
    const remove = element("button", { type: "button" }, "Remove");
    remove.setAttribute("aria-label", `Remove the limit for ${who}`);
    remove.addEventListener("click", () => this.remove(limit, who));
    const action = element("td");
    action.append(remove);
    const row = element("tr");
    row.append(
      element("td", {}, who),
      ...MEASURES.map((measure) => element("td", {}, limit[measure] === null ? "—" : String(limit[measure]))),
      action,
    );
    return row;
  }

  async set() {
    const data = new FormData(this.form);
    const kind = this.subject.value;
    if ((kind === "user" || kind === "group") && !this.who.check()) {
      this.status.textContent = "Pick who the limit is for from the list.";
      this.who.focus();
      return;
    }
    const name = kind === "key" ? this.key.value.trim() : this.who.value;
    const limit = kind === "everyone" ? { everyone: true } : { [kind]: name };
    for (const measure of MEASURES) {
      const value = String(data.get(measure) ?? "").trim();
      if (value !== "") limit[measure] = Number(value);
    }
    if (kind !== "everyone" && name === "") {
      this.status.textContent = "Name who the limit is for.";
      return;
    }
    this.status.textContent = "Setting the limit…";
    try {
      await setLimit(this.token(), limit);
      this.form.reset();
      this.who.value = "";
      this.offerNames();
      await this.loadLimits();
      this.status.textContent = "Limit set.";
    } catch (error) {
      this.status.textContent = error.message;
    }
  }

  async remove(limit, who) {
    this.status.textContent = `Removing the limit for ${who}…`;
    try {
      await deleteLimit(this.token(), limit.id);
      await this.loadLimits();
      this.status.textContent = `Removed the limit for ${who}.`;
    } catch (error) {
      this.status.textContent = error.message;
    }
  }

  async loadUsage() {
    this.usageStatus.textContent = "Loading the usage…";
    try {
      const report = await fetchUsage(this.token());
      const rows = report.rows.filter((row) => row.dimension === "user").reverse();
      drawUsageChart(this.usageChart, report);
      this.usageTable.tBodies[0].replaceChildren(...rows.map(usageRow));
      this.usageTable.hidden = rows.length === 0;
      this.usageStatus.textContent = rows.length === 0 ? "No turns in the last 30 days." : "";
    } catch (error) {
      this.usageStatus.textContent = error.message;
    }
  }
}

const percent = (share) => `${Math.round(share * 100)} %`;

function usageRow(row) {
  const line = element("tr");
  line.append(
    element("td", {}, row.day),
    element("td", {}, String(row.name)),
    element("td", {}, String(row.turns)),
    element("td", {}, String(row.prompt_tokens)),
    element("td", {}, String(row.completion_tokens)),
    element("td", {}, percent(row.estimated_share)),
    element("td", {}, percent(row.grounded_share)),
  );
  return line;
}
