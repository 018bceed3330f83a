// The upload part of the admin page: the drop zone (also the label of the visually
// hidden file picker, so it is reached with Tab and opened with Enter or Space), and
// one row per chosen or dropped file with its name, kind and size, a progress bar
// while its bytes go up, then its outcome. Each outcome is said in words with a symbol
// (never by colour alone) in a polite live region of its own. File names, titles and
// reasons are user content: they only ever go in as text.

import { element } from "./dom.js";
import { fileKind, formatBytes, pagesRead } from "./document-file.js";

/** How the summary names each outcome, and whether the file is stored after it. */
const OUTCOMES = {
  imported: { words: "imported", stored: true },
  unchanged: { words: "unchanged", stored: true },
  replaced: { words: "replaced", stored: true },
  skipped: { words: "skipped", stored: false },
  failed: { words: "not uploaded", stored: false },
  refused: { words: "not sent", stored: false },
};

export class Uploads {
  /** `onFiles(files)` takes the files (an array of `File`) picked or dropped. */
  constructor({ onFiles }) {
    this.input = document.getElementById("upload-files");
    this.zone = document.getElementById("drop-zone");
    this.list = document.getElementById("uploads");
    this.rows = [];
    this.input.addEventListener("change", () => {
      const files = [...this.input.files];
      // Emptied, so that choosing the same files again is a change too.
      this.input.value = "";
      onFiles(files);
    });
    // Chromium opens the picker on Space only; a button opens on Enter as well.
    this.input.addEventListener("keydown", (event) => {
      if (event.key !== "Enter") return;
      event.preventDefault();
      this.input.click();
    });
    this.zone.addEventListener("dragover", (event) => {
      if (!carriesFiles(event)) return;
      event.preventDefault();
      event.dataTransfer.dropEffect = "copy";
      this.zone.dataset.dragging = "true";
    });
    this.zone.addEventListener("dragleave", (event) => {
      if (!this.zone.contains(event.relatedTarget)) delete this.zone.dataset.dragging;
    });
    this.zone.addEventListener("drop", (event) => {
      event.preventDefault();
      delete this.zone.dataset.dragging;
      onFiles([...(event.dataTransfer?.files ?? [])]);
    });
    // Files dropped beside the zone are ignored, rather than opened in place of the page.
    window.addEventListener("dragover", (event) => {
      if (!carriesFiles(event) || this.zone.contains(event.target)) return;
      event.preventDefault();
      event.dataTransfer.dropEffect = "none";
    });
    window.addEventListener("drop", (event) => {
      if (carriesFiles(event) && !this.zone.contains(event.target)) event.preventDefault();
    });
  }

  /** Removes every row (a new round of uploads begins). */
  clear() {
    this.rows = [];
    this.list.replaceChildren();
    this.list.hidden = true;
  }

  /** A new row for `file`, waiting. */
  add(file) {
    const row = new UploadRow(file, this.rows.length);
    this.rows.push(row);
    this.list.append(row.item);
    this.list.hidden = false;
    return row;
  }

  /** How many rows there are, and how many have each outcome: "4 files: 2 imported, 1
   *  skipped, 1 not sent." */
  summary() {
    const counts = Object.keys(OUTCOMES)
      .map((outcome) => [outcome, this.rows.filter((row) => row.outcome === outcome).length])
      .filter(([, n]) => n > 0)
      .map(([outcome, n]) => `${n} ${OUTCOMES[outcome].words}`);
    const files = this.rows.length === 1 ? "1 file" : `${this.rows.length} files`;
    return `${files}: ${counts.join(", ")}.`;
  }

  /** `"success"` when every file was stored, `"error"` when none was, else `""`. */
  tone() {
    const stored = this.rows.filter((row) => OUTCOMES[row.outcome]?.stored).length;
    if (stored === this.rows.length) return "success";
    return stored === 0 ? "error" : "";
  }
}

