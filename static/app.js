// The chat page (docs/PROTOCOL.md, "Chat page"): opens the conversation its address
// names, sends questions, streams answers into the conversation (and follows a turn
// still running there, asked before a reload or in another tab), asks the last turn
// again as a new version of it (Regenerate, Edit) and shows the versions of a turn, and
// keeps the list of conversations, the controls, the status line and the error banner
// in step with the turn.

import { AddDocuments, CollectionChoice, fetchReadableCollections } from "./collection-choice.js";
import { ConversationActions } from "./conversation-actions.js";
import { ConversationList } from "./conversation-list.js";
import {
  conversationHref,
  conversationIdOf,
  exchangeOfTurn,
  hasVersion,
  isConversationId,
  isStored,
  newExchange,
  newVersion,
} from "./conversation.js";
import { fetchConversation, listConversations } from "./conversations-api.js";
import { Drawer } from "./drawer.js";
import { loadOverview } from "./knowledge.js";
import { isAboutRunningTurns, forgetTurn, rememberTurn, runningTurnOf } from "./running-turns.js";
import { followTurn, runTurn, stopTurnOnServer } from "./turn.js";
import { mountAccountMenu } from "./account-menu.js";
import { signInAgain } from "./account.js";
import { ExchangeView } from "./view.js";

const STATUS = {
  waiting: "Waiting for the answer…",
  thinking: "Thinking…",
  writing: "Writing the answer…",
  working: "Working on the answer…",
  done: "Answer ready.",
  stopped: "Stopped.",
  version: (at, of) => `Version ${at} of ${of}.`,
  loading: "Opening the conversation…",
  opened: (title) => `Opened “${title}”.`,
  missing:
    "No conversation of yours is saved at this address (it may have been deleted, or be someone else's): a question starts a new one.",
  renamed: "Conversation renamed.",
  deleted: "Conversation deleted.",
  pinned: "Conversation pinned: it is listed first.",
  // The archived ones have a list of their own, in date order: a pin shows once back.
  pinnedArchived: "Conversation pinned: it will be listed first once unarchived.",
  unpinned: "Conversation unpinned.",
  archived: "Conversation archived: it is listed under Archived conversations.",
  unarchived: "Conversation unarchived: it is back in the list.",
  unarchivedPinned: "Conversation unarchived: it is back in the list, among the pinned ones.",
  retrying: (attempt, max) => `Communication interrupted — retrying (${attempt} of ${max})…`,
  silent: (ms) =>
    `No word from the service for ${Math.round(ms / 1000)} seconds — the connection may be lost. ` +
    "Press Stop, then Retry, if this lasts.",
};

const TOOL_STATUS = {
  search_documents: "Searching your documents…",
  read_document: "Reading a document…",
  list_documents: "Listing your documents…",
};

const FAILURE = {
  unreachable: "Could not reach the service — check your connection and try again.",
  cut: "The connection to the service was lost before the answer was complete — please try again.",
};

const LOAD_FAILURE = (message) => `The conversation could not be opened. ${message}`;

const PAGE_TITLE = document.title;

/** After a turn the server writes its row a moment later: how often and how long the
 *  page looks for it before it shows the conversation as stored. */
const STORED_POLL_MS = 250;
const STORED_POLL_TRIES = 12;
const STORED_POLL_PAGE = 5;

/** Room left below the end of an answer scrolled into view, in pixels. */
const END_MARGIN_PX = 16;

const ui = {
  conversation: document.getElementById("conversation"),
  emptyNote: document.getElementById("empty-note"),
  knowledge: document.getElementById("knowledge"),
  knowledgeList: document.getElementById("knowledge-list"),
  knowledgeMore: document.getElementById("knowledge-more"),
  banner: document.getElementById("error-banner"),
  status: document.getElementById("send-status"),
  form: document.getElementById("composer-form"),
  message: document.getElementById("message"),
  send: document.getElementById("send"),
  stop: document.getElementById("stop"),
  retry: document.getElementById("retry"),
  newChat: document.getElementById("new-chat"),
};

