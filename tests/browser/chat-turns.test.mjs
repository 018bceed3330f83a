// Chat turns through the page, against bor, the mock LLM and PostgreSQL: answers and
// sources, retries, failures, scaffolding recovery, Stop, Retry and hostile output.

import assert from "node:assert/strict";
import { after, before, test } from "node:test";

import { startBor, startSuite, waitUntil } from "./harness.mjs";
import {
  DETAIL,
  answer,
  answerText,
  ask,
  openChat,
  retryStatus,
  screenshot,
  statusLog,
  waitForIdle,
  waitForStatus,
  withDirective,
} from "./chat-page.mjs";
import { cosine, embed, insertDocument, sqlText } from "./knowledge.mjs";

let suite;

before(async () => {
  suite = await startSuite();
});

after(async () => {
  await suite?.stop();
});

/**
 * Opens a chat page (in a browser of `contextOptions`) for one test and closes it
 * afterwards, checking it logged no errors but those `expected` (regular expressions)
 * allows.
 */
async function withChat(t, run, { expected = [], contextOptions = {} } = {}) {
  const chat = await openChat(suite, contextOptions);
  t.after(() => chat.context.close());
  await run(chat);
  const unexpected = chat.problems.filter((problem) => !expected.some((re) => re.test(problem)));
  assert.deepEqual(unexpected, [], "the page logged no errors");
}

test("a deflected turn streams its answer, says it is not from the documents and lists no sources", async (t) => {
  await withChat(t, async ({ page }) => {
    await ask(page, "What is the capital of France?");
    await waitForStatus(page, "Answer ready.");
    const article = answer(page);
    assert.equal(await answerText(article), "Mock answer: What is the capital of France?");
    // In words inside the answer's article, read before the answer.
    const notice = article.getByText(/^Not from your documents: nothing in your knowledge base matched/);
    assert.ok(await notice.isVisible(), "the deflected answer is marked");
    const described = await article.evaluate((node) => document.getElementById(node.getAttribute("aria-describedby"))?.textContent);
    assert.match(described ?? "", /^Not from your documents/, "and the article is described by the notice");
    assert.equal(await page.getByRole("list", { name: "Sources" }).count(), 0);
    assert.equal(await page.getByRole("alert").count(), 0);
    assert.ok((await statusLog(page)).includes("Writing the answer…"));
    await screenshot(page, "01-deflected-turn");
  });
});

test("a grounded turn shows thinking, tool activity, the answer and its sources", async (t) => {
  const title = "Serengeti field notes";
  const chunkText = "Zebras migrate across the Serengeti every spring, following the rains.";
  const embedding = await insertDocument(suite, t, { title, text: chunkText });

  const question = withDirective("When do zebras migrate across the Serengeti?", {
    reasoning: "The notes should say when the herds move.",
    tool_calls: [{ name: "search_documents", arguments: { query: "zebra migration" } }],
  });
  const score = cosine(await embed(suite, question), embedding);
  assert.ok(score >= 0.35, `the question is close enough to be grounded (cosine ${score})`);

  await withChat(t, async ({ page }) => {
    await ask(page, question);
    await waitForStatus(page, "Answer ready.");
    const article = answer(page);
    assert.match(await answerText(article), /^Mock answer: When do zebras migrate/);

    const thinking = article.locator("details.thinking");
    assert.equal(await thinking.locator("summary").innerText(), "Thinking");
    await thinking.locator("summary").click();
    // Both rounds (the tool call and the answer) reasoned: one paragraph each.
    assert.equal(
      await thinking.locator(".thinking-text").innerText(),
      "The notes should say when the herds move.\n\nThe notes should say when the herds move.",
    );

    assert.equal(await article.getByText(/^Not from your documents/).isVisible(), false, "a grounded answer is not marked");
    assert.equal(await article.getAttribute("aria-describedby"), null);
    const sources = article.getByRole("list", { name: "Sources" });
    const item = sources.getByRole("listitem");
    assert.equal(await item.count(), 1);
    assert.equal(await item.getByRole("link").count(), 1);
    assert.ok(await item.getByRole("link", { name: `[1] ${title}`, exact: true }).isVisible());
    assert.equal(await item.locator(".source-facts").innerText(), `score\u00a0${score.toFixed(2)}`);
    assert.equal(await item.locator(".source-snippet").innerText(), chunkText);

    const log = await statusLog(page);
    assert.ok(log.includes("Searching your documents…"), `status log: ${log.join(" | ")}`);
    await screenshot(page, "01-grounded-turn-with-sources");
  });
});

