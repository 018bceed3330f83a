// Conversations kept by the server (docs/PROTOCOL.md, "Conversations") through the chat
// page, against bor, the mock LLM (behind a proxy that records what the model was sent)
// and PostgreSQL: the list, its search and pages, the address of the open conversation
// in a fresh browser, the history the model then sees, Rename, Delete, Export, New
// chat, a turn cut off by a reload, and the list as a drawer at phone width.

import assert from "node:assert/strict";
import { readFile } from "node:fs/promises";
import { after, before, test } from "node:test";

import { startSuite, waitUntil } from "./harness.mjs";
import {
  answer,
  answerText,
  ask,
  openChat,
  screenshot,
  waitForIdle,
  waitForStatus,
  withDirective,
} from "./chat-page.mjs";
import { insertDocument, sqlText } from "./knowledge.mjs";

let suite;

before(async () => {
  suite = await startSuite({ recordChat: true });
});

after(async () => {
  await suite?.stop();
});

async function withChat(t, run, contextOptions) {
  const chat = await openChat(suite, contextOptions);
  t.after(() => chat.context.close());
  await run(chat);
  assert.deepEqual(chat.problems, [], "the page logged no errors");
}

/** Asks `question` and waits for the answer; resolves with the body the page sent and
 *  the conversation the response named. */
async function askAndWait(page, question) {
  const response = page.waitForResponse((r) => r.url().endsWith("/api/chat"));
  await ask(page, question);
  const sent = await response;
  await waitForStatus(page, "Answer ready.");
  await waitForIdle(page);
  return { body: sent.request().postDataJSON(), conversation: sent.headers()["x-conversation-id"] };
}

/** The list of conversations: every group of it (Today, Yesterday, …). */
const conversationList = (page) => page.locator("#conversation-list");
const listedTitles = (page) => conversationList(page).locator(".conversation-title").allInnerTexts();
const openId = (page) => new URL(page.url()).searchParams.get("c");
/** The title a conversation takes from its first question (short ones only). */
const titleOf = (question) => question.replace(/\s+/g, " ").trim();

/** Waits until the list shows exactly `titles`, in order. */
async function waitForList(page, titles) {
  await waitUntil(async () => JSON.stringify(await listedTitles(page)) === JSON.stringify(titles), {
    what: `the list to read ${JSON.stringify(titles)}`,
  }).catch(async (error) => {
    throw new Error(`${error.message}; it reads ${JSON.stringify(await listedTitles(page))}`);
  });
}

function deleteAllConversations() {
  suite.database.query("DELETE FROM conversations");
}

test("a conversation is listed after its first turn, named in the address, and continued by the next", async (t) => {
  deleteAllConversations();
  await withChat(t, async ({ page }) => {
    await page.getByText("No conversations yet.").waitFor();
    const first = await askAndWait(page, "Where  do otters\nsleep?");
    assert.deepEqual(first.body, { message: "Where  do otters\nsleep?" });
    assert.equal(openId(page), first.conversation, "the address names the conversation");

    // The title is the question with its whitespace collapsed.
    await waitForList(page, ["Where do otters sleep?"]);
    const link = conversationList(page).getByRole("link");
    assert.equal(await link.getAttribute("aria-current"), "page", "the open one is marked");
    assert.match(await link.innerText(), /1 turn/);
    assert.equal(await page.getByRole("heading", { name: "Where do otters sleep?" }).count(), 1);
    assert.equal(await page.title(), "Where do otters sleep? — bor");

    const second = await askAndWait(page, "And beavers?");
    assert.deepEqual(second.body, { message: "And beavers?", conversation_id: first.conversation });
    assert.equal(second.conversation, first.conversation);
    await waitUntil(async () => /2 turns/.test(await link.innerText()), { what: "2 turns listed" });
    await screenshot(page, "20-conversation-desktop");
  });
});

