// Versions of a turn on the chat page (docs/PROTOCOL.md, "Versions of a turn" and
// "Chat page"), against bor, the mock LLM (behind a proxy that records what the model
// was sent) and PostgreSQL: Regenerate under the last answer and Edit on the last
// question make new versions of that turn, never a new turn; "‹ n / N ›" switches
// between them by keyboard with the position announced; a reload shows them from the
// server, and follows a version still running; a later turn's model sees the version
// shown last. At desktop width in light and at phone width in dark.

import assert from "node:assert/strict";
import { after, before, test } from "node:test";

import { startSuite, waitUntil } from "./harness.mjs";
import { answer, answerText, ask, openChat, screenshot, waitForIdle, waitForStatus, withDirective } from "./chat-page.mjs";

let suite;

before(async () => {
  suite = await startSuite({ recordChat: true });
});

after(async () => {
  await suite?.stop();
});

/** Runs `act` (which sends a turn) and waits for its answer; the body the page sent. */
async function sendAndWait(page, act) {
  const response = page.waitForResponse((r) => r.url().endsWith("/api/chat"));
  await act();
  const sent = await response;
  await waitForStatus(page, "Answer ready.");
  await waitForIdle(page);
  return sent.request().postDataJSON();
}

const position = (article) => article.locator(".version-position .visually-hidden").innerText();
const questions = (page) => page.locator(".question-text:visible").allInnerTexts();

/** The messages of the model's last chat request, without the system message. */
function lastConversationSent() {
  return suite.chatRequests
    .at(-1)
    .messages.filter((message) => message.role !== "system")
    .map(({ role, content }) => ({ role, content }));
}

for (const { name, viewport, colorScheme } of [
  { name: "desktop", viewport: { width: 1280, height: 800 }, colorScheme: "light" },
  { name: "phone", viewport: { width: 390, height: 844 }, colorScheme: "dark" },
]) {
  test(`Regenerate and Edit make versions of the last turn, switched by keyboard and kept on reload (${name}, ${colorScheme})`, async (t) => {
    suite.database.query("DELETE FROM conversations");
    const { context, page, problems } = await openChat(suite, { viewport, colorScheme });
    t.after(() => context.close());

    await sendAndWait(page, () => ask(page, "Where do otters sleep?"));
    await sendAndWait(page, () => ask(page, "What do otters eat?"));
    const regenerate = page.getByRole("button", { name: "Regenerate" });
    const edit = page.getByRole("button", { name: "Edit", exact: true });
    assert.equal(await regenerate.count(), 1, "Regenerate under the last answer only");
    assert.equal(await answer(page, 0).getByRole("button", { name: "Regenerate" }).count(), 0);
    assert.equal(await edit.count(), 1, "Edit on the last question only");

    // Regenerate: the same question, as a version of the last turn.
    const [[lastTurnId]] = await waitUntil(
      () => {
        const rows = suite.database.query("SELECT turn_id FROM query_log WHERE question = 'What do otters eat?'");
        return rows.length > 0 && rows;
      },
      { what: "the last turn's row" },
    );
    const regenerated = await sendAndWait(page, () => regenerate.click());
    assert.equal(regenerated.message, "What do otters eat?");
    assert.equal(regenerated.version_of, lastTurnId);
    assert.equal(await page.getByRole("article").count(), 2, "no new turn at the end");
    const last = answer(page, 1);
    const versions = last.getByRole("group", { name: "Versions of this answer" });
    await versions.waitFor();
    assert.equal(await position(last), "Version 2 of 2");

    // Edit by keyboard: Escape leaves it with the focus back on Edit; Enter sends.
    await edit.focus();
    await page.keyboard.press("Enter");
    const box = page.getByRole("textbox", { name: "Edit your question" });
    await box.waitFor();
    assert.ok(await box.evaluate((node) => node === document.activeElement), "the edit box has the keyboard");
    assert.equal(await box.inputValue(), "What do otters eat?");
    await page.keyboard.press("Escape");
    await box.waitFor({ state: "hidden" });
    assert.ok(await edit.evaluate((node) => node === document.activeElement), "focus back on Edit");
    assert.deepEqual(await questions(page), ["Where do otters sleep?", "What do otters eat?"]);
    await page.keyboard.press("Enter");
    await box.fill("What do sea otters eat?");
    await screenshot(page, `versions-edit-${name}`);
    const edited = await sendAndWait(page, () => box.press("Enter"));
    assert.equal(edited.message, "What do sea otters eat?");
    assert.deepEqual(await questions(page), ["Where do otters sleep?", "What do sea otters eat?"]);
    assert.equal(await answerText(last), "Mock answer: What do sea otters eat?");
    assert.equal(await position(last), "Version 3 of 3");

    // The versions by keyboard: the position is announced on the status line too.
    const previous = versions.getByRole("button", { name: "Previous version" });
    const next = versions.getByRole("button", { name: "Next version" });
    assert.equal(await next.isDisabled(), true, "the newest is the last");
    await previous.focus();
    await page.keyboard.press("Enter");
    await page.keyboard.press("Enter");
    assert.equal(await position(last), "Version 1 of 3");
    await waitForStatus(page, "Version 1 of 3.");
    assert.deepEqual(await questions(page), ["Where do otters sleep?", "What do otters eat?"]);
    assert.equal(await previous.isDisabled(), true);
    assert.ok(await next.evaluate((node) => node === document.activeElement), "the keyboard stays in the group");
    await page.keyboard.press("Enter");
    assert.equal(await position(last), "Version 2 of 3");
    const overflow = await page.evaluate(
      () => document.documentElement.scrollWidth - document.documentElement.clientWidth,
    );
    assert.equal(overflow, 0, "no horizontal overflow");
    await screenshot(page, `versions-${name}`);

    // A reload reads them from the server: the newest shown, every version kept.
    await page.reload();
    await page.locator(".question-text").nth(1).waitFor();
    assert.deepEqual(await questions(page), ["Where do otters sleep?", "What do sea otters eat?"]);
    assert.equal(await page.getByRole("article").count(), 2);
    await answer(page, 1).getByRole("group", { name: "Versions of this answer" }).waitFor();
    assert.equal(await position(answer(page, 1)), "Version 3 of 3");

    // A later turn: the model sees the version asked last; the earlier turn keeps its
    // versions but is not asked again.
    await sendAndWait(page, () => ask(page, "Do they use tools?"));
    assert.deepEqual(lastConversationSent(), [
      { role: "user", content: "Where do otters sleep?" },
      { role: "assistant", content: "Mock answer: Where do otters sleep?" },
      { role: "user", content: "What do sea otters eat?" },
      { role: "assistant", content: "Mock answer: What do sea otters eat?" },
      { role: "user", content: "Do they use tools?" },
    ]);
    assert.equal(await answer(page, 1).getByRole("button", { name: "Regenerate" }).count(), 0);
    assert.equal(await answer(page, 2).getByRole("button", { name: "Regenerate" }).count(), 1);
    assert.equal(await position(answer(page, 1)), "Version 3 of 3");
    assert.deepEqual(problems, [], "the page logged no errors");
  });
}

