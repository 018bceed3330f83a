// Two people on one bor (BOR_AUTH=accounts): each signs in in a browser of their own,
// asks, and sees only their own conversations in the list; the address of the other's
// conversation opens nothing of it.

import assert from "node:assert/strict";
import { after, before, test } from "node:test";

import { ask, screenshot, signedInAs, waitForIdle, waitForStatus } from "./chat-page.mjs";
import { runBor, startSuite, waitUntil } from "./harness.mjs";

const PASSWORD = "correct horse battery staple";

let suite;

before(async () => {
  suite = await startSuite({ borEnv: { BOR_AUTH: "accounts" } });
  runBor(suite.database, ["user", "add", "ann", "--password-stdin"], `${PASSWORD}\n`);
  runBor(suite.database, ["user", "add", "bob", "--password-stdin"], `${PASSWORD}\n`);
});

after(async () => {
  await suite?.stop();
});

/** A browser of `username`'s own, signed in on the chat page. */
const signedIn = (t, username) => signedInAs(suite, t, { username, password: PASSWORD });

const listedTitles = (page) =>
  page.locator("#conversation-list .conversation-title").allInnerTexts();

async function askAndWait(page, question) {
  const response = page.waitForResponse((r) => r.url().endsWith("/api/chat"));
  await ask(page, question);
  const sent = await response;
  await waitForStatus(page, "Answer ready.");
  await waitForIdle(page);
  return sent.headers()["x-conversation-id"];
}

test("each person sees only their own conversations", async (t) => {
  const ann = await signedIn(t, "ann");
  const bob = await signedIn(t, "bob");
  const annsQuestion = "Where does Ann keep the descaler?";
  const bobsQuestion = "How long is Bob's garden hose?";
  await askAndWait(ann.page, annsQuestion);
  const bobs = await askAndWait(bob.page, bobsQuestion);

  for (const [person, title] of [
    [ann, annsQuestion],
    [bob, bobsQuestion],
  ]) {
    await person.page.reload();
    await person.page.getByRole("textbox", { name: "Message" }).waitFor();
    await waitUntil(async () => JSON.stringify(await listedTitles(person.page)) === JSON.stringify([title]), {
      what: `only ${title} in the list`,
    });
  }
  await screenshot(ann.page, "people-ann");
  await screenshot(bob.page, "people-bob");

  // Bob's conversation's address, opened by Ann: nothing of it shows.
  await ann.page.goto(new URL(`/?c=${bobs}`, suite.bor.url).toString());
  await ann.page.getByRole("textbox", { name: "Message" }).waitFor();
  const seen = await ann.page.evaluate(async (id) => (await fetch(`/api/conversations/${id}`)).status, bobs);
  assert.equal(seen, 404);
  const page = await ann.page.content();
  assert.ok(!page.includes(bobsQuestion), "Bob's question is not on Ann's page");
  await screenshot(ann.page, "people-ann-opens-bobs-address");
  const expected404 = (problem) => problem.includes("404");
  assert.deepEqual(ann.problems.filter((problem) => !expected404(problem)), []);
  assert.deepEqual(bob.problems, []);
});
