// The admin page's usage chart: tokens in and out per day (UTC) over the period, all
// people together, drawn by uPlot (vendored, static/vendor; docs/PROTOCOL.md, "Usage
// and limits"). The chart is a picture for sighted readers: its label says what it
// shows in words, and the table under it holds every figure.

const { uPlot } = globalThis;

const DAY_MS = 24 * 60 * 60 * 1000;

/** Every day (UTC) of the report's period with its totals, zero where nothing was
 *  used: `{days: ["YYYY-MM-DD", …], prompt: [...], completion: [...], turns: [...]}`,
 *  from its rows of people (each turn counts once there). */
export function dailyTotals(report) {
  const byDay = new Map();
  for (const row of report.rows) {
    if (row.dimension !== "user") continue;
    const day = byDay.get(row.day) ?? { prompt: 0, completion: 0, turns: 0 };
    day.prompt += row.prompt_tokens;
    day.completion += row.completion_tokens;
    day.turns += row.turns;
    byDay.set(row.day, day);
  }
  const days = [];
  const until = Date.parse(report.until);
  for (let at = Date.parse(report.since.slice(0, 10)); at < until && days.length < 400; at += DAY_MS) {
    days.push(new Date(at).toISOString().slice(0, 10));
  }
  for (const day of byDay.keys()) if (!days.includes(day)) days.push(day);
  days.sort();
  const of = (day) => byDay.get(day) ?? { prompt: 0, completion: 0, turns: 0 };
  return {
    days,
    prompt: days.map((day) => of(day).prompt),
    completion: days.map((day) => of(day).completion),
    turns: days.map((day) => of(day).turns),
  };
}

/** A colour of the page's palette as the canvas takes it (the palette's light-dark()
 *  resolved for the theme in use). */
function resolvedColour(container, name) {
  const probe = document.createElement("span");
  probe.style.color = `var(${name})`;
  container.append(probe);
  const colour = getComputedStyle(probe).color;
  probe.remove();
  return colour;
}

/** What the chart shows, in words (its accessible name). */
export function describe(totals) {
  const sum = (values) => values.reduce((all, value) => all + value, 0);
  if (sum(totals.turns) === 0) return "No tokens used in the period.";
  const first = totals.days[0];
  const last = totals.days[totals.days.length - 1];
  return `Tokens per day from ${first} to ${last}: ${sum(totals.prompt)} in and ${sum(totals.completion)} out, over ${sum(totals.turns)} turns.`;
}

/** Draws the chart of `report` (`GET /api/admin/usage`) into `container`, replacing
 *  one drawn before. */
export function drawUsageChart(container, report) {
  const totals = dailyTotals(report);
  container.replaceChildren();
  container.setAttribute("aria-label", describe(totals));
  container.hidden = totals.turns.every((turns) => turns === 0) || uPlot === undefined;
  if (container.hidden) return;
  const colour = (name) => resolvedColour(container, name);
  const x = totals.days.map((day) => Date.parse(`${day}T00:00:00Z`) / 1000);
  const width = Math.max(280, container.clientWidth || 600);
  new uPlot(
    {
      width,
      height: 220,
      tzDate: (seconds) => uPlot.tzDate(new Date(seconds * 1000), "Etc/UTC"),
      scales: { x: { time: true } },
      axes: [
        { stroke: colour("--muted"), grid: { stroke: colour("--border") } },
        { stroke: colour("--muted"), grid: { stroke: colour("--border") }, size: 60 },
      ],
      series: [
        {},
        { label: "Tokens in", stroke: colour("--accent"), width: 2, points: { show: true } },
        { label: "Tokens out", stroke: colour("--warning"), width: 2, dash: [6, 4], points: { show: true } },
      ],
    },
    [x, totals.prompt, totals.completion],
    container,
  );
}
