// Limits and usage on the pages (docs/PROTOCOL.md, "Usage and limits"): an admin sets
// 3 turns a day for a member on the admin page; the member's fourth question is refused
// with the reason and the time it resets on the chat page; the admin's usage table shows
// the three turns and the audit trail the change. Desktop and phone.

import assert from "node:assert/strict";
import { after, before, test } from "node:test";

import { ask, screenshot, signedInAs, waitForIdle } from "./chat-page.mjs";
import { runBor, startSuite, waitUntil } from "./harness.mjs";

const PASSWORD = "correct horse battery staple";

let suite;

before(async () => {
  suite = await startSuite({ borEnv: { BOR_AUTH: "accounts" } });
  runBor(suite.database, ["user", "add", "boss", "--admin", "--password-stdin"], `${PASSWORD}\n`);
});

after(async () => {
  await suite?.stop();
});

for (const [name, viewport] of [
  ["desktop", { width: 1280, height: 900 }],
  ["phone", { width: 390, height: 844 }],
]) {
  test(`a member's fourth turn of three a day is refused in words (${name})`, async (t) => {
    const member = `member-${name}`;
    runBor(suite.database, ["user", "add", member, "--password-stdin"], `${PASSWORD}\n`);
    const admin = await signedInAs(suite, t, { username: "boss", password: PASSWORD, viewport, path: "/admin/limits" });
    const limits = admin.page.locator("#limits-panel");
    await limits.getByLabel("For", { exact: true }).selectOption("user");
    await limits.getByLabel("Name", { exact: true }).fill(member);
    await limits.getByLabel("Turns a day").fill("3");
    await limits.getByRole("button", { name: "Set limit" }).click();
    await admin.page.getByRole("table", { name: "Limits" }).getByRole("cell", { name: `Person ${member}`, exact: true }).waitFor();

    const asker = await signedInAs(suite, t, { username: member, password: PASSWORD, viewport });
    for (let n = 1; n <= 3; n += 1) {
      await ask(asker.page, `Question number ${n} about refunds?`);
      await waitForIdle(asker.page);
    }
    await ask(asker.page, "And a fourth question?");
    const banner = asker.page.locator("#error-banner");
    await banner.waitFor();
    const words = await banner.innerText();
    assert.match(words, /your limit of 3 questions a day/, words);
    assert.match(words, /You can ask again from .* \(\d{4}-\d{2}-\d{2} 00:00 UTC\)/, words);
    await screenshot(asker.page, `limits-refused-${name}`);
    // The 429 is the browser's console line for it, expected here.
    asker.problems.length = 0;

    await admin.page.goto(new URL("/admin/usage", suite.bor.url).toString());
    const usage = admin.page.getByRole("table", { name: "Usage" });
    const row = usage.getByRole("row").filter({ hasText: member });
    await waitUntil(async () => (await row.count()) === 1, { what: "the member's usage row" });
    const cells = await row.locator("td").allInnerTexts();
    assert.equal(cells[2], "3", `three turns: ${cells}`);
    // The chart draws the same days, and says what it shows in words.
    const chart = admin.page.getByRole("img", { name: /^Tokens per day from \d{4}-\d{2}-\d{2} to \d{4}-\d{2}-\d{2}: \d+ in and \d+ out, over \d+ turns\.$/ });
    await chart.waitFor();
    assert.equal(await chart.locator("canvas").count(), 1, "uPlot drew it");
    assert.match(await chart.innerText(), /Tokens in[\s\S]*Tokens out/, "its legend names both series");
    await chart.scrollIntoViewIfNeeded();
    await screenshot(admin.page, `limits-usage-chart-${name}`);
    await usage.scrollIntoViewIfNeeded();
    await screenshot(admin.page, `limits-usage-${name}`);
    await admin.page.getByRole("navigation", { name: "Admin sections" }).getByRole("link", { name: "Audit trail" }).click();
    const audit = admin.page.getByRole("table", { name: "Audit trail" });
    await audit.getByRole("cell", { name: "Limit set" }).first().waitFor();
    const overflow = await admin.page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
    assert.ok(overflow <= 0, `the admin page is ${overflow}px wider than the screen`);
    assert.deepEqual(admin.problems, []);
    assert.deepEqual(asker.problems, []);
  });
}