const byId = (id) => document.getElementById(id);

const list = new ConversationList(
  {
    list: byId("conversation-list"),
    search: byId("search"),
    more: byId("more"),
    note: byId("list-note"),
    heading: byId("sidebar-heading"),
    archivedToggle: byId("archived-toggle"),
  },
  { onOpen: openFromList },
);

const actions = new ConversationActions(
  {
    bar: byId("conversation-bar"),
    title: byId("conversation-title"),
    archived: byId("conversation-archived"),
    actionsToggle: byId("actions-toggle"),
    actionsArea: byId("actions-area"),
    actionsMenu: byId("actions-menu"),
    rename: byId("rename"),
    pin: byId("pin"),
    archive: byId("archive"),
    delete: byId("delete"),
    export: byId("export"),
    exportArea: byId("export-area"),
    exportMenu: byId("export-menu"),
    exportMarkdown: byId("export-markdown"),
    exportJson: byId("export-json"),
    renameDialog: byId("rename-dialog"),
    renameForm: byId("rename-form"),
    renameInput: byId("rename-title"),
    renameError: byId("rename-error"),
    renameCancel: byId("rename-cancel"),
    deleteDialog: byId("delete-dialog"),
    deleteText: byId("delete-text"),
    deleteError: byId("delete-error"),
    deleteConfirm: byId("delete-confirm"),
    deleteCancel: byId("delete-cancel"),
  },
  {
    renamed: onRenamed,
    changed: onChanged,
    deleted: onDeleted,
    failed: (message) => showBanner(message),
  },
);

const collectionChoice = new CollectionChoice({
  details: byId("collection-choice"),
  summary: byId("collection-summary"),
  all: byId("collection-all"),
  options: byId("collection-options"),
});

const addDocuments = new AddDocuments(
  {
    dialog: byId("add-dialog"),
    form: byId("add-form"),
    collection: byId("add-collection"),
    files: byId("add-files"),
    status: byId("add-status"),
    report: byId("add-report"),
    close: byId("add-close"),
    upload: byId("add-upload"),
  },
  { onStored: () => loadOverview(ui.knowledgeList, ui.knowledgeMore).then(updateControls) },
);

const drawer = new Drawer({
  drawer: byId("sidebar"),
  toggle: byId("drawer-toggle"),
  close: byId("drawer-close"),
  backdrop: byId("drawer-backdrop"),
  focusOnOpen: byId("search"),
  outside: [byId("top-bar"), byId("chat")],
});

/**
 * The page's state: the open conversation (its id once the server gave one, its
 * summary once the server holds it), the exchanges on screen, their views, the turn in
 * flight, and the conversation being opened.
 */
const state = {
  conversationId: null,
  summary: null,
  exchanges: [],
  views: [],
  turn: null,
  opening: null,
};

function start() {
  ui.form.addEventListener("submit", (event) => {
    event.preventDefault();
    sendTypedMessage();
  });
  ui.message.addEventListener("keydown", onMessageKey);
  ui.stop.addEventListener("click", stopTurn);
  ui.retry.addEventListener("click", retryLastQuestion);
  ui.newChat.addEventListener("click", newChat);
  document.addEventListener("keydown", (event) => {
    // Escape in a dialog closes the dialog, not the turn.
    if (event.key === "Escape" && state.turn && document.querySelector("dialog[open]") === null) {
      stopTurn();
    }
  });
  // Back and Forward move between the conversations opened here.
  window.addEventListener("popstate", () => openConversation(conversationIdOf(location.search)));
  // A turn asked in another tab of this conversation is followed here too.
  window.addEventListener("storage", (event) => {
    if (isAboutRunningTurns(event) && state.turn === null && state.opening === null) followRunningTurn();
  });
  list.refresh();
  openConversation(conversationIdOf(location.search));
  loadOverview(ui.knowledgeList, ui.knowledgeMore).then(updateControls);
  ui.message.focus();
}

