// The admin page: the admin token (kept in sessionStorage), its sections each at their
// own address (admin-sections.js), the service's health with a gentle auto-refresh, the
// documents: upload (several files, picked or dropped) into a collection, find, list,
// delete; the collections and groups (admin-collections.js); and the "Try retrieval"
// box (admin-search.js).

import { mountAccountMenu } from "./account-menu.js";
import {
  ApiError,
  addFromUrl,
  deleteDocument,
  fetchAdminDocuments,
  fetchGroups,
  fetchHealth,
  fetchUsers,
  fetchWatchedFiles,
  searchKnowledge,
  uploadFile,
} from "./admin-api.js";
import { Collections, Groups } from "./admin-collections.js";
import { DocumentFinder, DocumentList } from "./admin-documents.js";
import { AuditTrail } from "./admin-audit.js";
import { LimitsAndUsage } from "./admin-limits.js";
import { FeedbackReview } from "./admin-feedback.js";
import { HealthView } from "./admin-health.js";
import { People } from "./admin-people.js";
import { RetrievalTrial } from "./admin-search.js";
import { SectionNav } from "./admin-sections.js";
import { Uploads, urlReportSummary, watchedFilesSummary } from "./admin-uploads.js";
import { formatBytes, refusal } from "./document-file.js";
import { OVERALL } from "./health-rows.js";

const TOKEN_KEY = "bor.adminToken";
/** The health check repeats this long after the last one ended (while the tab shows). */
const AUTO_REFRESH_MS = 10_000;

const ui = {
  tokenPanel: document.getElementById("token-heading").closest("section"),
  tokenForm: document.getElementById("token-form"),
  token: document.getElementById("token"),
  useToken: document.getElementById("use-token"),
  tokenHint: document.getElementById("token-hint"),
  tokenKept: document.getElementById("token-kept"),
  forget: document.getElementById("forget-token"),
  authMessage: document.getElementById("auth-message"),
  tokenStatus: document.getElementById("token-status"),
  adminArea: document.getElementById("admin-area"),
  overall: document.getElementById("overall"),
  healthStatus: document.getElementById("health-status"),
  autoRefresh: document.getElementById("auto-refresh"),
  refresh: document.getElementById("refresh"),
  uploadLimit: document.getElementById("upload-limit"),
  documentsStatus: document.getElementById("documents-status"),
  urlForm: document.getElementById("url-form"),
  urlInput: document.getElementById("url-input"),
  urlCrawl: document.getElementById("url-crawl"),
  urlAdd: document.getElementById("url-add"),
  urlStatus: document.getElementById("url-status"),
  uploadCollection: document.getElementById("upload-collection"),
  watched: document.getElementById("watched"),
  watchedSummary: document.getElementById("watched-summary"),
  watchedSkipped: document.getElementById("watched-skipped"),
};

const state = {
  /** The token in use; null while the page asks for one. */
  token: null,
  /** Numbers the health and document requests: only the latest one's answer is shown. */
  healthTicket: 0,
  documentsTicket: 0,
  /** The overall status last shown, to announce changes only. */
  lastStatus: null,
  timer: null,
  refreshWhenVisible: false,
  checkingToken: false,
  /** The files waiting to be sent, `{file, row}`, in order. */
  queue: [],
  /** Numbers the rounds of uploads: a round from before the token was forgotten stops. */
  uploadsTicket: 0,
  uploading: false,
  /** The most bytes the server takes in one file (`BOR_MAX_UPLOAD_BYTES`), once known. */
  maxUploadBytes: null,
};

/** The people and groups there are, for the pickers and the filters. */
const directory = { people: [], groups: [] };
const names = {
  people: () => directory.people.map((person) => ({ value: person.username, label: person.display_name })),
  groups: () => directory.groups.map((group) => ({ value: group.name, label: group.name })),
};