test("the status line shows each retry, then the answer arrives", async (t) => {
  // A bor of its own with a longer delay, so the retry status stays on screen a while.
  const slowRetries = await startBor({
    mock: suite.mock,
    database: suite.database,
    env: { BOR_LLM_RETRY_DELAY: "1.5" },
  });
  t.after(() => slowRetries.stop());
  await withChat(t, async ({ page }) => {
    await page.goto(slowRetries.url);
    await ask(page, withDirective("Is anyone there?", { status: 503, times: 2 }));
    await waitForStatus(page, retryStatus(1, 3));
    await screenshot(page, "02-retry-status");
    await waitForStatus(page, retryStatus(2, 3));
    await waitForStatus(page, "Answer ready.");
    assert.equal(await answerText(answer(page)), "Mock answer: Is anyone there?");
    const retries = (await statusLog(page)).filter((text) => text.startsWith("Communication"));
    assert.deepEqual(retries, [retryStatus(1, 3), retryStatus(2, 3)]);
    assert.equal(await page.getByRole("alert").count(), 0);
  });
});

test("a dead endpoint ends in the llm_unavailable banner", async (t) => {
  await withChat(t, async ({ page }) => {
    await ask(page, withDirective("Hello?", { status: 503 }));
    const banner = page.getByRole("alert");
    await banner.waitFor();
    assert.equal(await banner.innerText(), DETAIL.llm_unavailable);
    const retries = (await statusLog(page)).filter((text) => text.startsWith("Communication"));
    assert.deepEqual(retries, [retryStatus(1, 3), retryStatus(2, 3), retryStatus(3, 3)]);
    assert.equal(await answerText(answer(page)), "");
    assert.ok(await page.getByRole("button", { name: "Retry" }).isEnabled());
    await screenshot(page, "03-llm-unavailable");
  });
});

test("a reply of nothing but tool-call markup is recovered without markup", async (t) => {
  const leak = '<tool_call>{"name":"search_documents","arguments":{}}</tool_call>';
  await withChat(t, async ({ page }) => {
    await ask(page, withDirective("Tell me about bor.", { leak, reply: "bor answers from your documents." }));
    await waitForStatus(page, "Answer ready.");
    const article = answer(page);
    assert.equal(await answerText(article), "bor answers from your documents.");
    const html = await article.innerHTML();
    for (const markup of ["tool_call", "search_documents", "arguments"]) {
      assert.ok(!html.includes(markup), `the answer shows no ${markup}`);
    }
    assert.equal(await page.getByRole("alert").count(), 0);
    await screenshot(page, "04-recovered-reply");
  });
});

test("a reply that stays malformed ends in the malformed_reply banner", async (t) => {
  const leak = '<tool_call>{"name":"search_documents","arguments":{}}</tool_call>';
  await withChat(t, async ({ page }) => {
    await ask(page, withDirective("Tell me more.", { leak, leak_always: true }));
    const banner = page.getByRole("alert");
    await banner.waitFor();
    assert.equal(await banner.innerText(), DETAIL.malformed_reply);
    assert.ok(!(await answer(page).innerHTML()).includes("tool_call"));
    await screenshot(page, "05-malformed-reply");
  });
});

test("Stop keeps the partial answer and the server records a stopped turn", async (t) => {
  const words = Array.from({ length: 60 }, (_, i) => `word${i}`);
  const question = withDirective("Count slowly for me.", {
    reply: words.join(" "),
    token_delay_ms: 150,
  });
  await withChat(t, async ({ page }) => {
    await ask(page, question);
    const article = answer(page);
    await page.waitForFunction(
      () => document.querySelector("article .answer-body")?.textContent.includes("word3"),
    );
    const mockLinesBeforeStop = suite.mock.lines.length;
    await page.getByRole("button", { name: "Stop" }).click();
    await waitForStatus(page, "Stopped.");
    await waitForIdle(page);
    const partial = await answerText(article);
    assert.match(partial, /^word0 word1 word2 word3/);
    assert.ok(!partial.includes("word59"), "the answer was cut short");
    assert.match(await article.locator(".answer-note").innerText(), /partial/);
    await screenshot(page, "06-stopped");

    await suite.bor.waitForLine(/chat turn .*outcome=stopped/);
    // bor dropped its request to the LLM server too.
    await waitUntil(
      () => suite.mock.lines.slice(mockLinesBeforeStop).some((line) => /client went away/.test(line)),
      { what: "the mock LLM to see bor go away" },
    );
    const [[status, storedAnswer]] = await waitUntil(
      () => {
        const rows = suite.database.query(
          `SELECT status, answer FROM query_log WHERE question = ${sqlText(question)}`,
        );
        return rows.length > 0 && rows;
      },
      { what: "the stopped turn's query_log row" },
    );
    assert.equal(status, "stopped");
    assert.ok(storedAnswer.startsWith(partial), `stored: ${storedAnswer}`);
    assert.ok(!storedAnswer.includes("word59"));
    // The page shows no more text after Stop.
    assert.equal(await answerText(article), partial);
  });
});