function onMessageKey(event) {
  if (event.key !== "Enter" || event.shiftKey || event.isComposing) return;
  event.preventDefault();
  sendTypedMessage();
}

function sendTypedMessage() {
  if (state.turn) return;
  const question = ui.message.value.trim();
  if (question === "") {
    setStatus("Type a question first.");
    ui.message.focus();
    return;
  }
  ui.message.value = "";
  ask(question);
}

/** Asks the last question again: after an answer, as a new version of its turn (as
 *  Regenerate does), never as a turn of its own. A failed exchange left nothing on the
 *  server and gives way to the new one (a failed version of a turn, to a new version of
 *  it). */
function retryLastQuestion() {
  const last = state.exchanges.at(-1);
  if (state.turn || !last) return;
  const view = state.views.at(-1);
  if (isStored(last)) {
    askAgain(view);
    return;
  }
  if (dropVersion(state.exchanges.length - 1, last) !== null) {
    askAgain(view, last.question);
    return;
  }
  state.exchanges.pop();
  state.views.pop()?.root.remove();
  ask(last.question);
}

/** Takes `version` out of the versions of the turn at `index`, showing the newest one
 *  left; that one, or null when the turn has no other version. */
function dropVersion(index, version) {
  const versions = version.versions;
  if (versions.length < 2) return null;
  versions.splice(versions.indexOf(version), 1);
  const shown = versions.at(-1);
  state.exchanges[index] = shown;
  state.views[index].update(shown);
  return shown;
}

/** Asks the server to stop the turn in flight (every page following it sees it end);
 *  before the server has named the turn, as soon as it does. */
function stopTurn() {
  const turn = state.turn;
  if (turn === null) return;
  turn.stopWanted = true;
  if (turn.turnId === null) return;
  stopTurnOnServer(turn.turnId).then((known) => {
    // A turn the server no longer knows has ended: stop reading it.
    if (!known && state.turn === turn) turn.controller.abort();
  });
}

/** Stops reading the turn in flight; the turn goes on at the server. */
function leaveTurn() {
  state.turn?.controller.abort();
}

function newChat() {
  if (state.conversationId !== null) history.pushState(null, "", conversationHref(null));
  openConversation(null);
  ui.message.focus();
}

function openFromList(id) {
  drawer.close({ restoreFocus: false });
  if (id !== state.conversationId) {
    history.pushState(null, "", conversationHref(id));
    openConversation(id);
  }
  ui.message.focus();
}

/** Empties the screen and shows conversation `id` (null: a new chat) with the turns the
 *  server holds, and its turn still running, if this browser asked one; a turn in
 *  flight here is left to run. */
async function openConversation(id) {
  leaveTurn();
  state.opening?.abort();
  state.turn = null;
  state.exchanges = [];
  state.views = [];
  ui.conversation.querySelectorAll(".exchange").forEach((node) => node.remove());
  showConversation(id, null);
  hideBanner();
  setStatus("");
  updateControls();
  if (id === null) return;

  const opening = new AbortController();
  state.opening = opening;
  setStatus(STATUS.loading);
  ui.conversation.setAttribute("aria-busy", "true");
  try {
    const conversation = await fetchConversation(id, { signal: opening.signal });
    state.exchanges = conversation.turns.map(exchangeOfTurn);
    for (const exchange of state.exchanges) showExchange(exchange);
    showConversation(id, summaryOf(conversation));
    setStatus(STATUS.opened(conversation.title));
    scrollToEnd();
  } catch (error) {
    if (opening.signal.aborted) return;
    if (error.status !== 404) {
      setStatus("");
      showBanner(LOAD_FAILURE(error.message));
    } else if (runningTurnOf(id) === null) {
      // Absent, or another person's (the server answers both alike): the page is a new
      // chat, and the next question starts a conversation under an address of its own.
      // (A conversation whose first turn this browser asked is stored with that turn's
      // row: until then it is 404 too, and the turn is followed below.)
      history.replaceState(null, "", conversationHref(null));
      showConversation(null, null);
      setStatus(STATUS.missing);
    }
  } finally {
    if (state.opening === opening) {
      state.opening = null;
      updateControls();
    }
  }
  if (!opening.signal.aborted && state.conversationId === id) followRunningTurn();
}