test("a conversation's address opens it in a fresh browser as it was shown, and the model sees its turns", async (t) => {
  const title = "Serengeti field notes";
  await insertDocument(suite, t, {
    title,
    text: "Zebras migrate across the Serengeti every spring, following the rains.",
  });
  const questions = [
    withDirective("When do zebras migrate across the Serengeti?", {
      reply: "Zebras migrate in **spring**, following the rains [1]. See [2], which is not a source.",
    }),
    "Where does the herd go after the rains?",
  ];
  let address;
  let shown;
  await withChat(t, async ({ page }) => {
    for (const question of questions) await askAndWait(page, question);
    // The follow-up is searched with the question before it, so both cite the notes.
    assert.equal(await page.getByRole("list", { name: "Sources" }).count(), 2);
    address = page.url();
    shown = await page.getByRole("article").evaluateAll((articles) =>
      articles.map((article) => ({
        body: article.querySelector(".answer-body").innerHTML,
        sources: article.querySelector(".sources").outerHTML,
        note: article.querySelector(".answer-note").outerHTML,
      })),
    );
    assert.ok(shown[0].body.includes('class="citation"'), "the live answer links its citation");
  });

  const context = await suite.browser.newContext();
  t.after(() => context.close());
  const page = await context.newPage();
  const problems = [];
  page.on("pageerror", (error) => problems.push(error.message));
  await page.goto(address);
  await page.locator(".question-text").nth(1).waitFor();
  assert.deepEqual(await page.locator(".question-text").allInnerTexts(), questions);
  const reopened = await page.getByRole("article").evaluateAll((articles) =>
    articles.map((article) => ({
      body: article.querySelector(".answer-body").innerHTML,
      sources: article.querySelector(".sources").outerHTML,
      note: article.querySelector(".answer-note").outerHTML,
    })),
  );
  assert.deepEqual(reopened, shown, "answers, citations and sources exactly as they were shown");
  const citation = answer(page, 0).getByRole("link", { name: "Source 1" });
  assert.match(await citation.getAttribute("href"), /^\/documents\/\d+#chunk-\d+$/);

  const before = suite.chatRequests.length;
  const next = page.waitForRequest((r) => r.url().endsWith("/api/chat"));
  await ask(page, "How long does it take?");
  const id = new URL(address).searchParams.get("c");
  assert.deepEqual((await next).postDataJSON(), { message: "How long does it take?", conversation_id: id });
  await waitForStatus(page, "Answer ready.");
  const sent = suite.chatRequests.slice(before).at(-1);
  const conversation = sent.messages
    .filter((message) => message.role !== "system")
    .map(({ role, content }) => ({ role, content }));
  assert.deepEqual(conversation, [
    { role: "user", content: questions[0] },
    { role: "assistant", content: "Zebras migrate in **spring**, following the rains [1]. See [2], which is not a source." },
    { role: "user", content: questions[1] },
    { role: "assistant", content: "Mock answer: Where does the herd go after the rains?" },
    { role: "user", content: "How long does it take?" },
  ]);
  assert.deepEqual(problems, []);
});

test("search finds a conversation by a word of its answer, asking the server once typing pauses", async (t) => {
  deleteAllConversations();
  // The answer says "quokka"; the question (its directive included) does not.
  const smiles = withDirective("Which animal smiles?", { chunks: ["The quo", "kka smiles a lot."] });
  await withChat(t, async ({ page }) => {
    await askAndWait(page, smiles);
    assert.equal(await answerText(answer(page)), "The quokka smiles a lot.");
    await page.getByRole("button", { name: "New chat" }).click();
    await askAndWait(page, "What do otters eat?");
    await waitForList(page, ["What do otters eat?", titleOf(smiles)]);

    const searches = [];
    page.on("request", (request) => {
      const url = new URL(request.url());
      if (url.pathname === "/api/conversations" && url.searchParams.has("q")) {
        searches.push(`${url.searchParams.get("q")} (pinned=${url.searchParams.get("pinned")})`);
      }
    });
    const search = page.getByRole("searchbox", { name: "Search conversations" });
    // Six keystrokes' input events in one task, so that no pause of a busy machine can
    // fall between them: the page must wait for typing to pause and ask once.
    await search.evaluate((box) => {
      for (let end = 1; end <= 6; end += 1) {
        box.value = "QUOKKA".slice(0, end);
        box.dispatchEvent(new Event("input", { bubbles: true }));
      }
    });
    await waitForList(page, [titleOf(smiles)]);
    // The pinned ones and the others are asked for side by side.
    assert.deepEqual(searches.sort(), ["QUOKKA (pinned=false)", "QUOKKA (pinned=true)"], "one search, for the whole word");
    await screenshot(page, "25-search");

    await search.fill("quokka penguin");
    await page.getByText("No conversation matches “quokka penguin”.").waitFor();
    assert.equal(await conversationList(page).getByRole("listitem").count(), 0);
    await search.fill("");
    await waitForList(page, ["What do otters eat?", titleOf(smiles)]);
  });
});

test("Rename changes the title everywhere; Escape and Cancel leave it", async (t) => {
  deleteAllConversations();
  await withChat(t, async ({ page }) => {
    await askAndWait(page, "Where do otters sleep?");
    await waitForList(page, ["Where do otters sleep?"]);
    const rename = page.getByRole("button", { name: "Rename" });
    await rename.click();
    const dialog = page.getByRole("dialog", { name: "Rename the conversation" });
    const box = dialog.getByRole("textbox", { name: "Title" });
    assert.equal(await box.inputValue(), "Where do otters sleep?");
    assert.ok(await box.evaluate((node) => node === document.activeElement), "the title has the keyboard");
    await page.keyboard.press("Escape");
    await dialog.waitFor({ state: "hidden" });
    assert.ok(await rename.evaluate((node) => node === document.activeElement), "focus back on Rename");

    await rename.click();
    await box.fill("   ");
    await dialog.getByRole("button", { name: "Save" }).click();
    assert.equal(await dialog.getByRole("alert").innerText(), "A title has 1 to 200 characters.");
    await box.fill("Otter notes");
    await screenshot(page, "21-rename-dialog");
    await box.press("Enter");
    await dialog.waitFor({ state: "hidden" });
    await waitForList(page, ["Otter notes"]);
    assert.equal(await page.getByRole("heading", { name: "Otter notes" }).count(), 1);
    assert.equal(await page.title(), "Otter notes — bor");
    await waitForStatus(page, "Conversation renamed.");
    assert.ok(await rename.evaluate((node) => node === document.activeElement), "focus back on Rename");

    const id = openId(page);
    const [[stored]] = suite.database.query(`SELECT title FROM conversations WHERE id = '${id}'`);
    assert.equal(stored, "Otter notes");
    await page.reload();
    await page.getByRole("heading", { name: "Otter notes" }).waitFor();
  });
});

test("Delete asks first; Cancel and Escape keep the conversation, Delete removes it", async (t) => {
  deleteAllConversations();
  await withChat(t, async ({ page }) => {
    await askAndWait(page, "Where do otters sleep?");
    await waitForList(page, ["Where do otters sleep?"]);
    const id = openId(page);
    const remove = page.getByRole("button", { name: "Delete" });
    const dialog = page.getByRole("dialog", { name: "Delete the conversation?" });

    await remove.click();
    assert.match(await dialog.innerText(), /“Where do otters sleep\?” and its 1 turn will be removed/);
    const cancel = dialog.getByRole("button", { name: "Cancel" });
    assert.ok(await cancel.evaluate((node) => node === document.activeElement), "Cancel has the keyboard");
    await screenshot(page, "22-delete-dialog");
    await cancel.click();
    await dialog.waitFor({ state: "hidden" });
    assert.ok(await remove.evaluate((node) => node === document.activeElement), "focus back on Delete");
    await remove.click();
    await page.keyboard.press("Escape");
    await dialog.waitFor({ state: "hidden" });
    assert.equal(suite.database.query(`SELECT count(*) FROM conversations WHERE id = '${id}'`)[0][0], "1");

    await remove.click();
    await dialog.getByRole("button", { name: "Delete" }).click();
    await dialog.waitFor({ state: "hidden" });
    await waitForStatus(page, "Conversation deleted.");
    await page.getByText("No conversations yet.").waitFor();
    assert.equal(await page.getByRole("article").count(), 0);
    assert.equal(new URL(page.url()).search, "", "the address names no conversation");
    assert.equal(await page.getByRole("button", { name: "Rename" }).count(), 0, "the bar went with it");
    const message = page.getByRole("textbox", { name: "Message" });
    assert.ok(await message.evaluate((node) => node === document.activeElement), "focus on the message box");
    assert.equal(suite.database.query(`SELECT count(*) FROM conversations WHERE id = '${id}'`)[0][0], "0");
    assert.equal(suite.database.query(`SELECT count(*) FROM query_log WHERE conversation_id = '${id}'`)[0][0], "0");
  });
});

test("Export offers the Markdown and JSON downloads", async (t) => {
  deleteAllConversations();
  await withChat(t, async ({ page }) => {
    await askAndWait(page, "Where do otters sleep?");
    await waitForList(page, ["Where do otters sleep?"]);
    const id = openId(page);
    const exportButton = page.getByRole("button", { name: "Export" });
    assert.equal(await exportButton.getAttribute("aria-expanded"), "false");
    await exportButton.click();
    assert.equal(await exportButton.getAttribute("aria-expanded"), "true");
    const markdown = page.getByRole("link", { name: "Markdown (.md)" });
    const json = page.getByRole("link", { name: "JSON (.json)" });
    assert.equal(await markdown.getAttribute("href"), `/api/conversations/${id}/export?format=markdown`);
    assert.equal(await json.getAttribute("href"), `/api/conversations/${id}/export?format=json`);
    await page.keyboard.press("Escape");
    assert.equal(await markdown.isVisible(), false, "Escape closes the menu");
    assert.ok(await exportButton.evaluate((node) => node === document.activeElement));

    await exportButton.click();
    const [markdownFile] = await Promise.all([page.waitForEvent("download"), markdown.click()]);
    assert.equal(markdownFile.suggestedFilename(), `conversation-${id}.md`);
    const text = await readFile(await markdownFile.path(), "utf8");
    assert.match(text, /^# Where do otters sleep\?\n/);
    assert.match(text, /Mock answer: Where do otters sleep\?/);

    await exportButton.click();
    const [jsonFile] = await Promise.all([page.waitForEvent("download"), json.click()]);
    assert.equal(jsonFile.suggestedFilename(), `conversation-${id}.json`);
    const exported = JSON.parse(await readFile(await jsonFile.path(), "utf8"));
    assert.equal(exported.id, id);
    assert.equal(exported.turns[0].answer, "Mock answer: Where do otters sleep?");
  });
});

test("New chat starts a conversation of its own; Back returns to the one before", async (t) => {
  deleteAllConversations();
  await withChat(t, async ({ page }) => {
    const first = await askAndWait(page, "Where do otters sleep?");
    await waitForList(page, ["Where do otters sleep?"]);
    await page.getByRole("button", { name: "New chat" }).click();
    assert.equal(await page.getByRole("article").count(), 0);
    assert.equal(new URL(page.url()).search, "");
    assert.equal(await conversationList(page).locator("[aria-current]").count(), 0);
    assert.equal(await page.getByRole("button", { name: "Rename" }).count(), 0);

    const second = await askAndWait(page, "What do beavers build?");
    assert.deepEqual(second.body, { message: "What do beavers build?" });
    assert.notEqual(second.conversation, first.conversation);
    await waitForList(page, ["What do beavers build?", "Where do otters sleep?"]);

    // The new chat's address became the new conversation's: one step back is the first.
    await page.goBack();
    await page.getByRole("heading", { name: "Where do otters sleep?" }).waitFor();
    assert.deepEqual(await page.locator(".question-text").allInnerTexts(), ["Where do otters sleep?"]);
    assert.equal(openId(page), first.conversation);
    await page.goForward();
    await page.getByRole("heading", { name: "What do beavers build?" }).waitFor();
    await page.goBack();
    await page.getByRole("heading", { name: "Where do otters sleep?" }).waitFor();

    // A conversation picked from the list opens in place, the keyboard in the message box.
    await conversationList(page).getByRole("link", { name: /What do beavers build/ }).click();
    await page.getByRole("heading", { name: "What do beavers build?" }).waitFor();
    assert.equal(openId(page), second.conversation);
    const message = page.getByRole("textbox", { name: "Message" });
    assert.ok(await message.evaluate((node) => node === document.activeElement));
  });
});

test("More lists the next page of conversations", async (t) => {
  deleteAllConversations();
  t.after(deleteAllConversations);
  // 55 conversations of the one person (`local`), a minute apart, "Old 55" the oldest.
  suite.database.query(
    `INSERT INTO conversations (id, title, created_at, updated_at, user_id)
     SELECT gen_random_uuid(), 'Old ' || n, now() - n * interval '1 minute', now() - n * interval '1 minute',
            (SELECT id FROM users WHERE username = 'local')
     FROM generate_series(1, 55) AS n`,
  );
  await withChat(t, async ({ page }) => {
    const more = page.getByRole("button", { name: "More" });
    await more.waitFor();
    assert.equal(await conversationList(page).getByRole("listitem").count(), 50);
    await more.click();
    await waitUntil(async () => (await conversationList(page).getByRole("listitem").count()) === 55, {
      what: "55 conversations listed",
    });
    const titles = await listedTitles(page);
    assert.deepEqual(titles, Array.from({ length: 55 }, (_, i) => `Old ${i + 1}`));
    assert.equal(await more.isVisible(), false, "the last page has no More");
    const focused = await page.evaluate(() => document.activeElement.textContent);
    assert.match(focused, /^Old 51/, "the keyboard is on the first conversation of the new page");
  });
});

test("a turn in flight when the page reloads goes on after the stored turns, whole", async (t) => {
  deleteAllConversations();
  await withChat(t, async ({ page }) => {
    await askAndWait(page, "Where do otters sleep?");
    const words = Array.from({ length: 60 }, (_, i) => `word${i}`).join(" ");
    const question = withDirective("Count slowly.", { reply: words, token_delay_ms: 100 });
    await ask(page, question);
    await page.waitForFunction(() =>
      [...document.querySelectorAll("article .answer-body")].at(-1)?.textContent.includes("word3"),
    );
    await page.reload();
    await page.locator(".question-text").nth(1).waitFor();
    const article = answer(page, 1);
    await waitForStatus(page, "Answer ready.");
    assert.equal(await answerText(article), words, "the whole answer, once");
    assert.equal(await page.getByRole("article").count(), 2);
    const [[status]] = await waitUntil(
      () => {
        const rows = suite.database.query(`SELECT status FROM query_log WHERE question = ${sqlText(question)}`);
        return rows.length > 0 && rows;
      },
      { what: "the turn's row" },
    );
    assert.equal(status, "done", "the reload did not stop the turn");
  });
});

test("at phone width the list is a drawer, opened and closed by keyboard", async (t) => {
  deleteAllConversations();
  await withChat(
    t,
    async ({ page }) => {
      await askAndWait(page, "Where do otters sleep?");
      await page.getByRole("button", { name: "New chat" }).click();
      await askAndWait(page, "What do beavers build?");
      const list = conversationList(page);
      assert.equal(await list.isVisible(), false, "the list is out of the way");
      await screenshot(page, "23-conversation-phone");

      const toggle = page.getByRole("button", { name: "Conversations", exact: true });
      assert.equal(await toggle.getAttribute("aria-expanded"), "false");
      await toggle.focus();
      await page.keyboard.press("Enter");
      await list.waitFor();
      assert.equal(await toggle.getAttribute("aria-expanded"), "true");
      const search = page.getByRole("searchbox", { name: "Search conversations" });
      assert.ok(await search.evaluate((node) => node === document.activeElement), "the search box has the keyboard");
      assert.ok(await page.locator("#chat").evaluate((node) => node.inert), "the chat behind is inert");
      await waitForList(page, ["What do beavers build?", "Where do otters sleep?"]);
      const overflow = await page.evaluate(
        () => document.documentElement.scrollWidth - document.documentElement.clientWidth,
      );
      assert.equal(overflow, 0, "no horizontal overflow");
      await screenshot(page, "24-drawer-phone");

      await page.keyboard.press("Escape");
      await list.waitFor({ state: "hidden" });
      assert.ok(await toggle.evaluate((node) => node === document.activeElement), "focus back on the button");
      assert.equal(await toggle.getAttribute("aria-expanded"), "false");

      await toggle.click();
      await page.getByRole("button", { name: "Close conversations" }).click();
      await list.waitFor({ state: "hidden" });

      await toggle.click();
      await list.getByRole("link", { name: /Where do otters sleep/ }).click();
      await list.waitFor({ state: "hidden" });
      await page.getByRole("heading", { name: "Where do otters sleep?" }).waitFor();
      assert.deepEqual(await page.locator(".question-text").allInnerTexts(), ["Where do otters sleep?"]);
      assert.equal(await page.locator("#chat").evaluate((node) => node.inert), false);
      const message = page.getByRole("textbox", { name: "Message" });
      assert.ok(await message.evaluate((node) => node === document.activeElement));
    },
    { viewport: { width: 360, height: 740 } },
  );
});

test("an address that names no conversation of the person's says so, and the next question starts a new one", async (t) => {
  const id = "0b7e5b1c-3f7d-4f6e-8a59-1d2c3b4a5e6f";
  const context = await suite.browser.newContext();
  t.after(() => context.close());
  const page = await context.newPage();
  await page.goto(`${suite.bor.url}?c=${id}`);
  await waitForStatus(
    page,
    "No conversation of yours is saved at this address (it may have been deleted, or be someone else's): a question starts a new one.",
  );
  assert.equal(await page.getByRole("article").count(), 0);
  assert.equal(await page.getByRole("alert").count(), 0, "not an error");
  assert.equal(openId(page), null, "the address names no conversation any more");
  const { body } = await askAndWait(page, "Is anyone home?");
  assert.deepEqual(body, { message: "Is anyone home?" });
  await page.getByRole("heading", { name: "Is anyone home?" }).waitFor();
  assert.ok(openId(page) !== null && openId(page) !== id, "a conversation of its own");
});