const health = new HealthView();
const documentList = new DocumentList({ remove: removeDocument });
const finder = new DocumentFinder({ fetchPage: fetchDocumentPage, list: documentList });
const uploads = new Uploads({ onFiles: addFiles });
new RetrievalTrial({ search: searchKnowledge });
const collections = new Collections({
  token: () => state.token,
  names,
  onList: offerCollections,
  onDeleted: () => loadDocuments(),
});
const groups = new Groups({
  token: () => state.token,
  names,
  onChanged: () => {
    collections.load();
    loadNames();
  },
});
const feedback = new FeedbackReview({ token: () => state.token });
const audit = new AuditTrail({ token: () => state.token });
const limits = new LimitsAndUsage({ token: () => state.token, names });
/** The People panel: an admin's session only (it is made then). */
let people = null;
const sections = new SectionNav({
  onChange: (section) => {
    people?.forgetSecret();
    if (section === "documents") finder.keepInAddress();
  },
});

async function start() {
  ui.urlForm.addEventListener("submit", (event) => {
    event.preventDefault();
    addUrl();
  });
  ui.tokenForm.addEventListener("submit", (event) => {
    event.preventDefault();
    useTypedToken();
  });
  ui.token.addEventListener("input", () => ui.token.removeAttribute("aria-invalid"));
  ui.forget.addEventListener("click", () => {
    leave();
    setStatus(ui.tokenStatus, "Token forgotten.");
  });
  ui.refresh.addEventListener("click", () => {
    refreshHealth({ manual: true });
    loadDocuments();
  });
  ui.autoRefresh.addEventListener("change", scheduleRefresh);
  document.addEventListener("visibilitychange", () => {
    if (!document.hidden && state.refreshWhenVisible) {
      state.refreshWhenVisible = false;
      refreshHealth({ manual: false });
    }
  });

  // At phone width the account is a menu, so that the top bar keeps to one row.
  const me = await mountAccountMenu(document.getElementById("account"), { compact: true });
  const offered = tokenFromAddress();
  const saved = readStoredToken();
  if (me?.session && me.user.role === "admin" && !offered) {
    // An admin's session opens the page: no token to ask for, and the people to manage.
    ui.tokenPanel.hidden = true;
    const peopleStatus = document.getElementById("people-status");
    people = new People({
      token: () => state.token,
      say: (text, tone) => setStatus(peopleStatus, text, tone),
      onChanged: loadNames,
    });
    sections.offer("people", true);
    enter("");
    refreshHealth({ manual: false });
    loadDocuments();
    people.load();
  } else if (me?.session && !offered) {
    // A member's session: the page is not theirs, and no token is theirs to type.
    ui.tokenPanel.hidden = true;
    document.getElementById("not-admin-name").textContent = me.user.display_name;
    document.getElementById("not-admin").hidden = false;
  } else if (offered) {
    // `make run` prints the page's address with its token after `#token=`: checked
    // and kept like a typed one, and taken out of the address bar and the history.
    ui.token.value = offered;
    useTypedToken();
  } else if (saved) {
    // A token that worked earlier in this tab: use it; a refusal brings the form back.
    enter(saved);
    refreshHealth({ manual: false });
    loadDocuments();
  } else {
    ui.token.focus();
  }
}

/** Checks the typed token against the health endpoint; keeps it when it is accepted. */
async function useTypedToken() {
  if (state.checkingToken) return;
  const token = ui.token.value.trim();
  if (token === "") {
    showAuthMessage("Enter the admin token first.");
    ui.token.focus();
    return;
  }
  hideAuthMessage();
  setStatus(ui.tokenStatus, "Checking the token…");
  state.checkingToken = true;
  setBusy(ui.useToken, true);
  let report;
  try {
    report = await fetchHealth(token);
  } catch (error) {
    setStatus(ui.tokenStatus, "");
    showAuthMessage(messageOf(error));
    ui.token.select();
    return;
  } finally {
    state.checkingToken = false;
    setBusy(ui.useToken, false);
  }
  ui.token.value = "";
  enter(token);
  setStatus(
    ui.tokenStatus,
    storeToken(token)
      ? "Token accepted."
      : "Token accepted, but this browser would not keep it: it is gone after a reload.",
  );
  showHealth(report, { manual: false });
  scheduleRefresh();
  loadDocuments();
  sections.focusCurrent();
}