/** Follows the open conversation's turn this browser asked (here before a reload, or in
 *  another tab) while it may be running, unless the conversation shows it already. */
function followRunningTurn() {
  if (state.conversationId === null) return;
  const running = runningTurnOf(state.conversationId);
  if (running === null) return;
  if (state.exchanges.some((exchange) => hasVersion(exchange, running.turnId))) {
    forgetTurn(running.turnId);
    return;
  }
  // A new version of a turn shown here goes among its versions; else at the end.
  const versionView =
    running.versionOf === null
      ? null
      : (state.views.find((_, index) => hasVersion(state.exchanges[index], running.versionOf)) ?? null);
  if (running.versionOf !== null && versionView === null) return;
  const turn = beginExchange(running.question, versionView, running.versionOf);
  nameTurn(turn, running.turnId);
  streamExchange(turn, (handlers) =>
    followTurn({ turnId: running.turnId, signal: turn.controller.signal, handlers }),
  );
}

/** Makes `id` the open conversation, stored as `summary` (null: not, or not yet). */
function showConversation(id, summary) {
  state.conversationId = id;
  state.summary = summary;
  // The bar above the conversation may come or go: what the reader sees at the bottom
  // of the conversation stays there.
  const height = ui.conversation.clientHeight;
  actions.show(summary);
  ui.conversation.scrollTop += height - ui.conversation.clientHeight;
  list.setCurrent(id);
  document.title = summary === null ? PAGE_TITLE : `${summary.title} — bor`;
}

function summaryOf(conversation) {
  const { id, title, created_at, updated_at, pinned, archived } = conversation;
  return { id, title, created_at, updated_at, pinned, archived, turns: conversation.turns.length };
}

/** The id the server gave the turn's conversation: a new chat takes it as its own, and
 *  its address names it from now on (replacing the new chat's, which named none). */
function adoptConversation(turn, id) {
  if (state.turn !== turn || !isConversationId(id) || id === state.conversationId) return;
  state.conversationId = id;
  history.replaceState(null, "", conversationHref(id));
  list.setCurrent(id);
}

/**
 * After a turn that the server keeps: waits until the server lists it (its row is
 * written just after the turn's last frame), then shows the conversation as stored and
 * lists it again, so a new conversation appears and a continued one moves to the top.
 * The newest few are enough to look in: the conversation has just been added to.
 */
async function syncAfterTurn(id) {
  const wanted = state.exchanges.filter(isStored).length;
  // A follow-up leaves an archived conversation archived: it is among those.
  const archived = state.summary?.archived === true;
  let summary;
  for (let tries = 0; tries < STORED_POLL_TRIES; tries += 1) {
    try {
      const newest = await listConversations({ limit: STORED_POLL_PAGE, archived });
      summary = newest.find((listed) => listed.id === id);
    } catch {
      break;
    }
    if (summary !== undefined && summary.turns >= wanted) break;
    await new Promise((resolve) => setTimeout(resolve, STORED_POLL_MS));
  }
  if (summary !== undefined && state.conversationId === id) showConversation(id, summary);
  await list.refresh();
}

function onRenamed(summary) {
  if (summary.id === state.conversationId) showConversation(summary.id, summary);
  list.update(summary);
  setStatus(STATUS.renamed);
}

/** Pinned, unpinned, archived or unarchived: the bar and the list show it, the status
 *  line says it. An archived conversation stays open (it leaves the list); pinned, it
 *  stays archived and is listed first once unarchived. */
