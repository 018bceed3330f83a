// Turns that survive the page (docs/PROTOCOL.md, "Following a turn"): a reload, a
// second tab or coming back to the conversation in the middle of an answer shows the
// text so far and goes on live, with the retry status when the turn is retrying; Stop
// from any of them ends the turn in all. At desktop and phone width.

import assert from "node:assert/strict";
import { after, before, test } from "node:test";

import { startSuite, waitUntil } from "./harness.mjs";
import {
  answer,
  answerText,
  ask,
  openChat,
  retryStatus,
  screenshot,
  waitForStatus,
  withDirective,
} from "./chat-page.mjs";
import { sqlText } from "./knowledge.mjs";

let suite;

before(async () => {
  // Retries wait long enough for a reload to land in the middle of one.
  suite = await startSuite({ borEnv: { BOR_LLM_RETRY_DELAY: "2" } });
});

after(async () => {
  await suite?.stop();
});

const LOOKS = [
  { name: "desktop", viewport: { width: 1280, height: 900 } },
  { name: "phone", viewport: { width: 390, height: 844 } },
];

const WORDS = Array.from({ length: 40 }, (_, i) => `word${i}`);

/** A question whose answer comes one word every `delayMs`. */
function slowQuestion(question, delayMs = 150) {
  return withDirective(question, { reply: WORDS.join(" "), token_delay_ms: delayMs });
}

/** Waits until the last answer on `page` holds `text`. */
async function waitForAnswerText(page, text) {
  await page.waitForFunction(
    (expected) => [...document.querySelectorAll("article .answer-body")].at(-1)?.textContent.includes(expected),
    text,
  );
}

/** The console's line for the 404 of a conversation whose first turn is still
 *  running (the server stores a conversation with its first turn's row). */
const NOT_STORED_YET = /the server responded with a status of 404/;

async function withContext(t, look, run) {
  const chat = await openChat(suite, { viewport: look.viewport });
  t.after(() => chat.context.close());
  await run(chat);
  const unexpected = chat.problems.filter((problem) => !NOT_STORED_YET.test(problem));
  assert.deepEqual(unexpected, [], "the page logged no errors");
}

function storedRow(question) {
  const rows = suite.database.query(`SELECT status, answer FROM query_log WHERE question = ${sqlText(question)}`);
  return rows.length > 0 ? rows[0] : null;
}

for (const look of LOOKS) {
  test(`a reload in the middle of an answer shows the text so far and goes on live (${look.name})`, async (t) => {
    await withContext(t, look, async ({ page }) => {
      const question = slowQuestion(`Count for me after a reload, ${look.name}.`);
      await ask(page, question);
      await waitForAnswerText(page, "word4");
      await page.reload();
      // The text so far, at once, while the answer is still coming.
      await waitForAnswerText(page, "word4");
      const soFar = await answerText(answer(page));
      assert.ok(!soFar.includes("word39"), `mid-answer after the reload: ${soFar}`);
      await screenshot(page, `resume-01-reloaded-mid-answer-${look.name}`);
      await waitForStatus(page, "Answer ready.");
      assert.equal(await answerText(answer(page)), WORDS.join(" "));
      assert.equal(await page.getByRole("article").count(), 1, "the turn is shown once");
      await screenshot(page, `resume-02-reloaded-answer-complete-${look.name}`);
      const [status] = await waitUntil(() => storedRow(question), { what: "the turn's row" });
      assert.equal(status, "done");

      // Once it has ended, the conversation shows it once, as stored.
      await page.reload();
      await waitForAnswerText(page, "word39");
      assert.equal(await page.getByRole("article").count(), 1);
    });
  });

  test(`a second tab follows the answer and its Stop ends it in both (${look.name})`, async (t) => {
    await withContext(t, look, async ({ context, page }) => {
      const question = slowQuestion(`Count for me in two tabs, ${look.name}.`, 200);
      await ask(page, question);
      await waitForAnswerText(page, "word3");
      const second = await context.newPage();
      await second.goto(page.url());
      await waitForAnswerText(second, "word3");
      const soFar = await answerText(answer(second));
      assert.ok(!soFar.includes("word39"), `mid-answer in the second tab: ${soFar}`);
      await waitForAnswerText(second, "word6");
      await screenshot(second, `resume-03-second-tab-following-${look.name}`);

      await second.getByRole("button", { name: "Stop" }).click();
      await waitForStatus(second, "Stopped.");
      await waitForStatus(page, "Stopped.");
      const [first, other] = [await answerText(answer(page)), await answerText(answer(second))];
      assert.equal(first, other, "both tabs show the same partial answer");
      assert.ok(!first.includes("word39"), "the answer was cut short");
      for (const tab of [page, second]) {
        assert.match(await answer(tab).locator(".answer-note").innerText(), /partial/);
      }
      await screenshot(page, `resume-04-stopped-from-the-other-tab-${look.name}`);
      const [status, stored] = await waitUntil(() => storedRow(question), { what: "the turn's row" });
      assert.equal(status, "stopped");
      assert.equal(stored.trim(), first);
    });
  });
}

test("coming back to the conversation in the middle of an answer follows it", async (t) => {
  await withContext(t, LOOKS[0], async ({ page }) => {
    const question = slowQuestion("Count for me while I look elsewhere.");
    await ask(page, question);
    await waitForAnswerText(page, "word3");
    await page.getByRole("button", { name: "New chat" }).click();
    await page.waitForFunction(() => document.querySelectorAll("article").length === 0);
    await page.goBack();
    await waitForAnswerText(page, "word3");
    await waitForStatus(page, "Answer ready.");
    assert.equal(await answerText(answer(page)), WORDS.join(" "));
    const [status] = await waitUntil(() => storedRow(question), { what: "the turn's row" });
    assert.equal(status, "done", "leaving the conversation did not stop the turn");
  });
});

test("a reload while the turn waits to retry shows the retry status, then the answer", async (t) => {
  await withContext(t, LOOKS[1], async ({ page }) => {
    await ask(page, withDirective("Is anyone there after a reload?", { status: 503, times: 2 }));
    await waitForStatus(page, retryStatus(1, 3));
    await page.reload();
    await page.waitForFunction(() =>
      /retrying \(\d of 3\)/.test(document.getElementById("send-status")?.textContent ?? ""),
    );
    await screenshot(page, "resume-05-reloaded-while-retrying-phone");
    await waitForStatus(page, "Answer ready.");
    assert.equal(await answerText(answer(page)), "Mock answer: Is anyone there after a reload?");
  });
});