test("Retry asks the last question again", async (t) => {
  const question = withDirective("Try me again.", { status: 503, times: 4 });
  await withChat(t, async ({ page }) => {
    // The first try fails on all four attempts (first + 3 retries); the same request
    // sent again by Retry succeeds.
    await ask(page, question);
    await page.getByRole("alert").waitFor();
    await page.getByRole("button", { name: "Retry" }).click();
    await waitForStatus(page, "Answer ready.");
    assert.equal(await page.getByRole("alert").count(), 0);
    assert.equal(await page.getByRole("article").count(), 1, "the retried exchange replaced the failed one");
    assert.equal(await answerText(answer(page)), "Mock answer: Try me again.");
    assert.equal(await page.locator(".question-text").innerText(), question);

    // Retry after an answer asks again as a new version of that turn, not as a turn
    // after it: the request is the one that succeeded (the same history), and the
    // server keeps both versions.
    await page.getByRole("button", { name: "Retry" }).click();
    await page.getByRole("group", { name: "Versions of this answer" }).waitFor();
    await waitForStatus(page, "Answer ready.");
    await waitForIdle(page);
    assert.equal(await page.getByRole("article").count(), 1, "no turn after the answered one");
    assert.deepEqual(await page.locator(".question-text").allInnerTexts(), [question]);
    assert.equal(await answer(page).locator(".version-position .visually-hidden").innerText(), "Version 2 of 2");
    await waitUntil(
      () =>
        suite.database.query(
          `SELECT count(*), count(version_of) FROM query_log WHERE question = ${sqlText(question)}`,
        )[0].join() === "2,1",
      { what: "two query_log rows for the question, the second a version of the first" },
    );
    await screenshot(page, "07-retried");
  });
});

test("an answer and each of its code blocks are copied with a button, by mouse or keyboard", async (t) => {
  const code = "cargo run --release\necho 'done'";
  const reply = `Run this:\n\n\`\`\`sh\n${code}\n\`\`\`\n\nThen look at [the docs](https://example.com).`;
  await withChat(
    t,
    async ({ page }) => {
      await ask(page, withDirective("How do I build it?", { reply, token_delay_ms: 20 }));
      const article = answer(page);
      await waitForStatus(page, "Answer ready.");
      const copyCode = article.getByRole("button", { name: "Copy code" });
      await copyCode.click();
      assert.equal(await page.evaluate(() => navigator.clipboard.readText()), code);
      await article.getByRole("button", { name: "Copied" }).waitFor();
      assert.equal(await article.getByRole("status").first().innerText(), "Copied.");

      const copyAnswer = article.getByRole("button", { name: "Copy answer" });
      await copyAnswer.focus();
      await page.keyboard.press("Enter");
      await waitUntil(async () => (await page.evaluate(() => navigator.clipboard.readText())) === reply, {
        what: "the answer's Markdown copied",
      });
      // The button is no part of the code a reader selects.
      assert.equal((await article.locator("pre code").innerText()).trimEnd(), code);
      assert.equal(await article.locator(".code-copy").evaluate((node) => getComputedStyle(node).userSelect), "none");
      await screenshot(page, "09-copy-buttons");
    },
    {
      contextOptions: { permissions: ["clipboard-read", "clipboard-write"] },
    },
  );
});