function onChanged(summary, changes) {
  if (summary.id === state.conversationId) showConversation(summary.id, summary);
  hideBanner();
  list.refresh();
  setStatus(changeWords(summary, changes));
}

/** What the status line says of `changes` made to the conversation, now `summary`. */
function changeWords(summary, changes) {
  if ("pinned" in changes) {
    if (!summary.pinned) return STATUS.unpinned;
    return summary.archived ? STATUS.pinnedArchived : STATUS.pinned;
  }
  if (summary.archived) return STATUS.archived;
  return summary.pinned ? STATUS.unarchivedPinned : STATUS.unarchived;
}

function onDeleted(id) {
  list.remove(id);
  if (id === state.conversationId) {
    // The deleted conversation's address leads nowhere now: it gives way to a new chat.
    history.replaceState(null, "", conversationHref(null));
    openConversation(null);
  }
  setStatus(STATUS.deleted);
  ui.message.focus();
}

/** Runs one turn for `question` in the open conversation (the server holds its
 *  history). */
function ask(question) {
  const conversationId = state.conversationId;
  const turn = beginExchange(question);
  streamExchange(turn, (handlers) =>
    runTurn({
      message: question,
      conversationId,
      collections: collectionChoice.chosen(),
      signal: turn.controller.signal,
      handlers,
    }),
  );
}

/** Asks the turn shown by `view` again, as a new version of it: its question
 *  (Regenerate), or `question` (an edited one). The server allows it for the last turn
 *  only, once it has ended. */
function askAgain(view, question = null) {
  const index = state.views.indexOf(view);
  const shown = state.exchanges[index];
  if (state.turn || shown === undefined || shown.turnId === null) return;
  const conversationId = state.conversationId;
  const turn = beginExchange(question ?? shown.question, view, shown.turnId);
  streamExchange(turn, (handlers) =>
    runTurn({
      message: turn.exchange.question,
      conversationId,
      collections: collectionChoice.chosen(),
      versionOf: turn.versionOf,
      signal: turn.controller.signal,
      handlers,
    }),
  );
}

/** Shows the previous (`step` -1) or next (+1) version of the turn of `view`. */
function switchVersion(view, step) {
  const index = state.views.indexOf(view);
  const shown = state.exchanges[index];
  if (state.turn || shown === undefined) return;
  const versions = shown.versions;
  const at = versions.indexOf(shown) + step;
  if (at < 0 || at >= versions.length) return;
  state.exchanges[index] = versions[at];
  view.update(versions[at]);
  setStatus(STATUS.version(at + 1, versions.length));
}

/** Shows a new exchange for `question` and makes its turn the one in flight: at the
 *  end of the conversation, or, given `view`, as a new version of the turn it shows
 *  (`versionOf` names that turn to the server). */
function beginExchange(question, view = null, versionOf = null) {
  let exchange;
  if (view === null) {
    exchange = newExchange(question);
    state.exchanges.push(exchange);
    view = showExchange(exchange);
  } else {
    const index = state.views.indexOf(view);
    exchange = newVersion(state.exchanges[index], question);
    state.exchanges[index] = exchange;
    view.update(exchange);
  }
  const turn = {
    controller: new AbortController(),
    exchange,
    view,
    versionOf,
    conversationId: state.conversationId,
    turnId: null,
    stopWanted: false,
  };
  state.turn = turn;
  hideBanner();
  setStatus(STATUS.waiting);
  updateControls();
  scrollToEnd();
  return turn;
}

/** The server named the turn: it is remembered until its end is read, so that a reload
 *  or another tab can follow it; a Stop pressed before now is sent now. */
function nameTurn(turn, turnId) {
  turn.turnId = turnId;
  turn.exchange.turnId = turnId;
  if (turn.conversationId !== null) {
    const { conversationId, exchange, versionOf } = turn;
    rememberTurn({ conversationId, turnId, question: exchange.question, versionOf });
  }
  if (turn.stopWanted) stopTurnOnServer(turnId);
}

