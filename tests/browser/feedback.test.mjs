// Rating an answer on the chat page (docs/PROTOCOL.md, "Feedback"): with the mouse and
// with the keyboard, at desktop and phone width; the rating survives a reload, a
// thumbs-down asks why, and pressing the pressed button takes the rating back.

import assert from "node:assert/strict";
import { after, before, test } from "node:test";

import { ask, screenshot, signedInAs, waitForIdle, waitForStatus } from "./chat-page.mjs";
import { runBor, startSuite, waitUntil } from "./harness.mjs";

const PASSWORD = "correct horse battery staple";

let suite;

before(async () => {
  suite = await startSuite({ borEnv: { BOR_AUTH: "accounts" } });
  runBor(suite.database, ["user", "add", "ann", "--password-stdin"], `${PASSWORD}\n`);
  runBor(suite.database, ["user", "add", "boss", "--admin", "--password-stdin"], `${PASSWORD}\n`);
});

after(async () => {
  await suite?.stop();
});

const signedIn = (t, viewport, username = "ann") =>
  signedInAs(suite, t, { username, password: PASSWORD, viewport });

/** The stored rating of the conversation's first turn, as the API gives it. */
async function storedRating(page, conversation) {
  return page.evaluate(async (id) => {
    const loaded = await (await fetch(`/api/conversations/${id}`)).json();
    return loaded.turns[0].feedback;
  }, conversation);
}

for (const [name, viewport] of [
  ["desktop", { width: 1280, height: 800 }],
  ["phone", { width: 390, height: 844 }],
]) {
  test(`an answer is rated, changed and taken back (${name})`, async (t) => {
    const { page, problems } = await signedIn(t, viewport);
    const response = page.waitForResponse((r) => r.url().endsWith("/api/chat"));
    await ask(page, `Where is the kettle descaler (${name})?`);
    const conversation = (await response).headers()["x-conversation-id"];
    await waitForStatus(page, "Answer ready.");
    await waitForIdle(page);

    const rating = page.getByRole("group", { name: "Rate this answer" });
    const helpful = rating.getByRole("button", { name: "Helpful", exact: true });
    const notHelpful = rating.getByRole("button", { name: "Not helpful" });
    // Said before anything is sent: the rating's description names the sharing.
    const described = await rating.evaluate((group) =>
      document.getElementById(group.getAttribute("aria-describedby"))?.textContent,
    );
    assert.match(described ?? "", /shares this question, its answer and its sources with your admins/);
    assert.equal(await helpful.getAttribute("aria-pressed"), "false");

    await helpful.click();
    await page.getByRole("status").filter({ hasText: "Thanks — your rating was sent." }).waitFor();
    assert.equal(await helpful.getAttribute("aria-pressed"), "true");
    assert.equal((await storedRating(page, conversation))?.rating, "up");

    // With the keyboard: the thumbs-down opens the reason, focused.
    await notHelpful.focus();
    await page.keyboard.press("Enter");
    const reason = page.getByLabel("What went wrong?");
    await waitUntil(async () => reason.evaluate((select) => select === document.activeElement), {
      what: "the reason focused",
    });
    await reason.selectOption("missing_source");
    await page.getByLabel("Comment (optional)").fill("It is under the sink.");
    await screenshot(page, `feedback-form-${name}`);
    await page.getByRole("button", { name: "Send rating" }).click();
    await waitUntil(async () => (await notHelpful.getAttribute("aria-pressed")) === "true", {
      what: "thumbs-down pressed",
    });
    const stored = await storedRating(page, conversation);
    assert.deepEqual([stored?.rating, stored?.reason, stored?.comment], [
      "down",
      "missing_source",
      "It is under the sink.",
    ]);
    assert.equal(await helpful.getAttribute("aria-pressed"), "false");

    // A reload shows the rating as it is kept.
    await page.reload();
    await page.getByRole("textbox", { name: "Message" }).waitFor();
    const reloaded = page.getByRole("group", { name: "Rate this answer" });
    await waitUntil(
      async () =>
        (await reloaded.getByRole("button", { name: "Not helpful" }).getAttribute("aria-pressed")) === "true",
      { what: "the kept rating shown after a reload" },
    );
    await screenshot(page, `feedback-rated-${name}`);

    // Pressing the pressed button takes the rating back.
    await reloaded.getByRole("button", { name: "Not helpful" }).click();
    await page.getByRole("status").filter({ hasText: "Rating removed." }).waitFor();
    assert.equal(await storedRating(page, conversation), null);
    assert.deepEqual(problems, []);
  });
}

