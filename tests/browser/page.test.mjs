// The page itself: the conversation across reloads, the keyboard, phone width and dark
// mode, the silent-stream watchdog and New chat.

import assert from "node:assert/strict";
import { after, before, test } from "node:test";

import { startSuite } from "./harness.mjs";
import {
  answer,
  answerText,
  ask,
  openChat,
  screenshot,
  statusLog,
  waitForIdle,
  waitForStatus,
  withDirective,
} from "./chat-page.mjs";
import { insertDocument, storeDocument } from "./knowledge.mjs";

let suite;

before(async () => {
  suite = await startSuite();
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

/** Asks `question` and waits for the answer; resolves with the body the page sent. */
async function askAndWait(page, question) {
  const request = page.waitForRequest((r) => r.url().endsWith("/api/chat"));
  await ask(page, question);
  const body = (await request).postDataJSON();
  await waitForStatus(page, "Answer ready.");
  await waitForIdle(page);
  return body;
}

test("the conversation survives a reload and the next turn continues it on the server", async (t) => {
  await withChat(t, async ({ page }) => {
    const first = await askAndWait(page, "Where do otters sleep?");
    assert.deepEqual(first, { message: "Where do otters sleep?" }, "a new chat names no conversation");
    const id = new URL(page.url()).searchParams.get("c");
    assert.match(id ?? "", /^[0-9a-f-]{36}$/, "the address names the new conversation");
    const second = await askAndWait(page, "And beavers?");
    assert.deepEqual(second, { message: "And beavers?", conversation_id: id }, "no history: the server has it");
    const answers = await page.getByRole("article").evaluateAll((articles) =>
      articles.map((article) => article.querySelector(".answer-body").textContent.trim()),
    );
    assert.deepEqual(answers, ["Mock answer: Where do otters sleep?", "Mock answer: And beavers?"]);

    await page.reload();
    await page.getByRole("textbox", { name: "Message" }).waitFor();
    await page.locator(".question-text").nth(1).waitFor();
    assert.deepEqual(await page.locator(".question-text").allInnerTexts(), [
      "Where do otters sleep?",
      "And beavers?",
    ]);
    assert.equal(await answerText(answer(page, 0)), answers[0]);
    assert.equal(await answerText(answer(page, 1)), answers[1]);
    assert.equal(
      await page.evaluate(() => Object.keys(localStorage).length),
      0,
      "the browser's storage holds no history",
    );
    await screenshot(page, "09-after-reload");

    const next = await askAndWait(page, "Which one swims faster?");
    assert.deepEqual(next, { message: "Which one swims faster?", conversation_id: id });

    await page.getByRole("button", { name: "New chat" }).click();
    assert.equal(await page.getByRole("article").count(), 0);
    assert.equal(new URL(page.url()).search, "", "a new chat's address names no conversation");
    await page.reload();
    await page.getByRole("textbox", { name: "Message" }).waitFor();
    assert.equal(await page.getByRole("article").count(), 0, "New chat left the conversation");
    const fresh = await askAndWait(page, "Start over?");
    assert.deepEqual(fresh, { message: "Start over?" });
  });
});

test("Enter sends, Shift+Enter adds a line, and focus stays visible", async (t) => {
  await withChat(t, async ({ page }) => {
    const box = page.getByRole("textbox", { name: "Message" });
    assert.ok(await box.evaluate((element) => element === document.activeElement), "the box has focus");
    let requests = 0;
    page.on("request", (request) => {
      if (request.url().endsWith("/api/chat")) requests += 1;
    });
    await page.keyboard.type("first line");
    await page.keyboard.press("Shift+Enter");
    await page.keyboard.type("second line");
    assert.equal(await box.inputValue(), "first line\nsecond line");
    assert.equal(requests, 0, "Shift+Enter sent nothing");

    const request = page.waitForRequest((r) => r.url().endsWith("/api/chat"));
    await page.keyboard.press("Enter");
    assert.equal((await request).postDataJSON().message, "first line\nsecond line");
    await waitForStatus(page, "Answer ready.");
    await waitForIdle(page);
    assert.equal(await box.inputValue(), "");
    assert.equal(await page.locator(".question-text").innerText(), "first line\nsecond line");

    // Tab reaches the enabled buttons, each with a visible focus ring.
    await box.focus();
    await page.keyboard.press("Tab");
    const focused = await page.evaluate(() => ({
      name: document.activeElement.textContent,
      outline: getComputedStyle(document.activeElement).outlineStyle,
    }));
    assert.deepEqual(focused, { name: "Retry", outline: "solid" });
    await screenshot(page, "10-keyboard");

    // Escape stops a turn in flight.
    const slow = Array.from({ length: 40 }, (_, i) => `w${i}`).join(" ");
    await box.focus();
    await page.keyboard.type("Slowly");
    await page.keyboard.press("Shift+Enter");
    await page.keyboard.type(`MOCK ${JSON.stringify({ reply: slow, token_delay_ms: 150 })}`);
    await page.keyboard.press("Enter");
    await page.waitForFunction(() =>
      [...document.querySelectorAll("article .answer-body")].at(-1)?.textContent.includes("w2"),
    );
    await page.keyboard.press("Escape");
    await waitForStatus(page, "Stopped.");
  });
});

const LOOKS = [
  { name: "desktop-light", viewport: { width: 1280, height: 800 }, colorScheme: "light" },
  { name: "desktop-dark", viewport: { width: 1280, height: 800 }, colorScheme: "dark" },
  { name: "phone-light", viewport: { width: 360, height: 740 }, colorScheme: "light" },
  { name: "phone-dark", viewport: { width: 360, height: 740 }, colorScheme: "dark" },
];

const RICH_REPLY = [
  "Otters keep their **fur** dry with oils. In short:",
  "",
  "- they groom often",
  "- they sleep *floating*",
  "",
  "```",
  "const otters = ['sea otter', 'river otter', 'giant otter'].map((name) => name.toUpperCase());",
  "```",
  "",
  "Source: https://example.com/a/very/long/address/that/goes/on/and/on/without/any/break/at/all",
].join("\n");

test("the page fits phone width and follows dark mode", async (t) => {
  await insertDocument(suite, t, {
    title: "Otter care handbook",
    text: "Otters groom their fur often and sleep floating on their backs.",
  });
  for (const look of LOOKS) {
    await withChat(
      t,
      async ({ page }) => {
        await ask(
          page,
          withDirective("How do otters groom their fur and sleep?", {
            reasoning: "The handbook covers grooming.",
            reply: RICH_REPLY,
          }),
        );
        await waitForStatus(page, "Answer ready.");
        await page.getByRole("list", { name: "Sources" }).waitFor();
        const layout = await page.evaluate(() => ({
          pageOverflow: document.documentElement.scrollWidth - document.documentElement.clientWidth,
          conversationOverflow:
            document.getElementById("conversation").scrollWidth -
            document.getElementById("conversation").clientWidth,
          background: getComputedStyle(document.body).backgroundColor,
        }));
        assert.equal(layout.pageOverflow, 0, `${look.name}: no horizontal page overflow`);
        assert.equal(layout.conversationOverflow, 0, `${look.name}: the conversation does not overflow`);
        const lightness = luminance(layout.background);
        if (look.colorScheme === "dark") assert.ok(lightness < 0.2, `${look.name}: dark background`);
        else assert.ok(lightness > 0.8, `${look.name}: light background`);
        await screenshot(page, `11-${look.name}`);
      },
      { viewport: look.viewport, colorScheme: look.colorScheme },
    );
  }
});

test("a stream gone silent is reported on the status line, and clears when it resumes", async (t) => {
  const chat = await openChat(suite, {}, async (context) => {
    await context.clock.install();
  });
  t.after(() => chat.context.close());
  const { page } = chat;
  const words = Array.from({ length: 30 }, (_, i) => `tick${i}`).join(" ");
  await ask(page, withDirective("Keep talking.", { reply: words, token_delay_ms: 100 }));
  await page.waitForFunction(() => document.querySelector("article .answer-body")?.textContent.includes("tick2"));

  const pid = suite.bor.process.pid;
  process.kill(pid, "SIGSTOP");
  t.after(() => process.kill(pid, "SIGCONT"));
  // Let bytes already on their way arrive, then let fifteen silent seconds pass.
  await new Promise((resolve) => setTimeout(resolve, 300));
  await page.clock.fastForward(16_000);
  const silent = "No word from the service for 15 seconds — the connection may be lost. Press Stop, then Retry, if this lasts.";
  await waitForStatus(page, silent);
  await screenshot(page, "12-silent-stream");

  process.kill(pid, "SIGCONT");
  await waitForStatus(page, "Answer ready.");
  assert.match(await answerText(answer(page)), /tick29$/);
  const log = await statusLog(page);
  const silentAt = log.indexOf(silent);
  assert.ok(silentAt >= 0 && log.slice(silentAt + 1).includes("Writing the answer…"), log.join(" | "));
  assert.deepEqual(chat.problems, []);
});

/** Relative luminance (0 black … 1 white) of a CSS `rgb(…)` colour. */
function luminance(rgb) {
  const [r, g, b] = rgb.match(/\d+(\.\d+)?/g).slice(0, 3).map(Number);
  return (0.2126 * r + 0.7152 * g + 0.0722 * b) / 255;
}

test("an empty chat shows what the documents hold, with their summaries, until the first question", async (t) => {
  const { id } = await storeDocument(suite, t, {
    title: "Otter field guide <b>1</b>",
    chunks: [{ text: "Otters sleep in holts along the river bank." }],
  });
  suite.database.query(
    `UPDATE documents SET summary = 'Where otters live and sleep.' WHERE id = ${id}`,
  );
  await withChat(t, async ({ page }) => {
    const overview = page.getByRole("region", { name: "What your documents hold" });
    await overview.waitFor();
    const item = overview.getByRole("listitem").filter({ hasText: "Otter field guide" });
    assert.equal(
      (await item.locator(".knowledge-title").textContent()).trim(),
      "Otter field guide <b>1</b>",
      "a title is text, never markup",
    );
    assert.equal(
      (await item.locator(".knowledge-summary").textContent()).trim(),
      "Where otters live and sleep.",
    );
    await askAndWait(page, "Where do otters sleep?");
    assert.equal(await overview.isHidden(), true, "the conversation takes its place");
  });
});

/** Where the page itself is scrolled, and where its top bar and composer are. */
const pagePlace = (page) =>
  page.evaluate(() => ({
    scrolled: document.scrollingElement.scrollTop,
    topBar: document.getElementById("top-bar").getBoundingClientRect().top,
    composerBottom: Math.round(document.querySelector(".composer").getBoundingClientRect().bottom),
    height: window.innerHeight,
  }));

for (const look of [
  { name: "desktop", viewport: { width: 1280, height: 720 } },
  { name: "phone", viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true },
]) {
  test(`on a ${look.name} a conversation taller than the screen scrolls in its place, the page stays put`, async (t) => {
    await withChat(
      t,
      async ({ page }) => {
        const lines = Array.from({ length: 60 }, (_, i) => `Line ${i + 1} of a long answer.`).join("\n\n");
        await askAndWait(page, withDirective("Write a long answer.", { reply: lines }));
        const conversation = page.locator("#conversation");
        assert.ok(
          await conversation.evaluate((node) => node.scrollHeight > 2 * node.clientHeight),
          "the conversation is taller than the screen",
        );
        const still = await pagePlace(page);
        assert.deepEqual(
          { scrolled: still.scrolled, topBar: still.topBar, composerBottom: still.composerBottom },
          { scrolled: 0, topBar: 0, composerBottom: still.height },
          "at rest the page fills the screen",
        );

        // A wheel, or on a phone a swipe, over each part that is not the conversation.
        const session = look.hasTouch ? await page.context().newCDPSession(page) : null;
        const scrollOver = async (box, distance) => {
          const x = box.x + box.width / 2;
          const y = box.y + Math.min(box.height / 2, 20);
          if (session) {
            // A finger put down, drawn `distance` down in steps, and lifted.
            const touch = (type, dy) =>
              session.send("Input.dispatchTouchEvent", {
                type,
                touchPoints: type === "touchEnd" ? [] : [{ x, y: y + dy }],
              });
            await touch("touchStart", 0);
            for (let step = 1; step <= 10; step += 1) await touch("touchMove", (distance * step) / 10);
            await touch("touchEnd", distance);
          } else {
            await page.mouse.move(x, y);
            await page.mouse.wheel(0, -distance);
          }
          await page.waitForTimeout(100);
        };
        const parts = ["#top-bar", ".composer", "#conversation-bar"];
        if (look.name === "desktop") parts.push("#sidebar");
        for (const part of parts) {
          const box = await page.locator(part).boundingBox();
          for (const distance of [-600, 600, -600]) {
            await scrollOver(box, distance);
            assert.deepEqual(await pagePlace(page), still, `the page stays put after scrolling over ${part}`);
          }
        }
        await screenshot(page, `12-scrolled-over-the-bars-${look.name}`);

        // The conversation itself still scrolls, and only it.
        const before = await conversation.evaluate((node) => {
          node.scrollTop = node.scrollHeight / 2;
          return node.scrollTop;
        });
        await scrollOver(await conversation.boundingBox(), 400);
        assert.ok((await conversation.evaluate((node) => node.scrollTop)) < before, "the conversation scrolled back");
        assert.deepEqual(await pagePlace(page), still, "scrolling the conversation moves only it");
      },
      { viewport: look.viewport, isMobile: look.isMobile, hasTouch: look.hasTouch },
    );
  });
}

for (const look of [
  { name: "desktop-light", viewport: { width: 1280, height: 800 }, colorScheme: "light" },
  { name: "phone-dark", viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true, colorScheme: "dark" },
]) {
  test(`${look.name}: a mistyped address shows a page, while the API keeps its JSON`, async (t) => {
    const { name, ...contextOptions } = look;
    const context = await suite.browser.newContext(contextOptions);
    t.after(() => context.close());
    const page = await context.newPage();
    const problems = [];
    page.on("pageerror", (error) => problems.push(error.message));
    const response = await page.goto(new URL("/conversatoins", suite.bor.url).toString());
    assert.equal(response.status(), 404);
    assert.match(response.headers()["content-type"], /^text\/html/);
    await page.getByRole("heading", { level: 1, name: "There is no page at this address" }).waitFor();
    assert.equal(await page.getByRole("link", { name: "Back to the chat" }).getAttribute("href"), "/");
    await screenshot(page, `15-no-such-page-${name}`);

    const api = await page.evaluate(async () => {
      const reply = await fetch("/api/conversatoins", { headers: { Accept: "text/html" } });
      return { status: reply.status, body: await reply.json() };
    });
    assert.deepEqual(api, { status: 404, body: { error: { code: "not_found", message: "no such route" } } });
    assert.deepEqual(problems, []);
  });
}