/** Streams the frames `run(handlers)` reads into the turn's exchange, then records how
 *  the turn ended. */
async function streamExchange(turn, run) {
  const { exchange, view } = turn;
  let statusBeforeSilence = STATUS.waiting;
  let thinkingBreak = false;
  const redraw = throttledRedraw(view, exchange);
  let outcome = await run({
    conversation: (id) => {
      turn.conversationId = id;
      adoptConversation(turn, id);
    },
    turn: (id) => nameTurn(turn, id),
    restart: () => {
      exchange.answer = "";
      exchange.thinking = "";
      redraw();
    },
    retry: ({ attempt, max }) => setStatus(STATUS.retrying(attempt, max), "warning"),
    thinking: ({ text }) => {
      // Reasoning of a later round starts a paragraph of its own.
      if (thinkingBreak && exchange.thinking !== "") exchange.thinking += "\n\n";
      thinkingBreak = false;
      exchange.thinking += String(text ?? "");
      setStatus(STATUS.thinking);
      redraw();
    },
    tool: ({ name, phase }) => {
      thinkingBreak = true;
      setStatus(phase === "start" ? (TOOL_STATUS[name] ?? STATUS.working) : STATUS.working);
    },
    delta: ({ text }) => {
      exchange.answer += String(text ?? "");
      setStatus(STATUS.writing);
      redraw();
    },
    done: ({ sources, path, truncated, conversation_id }) => {
      adoptConversation(turn, conversation_id);
      exchange.sources = Array.isArray(sources) ? sources : [];
      exchange.deflected = path === "deflected";
      exchange.truncated = truncated === true;
    },
    error: ({ detail, conversation_id }) => {
      adoptConversation(turn, conversation_id);
      exchange.error = String(detail ?? "");
    },
    silence: (ms) => {
      statusBeforeSilence = ui.status.textContent;
      setStatus(STATUS.silent(ms), "warning");
    },
    resumed: () => setStatus(statusBeforeSilence),
  });

  if (["done", "stopped", "error", "gone"].includes(outcome.kind) && turn.turnId !== null) {
    forgetTurn(turn.turnId);
  }
  // Stop pressed for a turn the server no longer knew: the reading was stopped instead.
  if (outcome.kind === "left" && turn.stopWanted) outcome = { kind: "stopped" };
  if (state.turn === turn) state.turn = null;
  // Another conversation opened meanwhile has already cleared this exchange away.
  const onScreen = state.exchanges.includes(exchange);
  let follow = false;
  if (onScreen) {
    finishTurn(turn, outcome);
    follow = nearEnd();
    view.update(exchange);
  }
  updateControls();
  // The sources come in below the answer, and Edit above it: a reader who followed the
  // answer sees its end, not the end of the sources.
  if (follow) scrollToEndOf(view.body);
  if (onScreen && isStored(exchange) && state.conversationId !== null) {
    syncAfterTurn(state.conversationId);
  } else if (!onScreen && (outcome.kind === "done" || outcome.kind === "stopped")) {
    // It ended after its conversation was left: that conversation has a new turn.
    list.refresh();
  }
}

/** Records how the turn ended on its exchange, the status line and the banner. */
function finishTurn(turn, outcome) {
  const { exchange } = turn;
  switch (outcome.kind) {
    case "done":
      exchange.status = "done";
      setStatus(STATUS.done);
      return;
    case "stopped":
      exchange.status = "stopped";
      setStatus(STATUS.stopped);
      return;
    case "error":
      exchange.status = "error";
      setStatus("");
      showBanner(exchange.error);
      return;
    case "gone":
      // The turn followed is no longer known to the server (it failed, or it ended
      // long ago): nothing of it is shown.
      setStatus("");
      if (dropVersion(state.exchanges.indexOf(exchange), exchange) !== null) return;
      state.exchanges.splice(state.exchanges.indexOf(exchange), 1);
      turn.view.root.remove();
      state.views.splice(state.views.indexOf(turn.view), 1);
      setStatus("");
      return;
    case "signedOut":
      // The session ended (expired, signed out elsewhere): sign in, then back here
      // (turn.js read the 401).
      signInAgain();
      return;
    case "refused":
      exchange.status = "error";
      exchange.error = outcome.message;
      setStatus("");
      showBanner(outcome.message);
      return;
    default:
      exchange.status = "error";
      exchange.error = FAILURE[outcome.kind] ?? FAILURE.cut;
      setStatus("");
      showBanner(exchange.error);
  }
}

