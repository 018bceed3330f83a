// The admin page's audit trail (docs/PROTOCOL.md, "Audit trail"): the sign-ins and the
// failed one are listed with who and from where, and the action filter keeps one kind;
// at phone width the table scrolls inside its panel instead of widening the page.

import assert from "node:assert/strict";
import { after, before, test } from "node:test";

import { recordProblems, screenshot } from "./chat-page.mjs";
import { runBor, startSuite, waitUntil } from "./harness.mjs";

const PASSWORD = "correct horse battery staple";

let suite;

before(async () => {
  suite = await startSuite({ borEnv: { BOR_AUTH: "accounts" } });
  runBor(suite.database, ["user", "add", "boss", "--admin", "--password-stdin"], `${PASSWORD}\n`);
  runBor(suite.database, ["user", "add", "ann", "--password-stdin"], `${PASSWORD}\n`);
});

after(async () => {
  await suite?.stop();
});

async function signIn(page, username, password) {
  await page.goto(new URL("/login", suite.bor.url).toString());
  await page.getByRole("textbox", { name: "Username" }).fill(username);
  await page.getByLabel("Password").fill(password);
  await page.getByRole("button", { name: "Sign in" }).click();
}

for (const [name, viewport] of [
  ["desktop", { width: 1280, height: 900 }],
  ["phone", { width: 390, height: 844 }],
]) {
  test(`the audit trail lists sign-ins and filters by action (${name})`, async (t) => {
    const context = await suite.browser.newContext({ viewport });
    context.setDefaultTimeout(15_000);
    t.after(() => context.close());
    const page = await context.newPage();
    const problems = [];
    recordProblems(page, problems);
    // A failed sign-in, then the admin's own.
    await signIn(page, "ann", "not her password at all");
    await page.getByText(/wrong username or password/i).waitFor();
    // The refusal's 401 is the browser's console line for it, expected here.
    problems.length = 0;
    await signIn(page, "boss", PASSWORD);
    await page.waitForURL((url) => url.pathname === "/");
    await page.goto(new URL("/admin/audit", suite.bor.url).toString());

    const table = page.getByRole("table", { name: "Audit trail" });
    await table.getByRole("cell", { name: "Sign-in failed" }).first().waitFor();
    await table.getByRole("cell", { name: "Signed in" }).first().waitFor();
    const failedRow = table.getByRole("row").filter({ hasText: "Sign-in failed" }).first();
    assert.match(await failedRow.innerText(), /ann/);
    assert.match(await failedRow.innerText(), /127\.0\.0\.1/);

    await page.getByLabel("Action").selectOption("sign_in_failed");
    await page.locator("#audit-filters").getByRole("button", { name: "Show" }).click();
    await waitUntil(
      async () => {
        const actions = await table.locator("tbody tr td:nth-child(3)").allInnerTexts();
        return actions.length > 0 && actions.every((action) => action === "Sign-in failed");
      },
      { what: "only failed sign-ins listed" },
    );
    await table.scrollIntoViewIfNeeded();
    await screenshot(page, `audit-${name}`);
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
    assert.ok(overflow <= 0, `the page is ${overflow}px wider than the screen`);
    assert.deepEqual(problems, []);
  });
}