/** Shows the admin area, working with `token`. */
function enter(token) {
  state.token = token;
  ui.tokenForm.hidden = true;
  ui.tokenHint.hidden = true;
  ui.tokenKept.hidden = false;
  ui.adminArea.hidden = false;
  sections.start();
  loadNames();
  groups.load();
  feedback.load();
  limits.load();
  audit.load();
}

/** Back to the token form, the token forgotten; `message` says why, if anything went wrong. */
function leave(message) {
  state.token = null;
  state.healthTicket += 1;
  state.documentsTicket += 1;
  state.uploadsTicket += 1;
  state.queue = [];
  state.uploading = false;
  state.lastStatus = null;
  clearTimeout(state.timer);
  ui.overall.removeAttribute("aria-busy");
  forgetStoredToken();
  ui.tokenPanel.hidden = false;
  ui.adminArea.hidden = true;
  ui.tokenKept.hidden = true;
  ui.tokenForm.hidden = false;
  ui.tokenHint.hidden = false;
  setStatus(ui.tokenStatus, "");
  setStatus(ui.healthStatus, "");
  setStatus(ui.documentsStatus, "");
  finder.clear();
  uploads.clear();
  if (message) showAuthMessage(message);
  else hideAuthMessage();
  ui.token.focus();
}

/** Fetches the health report; `manual` (the Refresh button) also announces the result. */
async function refreshHealth({ manual }) {
  const token = state.token;
  if (token === null) return;
  clearTimeout(state.timer);
  const ticket = (state.healthTicket += 1);
  const current = () => ticket === state.healthTicket && state.token === token;
  ui.overall.setAttribute("aria-busy", "true");
  if (manual) setStatus(ui.healthStatus, "Checking…");
  try {
    showHealth(await fetchHealth(token), { manual, current });
  } catch (error) {
    if (!current()) return;
    if (error instanceof ApiError && error.isAuthFailure) {
      leave(error.message);
      return;
    }
    health.showFailure(messageOf(error));
    setStatus(ui.healthStatus, `Could not check the health. ${messageOf(error)}`, "error");
    state.lastStatus = "unknown";
  } finally {
    if (current()) {
      ui.overall.removeAttribute("aria-busy");
      scheduleRefresh();
    }
  }
}

/** Draws `report`; announces it when asked for, or when the overall status changed. */
function showHealth(report, { manual, current = () => true }) {
  if (!current()) return;
  const when = new Date();
  health.show(report, when);
  showUploadLimit(report.config?.max_upload_bytes);
  const label = OVERALL[report.status]?.label ?? String(report.status);
  if (manual) {
    setStatus(ui.healthStatus, `Checked at ${when.toLocaleTimeString()}: ${label}.`);
  } else if (state.lastStatus === null) {
    setStatus(ui.healthStatus, `Status: ${label}.`);
  } else if (state.lastStatus !== report.status) {
    setStatus(ui.healthStatus, `Status changed to ${label}.`);
  }
  state.lastStatus = report.status;
}

/** Plans the next automatic check; a hidden tab waits until it shows again. */
function scheduleRefresh() {
  clearTimeout(state.timer);
  state.refreshWhenVisible = false;
  if (state.token === null || !ui.autoRefresh.checked) return;
  state.timer = setTimeout(() => {
    if (document.hidden) state.refreshWhenVisible = true;
    else refreshHealth({ manual: false });
  }, AUTO_REFRESH_MS);
}

/** The watcher's file states, shown only when it watched any; paths and reasons as text. */
async function loadWatchedFiles(token) {
  let report;
  try {
    report = await fetchWatchedFiles(token);
  } catch {
    ui.watched.hidden = true;
    return;
  }
  const summary = watchedFilesSummary(report);
  ui.watchedSummary.textContent = summary;
  ui.watchedSkipped.replaceChildren(
    ...report.skipped_files.map(({ path, reason }) => {
      const item = document.createElement("li");
      item.textContent = `${path}: ${reason ?? "skipped"}`;
      return item;
    }),
  );
  ui.watched.hidden = summary === "";
}

