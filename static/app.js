// The chat page: sends questions, streams answers into the conversation, and keeps the
// controls, the status line and the error banner in step with the turn.

import {
  clearSavedExchanges,
  historyOf,
  loadExchanges,
  newExchange,
  saveExchanges,
} from "./conversation.js";
import { runTurn } from "./turn.js";
import { ExchangeView } from "./view.js";

const STATUS = {
  waiting: "Waiting for the answer…",
  thinking: "Thinking…",
  writing: "Writing the answer…",
  working: "Working on the answer…",
  done: "Answer ready.",
  stopped: "Stopped.",
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
  storage: "This browser would not save the conversation; it will be gone after a reload.",
};

const ui = {
  conversation: document.getElementById("conversation"),
  emptyNote: document.getElementById("empty-note"),
  banner: document.getElementById("error-banner"),
  status: document.getElementById("send-status"),
  form: document.getElementById("composer-form"),
  message: document.getElementById("message"),
  send: document.getElementById("send"),
  stop: document.getElementById("stop"),
  retry: document.getElementById("retry"),
  newChat: document.getElementById("new-chat"),
};

/** The page's state: the exchanges on screen, their views, and the turn in flight. */
const state = {
  exchanges: loadExchanges(),
  views: [],
  turn: null,
};

function start() {
  for (const exchange of state.exchanges) showExchange(exchange);
  ui.form.addEventListener("submit", (event) => {
    event.preventDefault();
    sendTypedMessage();
  });
  ui.message.addEventListener("keydown", onMessageKey);
  ui.stop.addEventListener("click", stopTurn);
  ui.retry.addEventListener("click", retryLastQuestion);
  ui.newChat.addEventListener("click", newChat);
  document.addEventListener("keydown", (event) => {
    if (event.key === "Escape" && state.turn) stopTurn();
  });
  updateControls();
  scrollToEnd();
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

function retryLastQuestion() {
  const last = state.exchanges.at(-1);
  if (state.turn || !last) return;
  state.exchanges.pop();
  state.views.pop()?.root.remove();
  ask(last.question);
}

function stopTurn() {
  state.turn?.controller.abort();
}

function newChat() {
  stopTurn();
  state.turn = null;
  state.exchanges = [];
  state.views = [];
  clearSavedExchanges();
  ui.conversation.querySelectorAll(".exchange").forEach((node) => node.remove());
  hideBanner();
  setStatus("");
  updateControls();
  ui.message.focus();
}

/** Runs one turn for `question`, with the history of the exchanges before it. */
async function ask(question) {
  const history = historyOf(state.exchanges);
  const exchange = newExchange(question);
  state.exchanges.push(exchange);
  const view = showExchange(exchange);
  const controller = new AbortController();
  const turn = { controller, exchange };
  state.turn = turn;
  hideBanner();
  setStatus(STATUS.waiting);
  updateControls();
  scrollToEnd();

  let statusBeforeSilence = STATUS.waiting;
  let thinkingBreak = false;
  const redraw = throttledRedraw(view, exchange);
  const outcome = await runTurn({
    message: question,
    history,
    signal: controller.signal,
    handlers: {
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
      done: ({ sources, path, truncated }) => {
        exchange.sources = Array.isArray(sources) ? sources : [];
        exchange.deflected = path === "deflected";
        exchange.truncated = truncated === true;
      },
      error: ({ detail }) => {
        exchange.error = String(detail ?? "");
      },
      silence: (ms) => {
        statusBeforeSilence = ui.status.textContent;
        setStatus(STATUS.silent(ms), "warning");
      },
      resumed: () => setStatus(statusBeforeSilence),
    },
  });

  if (state.turn === turn) state.turn = null;
  // A new chat started meanwhile has already cleared this exchange away.
  if (state.exchanges.includes(exchange)) {
    finishTurn(turn, outcome);
    const follow = nearEnd();
    view.update(exchange);
    if (follow) scrollToEnd();
    persist();
  }
  updateControls();
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
  const view = new ExchangeView(exchange);
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

function persist() {
  if (!saveExchanges(state.exchanges)) setStatus(FAILURE.storage);
}

function updateControls() {
  const busy = state.turn !== null;
  ui.send.disabled = busy;
  ui.stop.disabled = !busy;
  ui.retry.disabled = busy || state.exchanges.length === 0;
  ui.newChat.disabled = !busy && state.exchanges.length === 0;
  ui.emptyNote.hidden = state.exchanges.length > 0;
  ui.conversation.setAttribute("aria-busy", String(busy));
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

start();