test("model output with HTML and script is rendered inert", async (t) => {
  const reply = [
    "Look:",
    '<img src=x onerror="window.xssImage=1">',
    "<script>window.xssScript=1</script>",
    '<a href="javascript:window.xssLink=1">click</a>',
    "[docs](https://example.com/docs)",
    "and `<b>code</b>`",
  ].join(" ");
  await withChat(t, async ({ page }) => {
    await ask(page, withDirective("Show me HTML.", { reply }));
    await waitForStatus(page, "Answer ready.");
    const article = answer(page);
    const state = await page.evaluate(() => ({
      image: window.xssImage,
      script: window.xssScript,
      link: window.xssLink,
    }));
    assert.deepEqual(state, { image: undefined, script: undefined, link: undefined });
    assert.equal(await article.locator("script, img, [onerror]").count(), 0);
    const click = article.locator("a", { hasText: "click" });
    assert.equal(await click.getAttribute("href"), null, "the javascript: link lost its href");
    await click.click();
    assert.equal(await page.evaluate(() => window.xssLink), undefined);

    const docs = article.getByRole("link", { name: "docs" });
    assert.equal(await docs.getAttribute("href"), "https://example.com/docs");
    assert.equal(await docs.getAttribute("target"), "_blank");
    assert.equal(await docs.getAttribute("rel"), "noopener noreferrer");
    assert.equal(await article.locator("code").innerText(), "<b>code</b>");
    await screenshot(page, "08-inert-html");
  }, {
    // Chromium reports the page's Content-Security-Policy (a second line of defence)
    // as soon as markup with an inline handler is parsed, even into the inert document
    // DOMPurify sanitises in; nothing runs, as the checks above show.
    expected: [/^console error: Executing inline event handler violates the following Content Security Policy/],
  });
});

for (const look of [
  // The model's opening as bor asks for it, and as a small model writes it.
  { name: "desktop-light", viewport: { width: 1280, height: 800 }, colorScheme: "light", opening: ":" },
  { name: "phone-dark", viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true, colorScheme: "dark", opening: "." },
]) {
  test(`${look.name}: a deflected answer says so once, and still after a reload`, async (t) => {
    await withChat(
      t,
      async ({ page }) => {
        await ask(
          page,
          withDirective("Which planet has the most moons?", {
            reply: `This is not from your documents${look.opening} Saturn has the most known moons.`,
          }),
        );
        await waitForStatus(page, "Answer ready.");
        await waitForIdle(page);
        for (const moment of ["as it ends", "after a reload"]) {
          const article = answer(page);
          assert.equal(
            await article.getByText(/not from your documents/i).count(),
            1,
            `${moment}: the notice once, the model's own opening left out`,
          );
          assert.ok(await article.locator(".deflected-notice").isVisible(), `${moment}: the notice shows`);
          assert.equal(await answerText(article), "Saturn has the most known moons.");
          const described = await article.evaluate(
            (node) => document.getElementById(node.getAttribute("aria-describedby"))?.textContent,
          );
          assert.match(described ?? "", /^Not from your documents/, `${moment}: the article is described by it`);
          if (moment === "as it ends") {
            await page.waitForURL((url) => url.searchParams.has("c"));
            await page.reload();
            await page.locator(".answer-body").first().waitFor();
          }
        }
        await screenshot(page, `13-deflected-after-reload-${look.name}`);
      },
      { contextOptions: { viewport: look.viewport, isMobile: look.isMobile, hasTouch: look.hasTouch, colorScheme: look.colorScheme } },
    );
  });
}

test("a stopped answer keeps the sources it was given", async (t) => {
  const title = "Heron field guide";
  await insertDocument(suite, t, { title, text: "Herons stand still in shallow water to catch fish." });
  await withChat(t, async ({ page }) => {
    const words = Array.from({ length: 60 }, (_, i) => `word${i}`).join(" ");
    await ask(
      page,
      withDirective("How do herons catch fish in shallow water?", { reply: words, token_delay_ms: 150 }),
    );
    const article = answer(page);
    await article.locator(".answer-body", { hasText: "word3" }).waitFor();
    await page.getByRole("button", { name: "Stop" }).click();
    await waitForStatus(page, "Stopped.");
    assert.equal(await article.locator(".answer-note").innerText(), "Stopped — the answer above is partial.");
    const sources = article.getByRole("list", { name: "Sources" });
    await sources.waitFor();
    assert.equal(await sources.getByRole("link").count(), 1);
    assert.ok(await sources.getByRole("link", { name: `[1] ${title}`, exact: true }).isVisible());
    await screenshot(page, "14-stopped-with-sources");
  });
});