/** One file's row: waiting, sending (with progress), being read, then its outcome. */
class UploadRow {
  constructor(file, index) {
    /** `null` until the file's fate is known, then a key of `OUTCOMES`. */
    this.outcome = null;
    const nameId = `upload-${index}-name`;
    this.item = element("li", { class: "upload" });
    const head = element("p", { class: "upload-head" });
    head.append(
      element("span", { class: "upload-name", id: nameId }, file.name),
      element("span", { class: "upload-meta" }, describe(file)),
    );
    this.bar = element("progress", { max: "1", value: "0", "aria-labelledby": nameId });
    this.progressText = element("span", { class: "upload-progress-text" }, "Waiting…");
    this.progress = element("div", { class: "upload-progress" });
    this.progress.append(this.bar, this.progressText);
    this.result = element("p", { class: "upload-outcome", role: "status" });
    this.item.append(head, this.progress, this.result);
  }

  /** The first bytes are on their way. */
  start() {
    this.progressText.textContent = "Sending…";
  }

  /** `sent` of `total` bytes are up. */
  sent(sent, total) {
    const fraction = total > 0 ? Math.min(sent / total, 1) : 0;
    this.bar.value = fraction;
    this.progressText.textContent = `Sending… ${Math.floor(fraction * 100)} %`;
  }

  /** Every byte is up; the server reads the file and embeds its chunks. */
  reading() {
    this.bar.removeAttribute("value");
    this.progressText.textContent = "Reading and indexing…";
  }

  /** Shows what the server did with the file, from its upload report. */
  done({ documents, skipped }) {
    const stored = documents[0];
    if (!stored) {
      this.settle("skipped", `Skipped. ${skipped[0]?.reason ?? "The server did not say why."}`);
      return;
    }
    const pages = pagesRead(stored);
    const chunks = (stored.chunks === 1 ? "1 chunk" : `${stored.chunks} chunks`) + (pages ? `; ${pages}` : "");
    const title = String(stored.title);
    switch (stored.status) {
      case "unchanged":
        this.settle("unchanged", `Unchanged: “${title}” is already stored, ${chunks}.`);
        return;
      case "replaced":
        this.settle("replaced", `Replaced the earlier version of “${title}”: now ${chunks}.`);
        return;
      default:
        this.settle("imported", `Imported as “${title}”: ${chunks}.`);
    }
  }

  /** The request failed: `message` says why. */
  fail(message) {
    this.settle("failed", `Not uploaded. ${message}`);
  }

  /** The page does not send the file: `reason` says why. */
  refuse(reason) {
    this.settle("refused", `Not sent. ${reason}`);
  }

  settle(outcome, text) {
    this.outcome = outcome;
    this.item.dataset.stored = String(OUTCOMES[outcome].stored);
    this.progress.hidden = true;
    this.result.textContent = text;
  }
}

/** "PDF · 58 KiB" */
function describe(file) {
  return [fileKind(file), formatBytes(file.size)].filter(Boolean).join(" · ");
}

function carriesFiles(event) {
  return event.dataTransfer?.types?.includes("Files") ?? false;
}

/**
 * What "Add from URL" says of the server's report: how many pages were stored, then
 * each page skipped with its reason (user content: shown only as text).
 */
export function urlReportSummary(report) {
  const stored = report.documents.length;
  const skipped = report.skipped.length;
  const parts = [`${stored} ${stored === 1 ? "page" : "pages"} added or up to date`];
  if (skipped > 0) {
    const reasons = report.skipped.map(({ url, reason }) => `${url}: ${reason}`).join("; ");
    parts.push(`${skipped} skipped (${reasons})`);
  }
  for (const note of report.notes ?? []) parts.push(note);
  return `${parts.join("; ")}.`;
}

/** What the watcher last did with its files, in one line; "" when it watched none. */
export function watchedFilesSummary(report) {
  const total = report.imported + report.skipped + report.removed;
  if (total === 0) return "";
  return `${report.imported} imported, ${report.skipped} skipped, ${report.removed} removed.`;
}
