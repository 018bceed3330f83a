// The admin page's limits and usage (docs/PROTOCOL.md, "Usage and limits"): the limits
// set, a form to set one for a person, a group, a key or everyone, and each person's
// use per day as a table. Everything is shown as text only.

import { deleteLimit, fetchGroups, fetchLimits, fetchUsage, fetchUsers, setLimit } from "./admin-api.js";
import { element } from "./dom.js";
import { drawUsageChart } from "./usage-chart.js";

const MEASURES = ["turns_per_day", "tokens_per_day", "tokens_per_month"];
const SUBJECT_WORDS = { user: "Person", group: "Group", key: "API key", everyone: "Everyone" };

export class LimitsAndUsage {
  /** `token()` is the admin token in use (empty with a session). */
  constructor({ token }) {
    this.token = token;
    this.form = document.getElementById("limit-form");
    this.subject = document.getElementById("limit-subject");
    this.name = document.getElementById("limit-name");
    this.names = document.getElementById("limit-names");
    this.table = document.getElementById("limits-table");
    this.status = document.getElementById("limits-status");
    this.usageTable = document.getElementById("usage-table");
    this.usageChart = document.getElementById("usage-chart");
    this.usageStatus = document.getElementById("usage-status");
    this.people = [];
    this.groups = [];
    this.subject.addEventListener("change", () => this.offerNames());
    this.form.addEventListener("submit", (event) => {
      event.preventDefault();
      this.set();
    });
  }

  async load() {
    await Promise.all([this.loadLimits(), this.loadUsage(), this.loadNames()]);
  }

  async loadNames() {
    try {
      const [people, groups] = await Promise.all([
        fetchUsers(this.token()).catch(() => []),
        fetchGroups(this.token()).catch(() => []),
      ]);
      this.people = people.map((person) => person.username);
      this.groups = groups.map((group) => group.name);
    } finally {
      this.offerNames();
    }
  }

  /** The names the name box suggests for the subject chosen. */
  offerNames() {
    const kind = this.subject.value;
    const names = kind === "user" ? this.people : kind === "group" ? this.groups : [];
    this.names.replaceChildren(...names.map((value) => element("option", { value })));
    this.name.disabled = kind === "everyone";
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
    const name = String(data.get("name") ?? "").trim();
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