/** "Add from URL": the page (or pages) fetched by the server, then the list refreshed. */
async function addUrl() {
  const url = ui.urlInput.value.trim();
  if (state.token === null || url === "") return;
  const crawl = Number.parseInt(ui.urlCrawl.value, 10);
  ui.urlAdd.disabled = true;
  setStatus(ui.urlStatus, "Fetching…", "busy");
  try {
    const report = await addFromUrl(
      state.token,
      url,
      Number.isSafeInteger(crawl) ? crawl : 1,
      ui.uploadCollection.value,
    );
    setStatus(ui.urlStatus, urlReportSummary(report), report.skipped.length > 0 ? "error" : "success");
    if (report.documents.length > 0) loadDocuments();
  } catch (error) {
    if (error instanceof ApiError && error.isAuthFailure) {
      leave(error.message);
      return;
    }
    setStatus(ui.urlStatus, `Could not add the page. ${messageOf(error)}`, "error");
  } finally {
    ui.urlAdd.disabled = false;
  }
}

/** The people and groups the pickers and the filters offer, read again. */
async function loadNames() {
  const token = state.token;
  if (token === null) return;
  const [people, groups] = await Promise.all([fetchUsers(token).catch(() => null), fetchGroups(token).catch(() => null)]);
  if (state.token !== token) return;
  if (people) directory.people = people;
  if (groups) directory.groups = groups;
  finder.offerPeople(directory.people);
}

/** The collection chooser of uploads and "Add from URL" offers every collection; the
 *  one chosen stays chosen while it exists. */
function offerCollections(list) {
  const collectionNames = list.map(({ name }) => String(name));
  finder.offerCollections(collectionNames);
  const chosen = ui.uploadCollection.value;
  ui.uploadCollection.replaceChildren(
    ...collectionNames.map((name) => {
      const option = document.createElement("option");
      option.value = name;
      option.textContent = name;
      return option;
    }),
  );
  ui.uploadCollection.value = collectionNames.includes(chosen)
    ? chosen
    : collectionNames.includes("default")
      ? "default"
      : (collectionNames[0] ?? "");
}

/** The documents (the first page for the filters set), with the collections (their
 *  counts change with them). */
async function loadDocuments() {
  if (state.token === null) return;
  loadWatchedFiles(state.token);
  collections.load();
  await finder.reload();
}

/** A page of documents for `filters`; null (the failure shown) when it could not be had. */
async function fetchDocumentPage(filters) {
  const token = state.token;
  const ticket = (state.documentsTicket += 1);
  if (token === null) return null;
  try {
    const page = await fetchAdminDocuments(token, filters);
    return ticket === state.documentsTicket && state.token === token ? page : null;
  } catch (error) {
    if (error instanceof ApiError && error.isAuthFailure) {
      leave(error.message);
      return null;
    }
    if (ticket === state.documentsTicket) {
      setStatus(ui.documentsStatus, `Could not list the documents. ${messageOf(error)}`, "error");
    }
    return null;
  }
}

/** The server's bound on a file, when the health report tells it. */
function showUploadLimit(maxBytes) {
  state.maxUploadBytes = Number.isSafeInteger(maxBytes) && maxBytes > 0 ? maxBytes : null;
  ui.uploadLimit.textContent =
    state.maxUploadBytes === null ? "" : ` Each may be at most ${formatBytes(state.maxUploadBytes)}.`;
}

/**
 * Takes files picked or dropped: those the server is bound to refuse get their reason
 * at once, the others join the queue. A new round (nothing on its way) clears the rows
 * of the last one.
 */
function addFiles(files) {
  if (state.token === null || files.length === 0) return;
  if (!state.uploading) uploads.clear();
  for (const file of files) {
    const row = uploads.add(file);
    const reason = refusal(file, state.maxUploadBytes);
    if (reason === null) state.queue.push({ file, row });
    else row.refuse(reason);
  }
  if (state.uploading) return;
  if (state.queue.length === 0) {
    setStatus(ui.documentsStatus, uploads.summary(), uploads.tone());
    return;
  }
  sendQueued();
}