function showExchange(exchange) {
  const view = new ExchangeView(exchange, {
    version: (step) => switchVersion(view, step),
    regenerate: () => askAgain(view),
    edit: (question) => askAgain(view, question),
  });
  state.views.push(view);
  ui.conversation.append(view.root);
  return view;
}

/** Redraws the answer at most once per animation frame while text streams in. */
function throttledRedraw(view, exchange) {
  let pending = false;
  return () => {
    if (pending) return;
    pending = true;
    requestAnimationFrame(() => {
      pending = false;
      const follow = nearEnd();
      view.update(exchange);
      if (follow) scrollToEnd();
    });
  };
}

function updateControls() {
  const busy = state.turn !== null;
  ui.send.disabled = busy;
  ui.stop.disabled = !busy;
  ui.retry.disabled = busy || state.exchanges.length === 0;
  ui.newChat.disabled = !busy && state.exchanges.length === 0 && state.conversationId === null;
  ui.emptyNote.hidden = state.exchanges.length > 0 || state.opening !== null;
  ui.knowledge.hidden = ui.emptyNote.hidden || ui.knowledgeList.childElementCount === 0;
  ui.conversation.setAttribute("aria-busy", String(busy || state.opening !== null));
  // Regenerate and Edit on the last turn once it has ended; versions switch between turns.
  state.views.forEach((view, index) => {
    const last = index === state.views.length - 1;
    view.offer({ askAgain: last && !busy && isStored(state.exchanges[index]), switchable: !busy });
  });
  // A button that just became disabled drops the keyboard focus: keep it in the form.
  if (document.activeElement === document.body || document.activeElement?.disabled) {
    ui.message.focus();
  }
}

/** Sets the status line; `tone` "warning" marks trouble (retries, silence). */
function setStatus(text, tone = "") {
  if (ui.status.textContent !== text) ui.status.textContent = text;
  ui.status.dataset.tone = tone;
}

function showBanner(text) {
  ui.banner.textContent = text;
  ui.banner.hidden = false;
}

function hideBanner() {
  ui.banner.hidden = true;
  ui.banner.textContent = "";
}

function nearEnd() {
  const { scrollTop, scrollHeight, clientHeight } = ui.conversation;
  return scrollHeight - scrollTop - clientHeight < 80;
}

function scrollToEnd() {
  ui.conversation.scrollTop = ui.conversation.scrollHeight;
}

/** Scrolls the conversation just far enough to show the end of `node`. */
function scrollToEndOf(node) {
  const below = node.getBoundingClientRect().bottom - ui.conversation.getBoundingClientRect().bottom;
  if (below > 0) ui.conversation.scrollTop += below + END_MARGIN_PX;
}

/** The account controls, then what the caller's collections allow: the chooser and
 *  "Add documents". */
async function mountCollections() {
  const account = byId("account");
  const [me, collections] = await Promise.all([mountAccountMenu(account, { adminLink: true, compact: true }), fetchReadableCollections()]);
  // A source's score is a retrieval figure for admins; people read its place and text.
  document.body.classList.toggle("shows-scores", me?.user?.role === "admin");
  collectionChoice.show(collections);
  addDocuments.offer(account, collections, me);
}

mountCollections();
start();
