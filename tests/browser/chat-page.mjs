// Driving the chat page the way a person does: by role and accessible name
// (docs/PROTOCOL.md, "Chat page").

import { join } from "node:path";
import { ARTIFACTS } from "./harness.mjs";

/** The `error` frames' details (docs/PROTOCOL.md, "Turn error codes"), exact. */
export const DETAIL = {
  llm_unavailable: "The language model is not responding — please try again in a moment.",
  malformed_reply: "The model returned a malformed reply — please try again.",
};

export const retryStatus = (attempt, max) =>
  `Communication interrupted — retrying (${attempt} of ${max})…`;

/** A question carrying a mock LLM directive on its last line. */
export function withDirective(question, directive) {
  return `${question}\nMOCK ${JSON.stringify(directive)}`;
}

/**
 * Records every text the status line shows, in order, as `window.statusLog`: each
 * `textContent` write adds a text node, and mutation records are never coalesced, so
 * short-lived states are kept too.
 */
function recordStatusLine() {
  window.statusLog = [];
  document.addEventListener("DOMContentLoaded", () => {
    const status = document.getElementById("send-status");
    // Other pages of the context (a passage opened from the chat) have none.
    if (status === null) return;
    new MutationObserver((records) => {
      for (const record of records) {
        for (const node of record.addedNodes) window.statusLog.push(node.textContent);
      }
    }).observe(status, { childList: true });
  });
}

/** Adds the errors `page` throws or logs to `problems`. */
export function recordProblems(page, problems) {
  page.on("pageerror", (error) => problems.push(`page error: ${error.message}`));
  page.on("console", (message) => {
    if (message.type() === "error") problems.push(`console error: ${message.text()}`);
  });
}

/**
 * A fresh browser context (own storage) with the chat page open; `prepare(context)`
 * runs before the page loads.
 */
export async function openChat(suite, contextOptions = {}, prepare = async () => {}) {
  const context = await suite.browser.newContext(contextOptions);
  context.setDefaultTimeout(15_000);
  await context.addInitScript(recordStatusLine);
  await prepare(context);
  const page = await context.newPage();
  const problems = [];
  recordProblems(page, problems);
  await page.goto(suite.bor.url);
  await page.getByRole("textbox", { name: "Message" }).waitFor();
  return { context, page, problems };
}

/**
 * A browser context of `username`'s own (closed when test `t` ends), signed in on the
 * sign-in page with `password` and sent on to `path` (the chat page by default, then
 * ready for a question); its page and the problems the page logs.
 */
export async function signedInAs(suite, t, { username, password, viewport, path = "/", contextOptions = {} }) {
  const context = await suite.browser.newContext({ ...(viewport ? { viewport } : {}), ...contextOptions });
  context.setDefaultTimeout(15_000);
  t.after(() => context.close());
  const page = await context.newPage();
  const problems = [];
  recordProblems(page, problems);
  await page.goto(new URL(`/login?next=${encodeURIComponent(path)}`, suite.bor.url).toString());
  await page.getByRole("textbox", { name: "Username" }).fill(username);
  await page.getByLabel("Password").fill(password);
  await page.getByRole("button", { name: "Sign in" }).click();
  await page.waitForURL((url) => url.pathname === path);
  if (path === "/") await page.getByRole("textbox", { name: "Message" }).waitFor();
  return { page, problems };
}

/** Opens the chat page's account menu where it is one (phone width), so that its
 *  items (the account link, Sign out, the admin page, Add documents) show. */
export async function openAccountMenu(page) {
  const toggle = page.locator("#account .account-toggle");
  await toggle.waitFor({ state: "attached" });
  if ((await toggle.isVisible()) && (await toggle.getAttribute("aria-expanded")) !== "true") await toggle.click();
}

/** Types `text` into the message box and presses Send. */
export async function ask(page, text) {
  await page.getByRole("textbox", { name: "Message" }).fill(text);
  await page.getByRole("button", { name: "Send" }).click();
}

/** The `n`th answer (0-based; -1 = the last). */
export function answer(page, n = -1) {
  const articles = page.getByRole("article");
  return n === -1 ? articles.last() : articles.nth(n);
}

/** The visible text of the rendered answer body of `article`. */
export async function answerText(article) {
  return (await article.locator(".answer-body").innerText()).trim();
}

/** Waits until the status line reads exactly `text`. */
export async function waitForStatus(page, text) {
  await page.waitForFunction(
    (expected) => document.getElementById("send-status")?.textContent === expected,
    text,
  );
}

/** Waits until the turn in flight has ended (Send is enabled again). */
export async function waitForIdle(page) {
  await page.waitForFunction(() => !document.getElementById("send")?.disabled);
}

export async function statusLog(page) {
  return page.evaluate(() => window.statusLog);
}

export async function screenshot(page, name) {
  await page.screenshot({ path: join(ARTIFACTS, `${name}.png`), fullPage: false });
}