test("a version still running when the page reloads is followed among the turn's versions", async (t) => {
  suite.database.query("DELETE FROM conversations");
  const { context, page, problems } = await openChat(suite, { viewport: { width: 1280, height: 800 } });
  t.after(() => context.close());
  const words = Array.from({ length: 40 }, (_, i) => `word${i}`).join(" ");
  const question = withDirective("Count slowly.", { reply: words, token_delay_ms: 100 });
  await sendAndWait(page, () => ask(page, question));

  await page.getByRole("button", { name: "Regenerate" }).click();
  await page.waitForFunction(() =>
    [...document.querySelectorAll("article .answer-body")].at(-1)?.textContent.includes("word3"),
  );
  await page.reload();
  await page.locator(".question-text").first().waitFor();
  await waitForStatus(page, "Answer ready.");
  assert.equal(await page.getByRole("article").count(), 1, "the version is not a turn of its own");
  assert.equal(await answerText(answer(page, 0)), words, "the whole answer, once");
  assert.equal(await position(answer(page, 0)), "Version 2 of 2");
  await waitUntil(() => suite.database.query("SELECT count(*) FROM query_log WHERE version_of IS NOT NULL")[0][0] === "1", {
    what: "the version's row",
  });
  assert.deepEqual(problems, []);
});

test("a version that fails gives way to the next: Retry asks it again as a version", async (t) => {
  suite.database.query("DELETE FROM conversations");
  const { context, page, problems } = await openChat(suite, { viewport: { width: 1280, height: 800 } });
  t.after(() => context.close());
  await sendAndWait(page, () => ask(page, "Where do otters sleep?"));
  // Fails on all four attempts (first and three retries); the same request succeeds
  // when Retry sends it again.
  const flaky = withDirective("Where do sea otters sleep?", { status: 503, times: 4 });
  await page.getByRole("button", { name: "Edit", exact: true }).click();
  await page.getByRole("textbox", { name: "Edit your question" }).fill(flaky);
  await page.locator(".question-edit").getByRole("button", { name: "Send" }).click();
  await page.getByRole("alert").waitFor();
  assert.equal(await position(answer(page, 0)), "Version 2 of 2");
  assert.equal(await page.getByRole("button", { name: "Regenerate" }).count(), 0, "nothing to ask again of a failure");

  await page.getByRole("button", { name: "Retry" }).click();
  await waitForStatus(page, "Answer ready.");
  await waitForIdle(page);
  assert.equal(await page.getByRole("article").count(), 1);
  assert.equal(await position(answer(page, 0)), "Version 2 of 2", "the failed version gave way");
  assert.deepEqual(await questions(page), [flaky]);
  await waitUntil(() => suite.database.query("SELECT count(version_of) FROM query_log")[0][0] === "1", {
    what: "the version's row",
  });
  assert.deepEqual(problems, []);
});