/**
 * Sends the queued files one after another, one request each: every file gets its own
 * progress and its own answer, a file that fails stops no other, and the server reads
 * and embeds one file at a time anyway. The list is refreshed after each file stored.
 */
async function sendQueued() {
  const token = state.token;
  const collection = ui.uploadCollection.value;
  const ticket = state.uploadsTicket;
  const current = () => ticket === state.uploadsTicket;
  state.uploading = true;
  setStatus(ui.documentsStatus, "Uploading…", "busy");
  let stored = false;
  while (state.queue.length > 0) {
    const { file, row } = state.queue.shift();
    row.start();
    try {
      const report = await uploadFile(token, file, collection, {
        onProgress: (sent, total) => row.sent(sent, total),
        onSent: () => row.reading(),
      });
      if (!current()) return;
      row.done(report);
      if (report.documents.length > 0) {
        stored = true;
        loadDocuments();
      }
    } catch (error) {
      if (!current()) return;
      if (error instanceof ApiError && error.isAuthFailure) {
        leave(error.message);
        return;
      }
      row.fail(messageOf(error));
    }
  }
  state.uploading = false;
  setStatus(ui.documentsStatus, uploads.summary(), uploads.tone());
  if (stored) refreshHealth({ manual: false });
}

/** Deletes `doc` (after the table's confirmation) and shows the outcome. */
async function removeDocument(doc) {
  const title = String(doc.title);
  setStatus(ui.documentsStatus, `Deleting “${title}”…`, "busy");
  try {
    const deleted = await deleteDocument(state.token, doc.id);
    documentList.show(documentList.documents.filter((candidate) => candidate.id !== doc.id));
    const outcome = deleted ? `Deleted “${title}”.` : `“${title}” was already gone.`;
    setStatus(ui.documentsStatus, outcome, "success");
  } catch (error) {
    if (error instanceof ApiError && error.isAuthFailure) {
      leave(error.message);
      return;
    }
    setStatus(ui.documentsStatus, `Could not delete “${title}”. ${messageOf(error)}`, "error");
  }
  await loadDocuments();
  refreshHealth({ manual: false });
}

/**
 * Marks a button as working (it ignores presses meanwhile). Not `disabled`: that would
 * take the keyboard focus away from it.
 */
function setBusy(button, busy) {
  if (busy) button.setAttribute("aria-disabled", "true");
  else button.removeAttribute("aria-disabled");
}

/** Sets a status line; `tone` ("busy", "success", "error") styles it. */
function setStatus(line, text, tone = "") {
  if (line.textContent !== text) line.textContent = text;
  line.dataset.tone = tone;
}

/** Says why the token was not accepted; the field is marked invalid until it changes. */
function showAuthMessage(text) {
  ui.authMessage.textContent = text;
  ui.authMessage.hidden = false;
  ui.token.setAttribute("aria-invalid", "true");
}

function hideAuthMessage() {
  ui.authMessage.hidden = true;
  ui.authMessage.textContent = "";
  ui.token.removeAttribute("aria-invalid");
}

function messageOf(error) {
  if (error instanceof ApiError) return error.message;
  return `Something went wrong: ${error?.message ?? error}`;
}

/** The token in the address's fragment (`#token=…`), removed from the address. */
function tokenFromAddress() {
  const match = /^#token=([^&]+)$/.exec(window.location.hash);
  if (!match) return null;
  history.replaceState(null, "", window.location.pathname + window.location.search);
  try {
    return decodeURIComponent(match[1]).trim() || null;
  } catch {
    return null;
  }
}

function readStoredToken() {
  try {
    return sessionStorage.getItem(TOKEN_KEY);
  } catch {
    return null;
  }
}

/** Keeps `token` for this tab; false when the browser refuses. */
function storeToken(token) {
  try {
    sessionStorage.setItem(TOKEN_KEY, token);
    return true;
  } catch {
    return false;
  }
}

function forgetStoredToken() {
  try {
    sessionStorage.removeItem(TOKEN_KEY);
  } catch {
    // Nothing was kept.
  }
}

start();
