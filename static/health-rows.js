// The admin health report (`GET /api/admin/health`) as readable rows, one list per
// section. A row is `{label, value, tone}`; `tone` "bad" or "warn" marks trouble, and
// the value's words say it too (the page never relies on colour alone).

/** How each overall status reads on the page. */
export const OVERALL = {
  ok: { label: "OK", summary: "All checks pass." },
  degraded: { label: "Degraded", summary: "bor answers, but not fully: see the problems." },
  down: { label: "Down", summary: "bor cannot answer: see the problems." },
};

/**
 * The sections of the report, in page order, each `[id, rows]`; the embeddings
 * server's rows are `null` when the chat server serves the embeddings too.
 */
export function healthSections(report) {
  return [
    ["database", databaseRows(report.database ?? {})],
    ["llm", llmRows(report.llm ?? {})],
    ["llm_embeddings", report.llm_embeddings ? llmRows(report.llm_embeddings) : null],
    ["knowledge", knowledgeRows(report.knowledge ?? {})],
    ["turns", turnRows(report.turns ?? {})],
    ["log", logRows(report.log ?? {})],
    ["config", configRows(report.config ?? {})],
  ];
}

export function databaseRows(database) {
  const pending = Array.isArray(database.migrations?.pending) ? database.migrations.pending : [];
  const applied = count(database.migrations?.applied);
  return withError(database.error, [
    reachability(database.reachable),
    row("Latency", formatLatency(database.latency_ms)),
    pending.length === 0
      ? row("Migrations", `${applied} applied, none pending`)
      : row("Migrations", `${applied} applied, pending: ${pending.join(", ")}`, "warn"),
    row("Address", text(database.url)),
  ]);
}

export function llmRows(llm) {
  const models = Array.isArray(llm.models) ? llm.models : [];
  return withError(llm.error, [
    reachability(llm.reachable),
    row("Latency", formatLatency(llm.latency_ms)),
    // `null`: a model this server is not there for (chat and embeddings on two servers).
    ...(llm.chat_model === null ? [] : [modelRow("Chat model", llm.chat_model)]),
    ...(llm.embed_model === null ? [] : [modelRow("Embedding model", llm.embed_model)]),
    row("Models offered", models.length === 0 ? "none" : models.join(", ")),
    row("Address", text(llm.url)),
  ]);
}

export function knowledgeRows(knowledge) {
  const mismatch = knowledge.dimension_mismatch ?? 0;
  const otherEmbedder = knowledge.other_embedder ?? 0;
  return withError(knowledge.error, [
    row("Documents", count(knowledge.documents)),
    row("Chunks", count(knowledge.chunks)),
    row(
      "Embedding dimension",
      knowledge.embedding_dimension == null ? "none yet" : count(knowledge.embedding_dimension),
    ),
    mismatch > 0
      ? row("Dimension mismatch", `${count(mismatch)} chunk(s) left out: run bor reembed`, "warn")
      : row("Dimension mismatch", "none"),
    otherEmbedder > 0
      ? row(
          "Other embedder",
          `${count(otherEmbedder)} chunk(s) of this dimension made by another model or document prefix: run bor reembed`,
          "warn",
        )
      : row("Other embedder", "none"),
  ]);
}

export function turnRows(turns) {
  const ended = turns.ended ?? {};
  const byPath = Object.entries(ended.by_path ?? {}).map(([path, n]) =>
    row(`Ended ${path.replaceAll("_", " ")}`, count(n)),
  );
  return [
    row("In flight", `${count(turns.in_flight)} of ${count(turns.max)}`),
    turns.accepting === false
      ? row("Accepting new turns", "no (stopping)", "warn")
      : row("Accepting new turns", turns.accepting === true ? "yes" : "—"),
    row("Answered", count(ended.done)),
    row("Failed", count(ended.error), ended.error > 0 ? "warn" : ""),
    row("Stopped", count(ended.stopped)),
    ...byPath,
  ];
}

export function logRows(log) {
  const trouble = (n) => (n > 0 ? "warn" : "");
  return [
    row("Waiting to be written", count(log.queued), trouble(log.queued)),
    row("Written", count(log.written)),
    row("Failed writes", count(log.failed_writes), trouble(log.failed_writes)),
    row("Dropped", count(log.dropped), trouble(log.dropped)),
  ];
}

/**
 * The configuration as `BOR_*` variables, sorted by name; the secrets come as "set" or
 * "unset" (the server never sends their values), a setting without a value as "unset".
 */
export function configRows(config) {
  return Object.entries(config)
    .map(([name, value]) => row(`BOR_${name.toUpperCase()}`, shownValue(value)))
    .sort((a, b) => (a.label < b.label ? -1 : a.label > b.label ? 1 : 0));
}

/** A setting as the page shows it: no value reads "unset", like a secret not set. */
function shownValue(value) {
  if (value === null || value === undefined) return "unset";
  return typeof value === "string" ? value : JSON.stringify(value);
}

/** `3725` → "1 h 2 min"; whole units, the two largest. */
export function formatUptime(seconds) {
  if (typeof seconds !== "number" || !Number.isFinite(seconds) || seconds < 0) return "—";
  const s = Math.floor(seconds);
  if (s < 60) return `${s} s`;
  const minutes = Math.floor(s / 60);
  if (minutes < 60) return `${minutes} min`;
  const hours = Math.floor(minutes / 60);
  if (hours < 24) return `${hours} h ${minutes % 60} min`;
  return `${Math.floor(hours / 24)} d ${hours % 24} h`;
}

/** Milliseconds, one decimal below 10 ms; "—" when not measured. */
export function formatLatency(ms) {
  if (typeof ms !== "number" || !Number.isFinite(ms)) return "—";
  return `${ms < 10 ? ms.toFixed(1) : Math.round(ms)} ms`;
}

function reachability(reachable) {
  if (reachable === true) return row("Reachable", "yes");
  return row("Reachable", reachable === false ? "no" : "—", "bad");
}

function modelRow(label, model) {
  const name = text(model?.name);
  switch (model?.listed) {
    case true:
      return row(label, `${name} (listed)`);
    case false:
      return row(label, `${name} (not listed by the server)`, "bad");
    default:
      return row(label, `${name} (not checked)`, "warn");
  }
}

function withError(error, rows) {
  return typeof error === "string" && error !== "" ? [...rows, row("Error", error, "bad")] : rows;
}

function row(label, value, tone = "") {
  return { label, value, tone };
}

function count(n) {
  return typeof n === "number" && Number.isFinite(n) ? n.toLocaleString("en") : "—";
}

function text(value) {
  return typeof value === "string" && value !== "" ? value : "—";
}