test("an admin names the passage a thumbs-down missed and runs the evaluation set", async (t) => {
  const boss = await signedIn(t, { width: 1280, height: 900 }, "boss");
  const added = await boss.page.evaluate(async () => {
    const response = await fetch("/api/admin/documents", {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({
        title: "Office kitchen",
        content: "The descaler bottle for the office kettle is in the cupboard under the sink.",
      }),
    });
    return response.status;
  });
  assert.equal(added, 201);

  const ann = await signedIn(t, { width: 1280, height: 800 });
  await ask(ann.page, "Where is the descaler bottle for the office kettle?");
  await waitForStatus(ann.page, "Answer ready.");
  await waitForIdle(ann.page);
  await ann.page.getByRole("button", { name: "Not helpful" }).click();
  await ann.page.getByLabel("What went wrong?").selectOption("missing_source");
  await ann.page.getByRole("button", { name: "Send rating" }).click();
  await ann.page.getByRole("status").filter({ hasText: "Thanks — your rating was sent." }).waitFor();

  const { page, problems } = boss;
  await page.goto(new URL("/admin/feedback", suite.bor.url).toString());
  const rated = page.getByRole("list", { name: "Rated answers" }).getByRole("listitem").first();
  await rated.getByText("Where is the descaler bottle for the office kettle?").first().waitFor();
  await rated.getByText("Not helpful — The right passage was not found").waitFor();
  // The answer was grounded: its source shows each ranking's score.
  await rated.getByRole("list", { name: "Sources given" }).getByText(/vector \d\.\d\d · .*fused \d\.\d\d/).waitFor();
  await rated.getByRole("button", { name: "Name the right passages" }).click();
  const search = rated.getByRole("searchbox", { name: "Search as the asker" });
  await search.fill("descaler bottle cupboard");
  await search.press("Enter");
  const passage = rated.getByRole("checkbox", { name: /Office kitchen/ });
  await passage.check();
  await rated.getByRole("button", { name: "Save passages" }).click();
  await rated.getByText("1 passage named: in the evaluation set.").waitFor();

  await page.getByRole("button", { name: "Run the evaluation set" }).click();
  await page.getByText(/^Run \d+: 1 queries, 0 a turn would not answer/).waitFor();
  const runs = page.getByRole("table", { name: "Evaluation set" });
  await waitUntil(async () => (await runs.getByRole("row").count()) === 2, { what: "one run listed" });
  // Every named passage is in one collection: the run's own row says it all.
  assert.equal(await page.locator("#eval-by-collection").isHidden(), true);
  await screenshot(page, "feedback-admin-review");

  // A passage named in a second collection: the run reads by collection too.
  const stored = await page.evaluate(async () => {
    const post = (path, body) =>
      fetch(path, { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(body) });
    const made = await post("/api/admin/collections", { name: "hr" });
    const added = await post("/api/admin/documents", {
      title: "HR first aid",
      content: "The first-aid kit of the HR floor hangs on the wall beside the lift.",
      collection: "hr",
    });
    return [made.status, added.status];
  });
  assert.deepEqual(stored, [201, 201]);
  const chat = await page.context().newPage();
  await chat.goto(new URL("/", suite.bor.url).toString());
  await ask(chat, "Where does the HR floor keep its first-aid kit?");
  await waitForStatus(chat, "Answer ready.");
  await waitForIdle(chat);
  await chat.getByRole("button", { name: "Not helpful" }).click();
  await chat.getByRole("button", { name: "Send rating" }).click();
  await chat.getByRole("status").filter({ hasText: "Thanks — your rating was sent." }).waitFor();
  await chat.close();

  await page.reload();
  const hrRated = page
    .getByRole("list", { name: "Rated answers" })
    .getByRole("listitem")
    .filter({ hasText: "Where does the HR floor keep its first-aid kit?" })
    .first();
  await hrRated.getByRole("button", { name: "Name the right passages" }).click();
  const hrSearch = hrRated.getByRole("searchbox", { name: "Search as the asker" });
  await hrSearch.fill("first-aid kit HR floor");
  await hrSearch.press("Enter");
  await hrRated.getByRole("checkbox", { name: /HR first aid/ }).check();
  await hrRated.getByRole("button", { name: "Save passages" }).click();
  await hrRated.getByText("1 passage named: in the evaluation set.").waitFor();
  await page.getByRole("button", { name: "Run the evaluation set" }).click();
  await page.getByText(/^Run \d+: 2 queries/).waitFor();
  const byCollection = page.getByRole("table", { name: /^Run \d+ by the collection of the named passages$/ });
  await byCollection.waitFor();
  const names = await byCollection.getByRole("rowheader").allTextContents();
  assert.deepEqual(names, ["default", "hr"]);
  for (const name of names) {
    const cells = await byCollection.getByRole("row").filter({ hasText: name }).getByRole("cell").allTextContents();
    assert.equal(cells[0], "1", `${name}: one query`);
    assert.match(cells[1], /^\d\.\d{4}$/, `${name}: documents nDCG@10`);
  }
  await byCollection.scrollIntoViewIfNeeded();
  await screenshot(page, "feedback-eval-by-collection");
  assert.deepEqual(problems, []);
});
