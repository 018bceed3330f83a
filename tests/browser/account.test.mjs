// The account page (/account): reached from the name in the top bar; a key is made
// with the keyboard, shown once with a copy button, works as a bearer key, shows its
// last use and is revoked after a confirmation that names it (the other person never
// sees it); the display name is saved; the theme switch holds across pages and
// reloads; the password is changed there. Desktop and phone.

import assert from "node:assert/strict";
import { after, before, test } from "node:test";

import { ask, openAccountMenu, screenshot, signedInAs, waitForStatus } from "./chat-page.mjs";
import { runBor, startSuite, waitUntil } from "./harness.mjs";

const PASSWORD = "correct horse battery staple";

let suite;

before(async () => {
  suite = await startSuite({ borEnv: { BOR_AUTH: "accounts" } });
  runBor(suite.database, ["user", "add", "ann", "--password-stdin"], `${PASSWORD}\n`);
  runBor(suite.database, ["user", "add", "bob", "--password-stdin"], `${PASSWORD}\n`);
  runBor(suite.database, ["user", "add", "cy", "--password-stdin"], `${PASSWORD}\n`);
});

after(async () => {
  await suite?.stop();
});

/** `GET /api/auth/me` with `key` as the bearer: the status. */
async function statusWithKey(key) {
  const response = await fetch(new URL("/api/auth/me", suite.bor.url), {
    headers: { Authorization: `Bearer ${key}` },
  });
  return response.status;
}

for (const [name, viewport] of [
  ["desktop", { width: 1280, height: 900 }],
  ["phone", { width: 390, height: 844 }],
]) {
  test(`a person makes, copies, uses and revokes a key on the account page (${name})`, async (t) => {
    const { page, problems } = await signedInAs(suite, t, { username: "ann", password: PASSWORD, viewport });
    await page.context().grantPermissions(["clipboard-read", "clipboard-write"]);
    await openAccountMenu(page);
    await page.getByRole("link", { name: "ann, your account" }).click();
    await page.waitForURL((url) => url.pathname === "/account");
    await page.getByRole("heading", { name: "API keys and connected apps" }).waitFor();
    await page.getByText("No keys yet.").waitFor();

    // Made with the keyboard: the name, then Enter.
    const keyName = `editor on ${name}`;
    await page.getByRole("textbox", { name: "Key name" }).fill(keyName);
    await page.getByRole("textbox", { name: "Key name" }).press("Enter");
    const shown = page.locator("#new-key-value");
    await waitUntil(async () => (await shown.innerText()).startsWith("bor_"), { what: "the new key shown" });
    const key = await shown.innerText();
    assert.equal(await page.evaluate(() => document.activeElement?.id), "copy-key", "focus on Copy key");
    await page.keyboard.press("Enter");
    await page.getByText("Key copied.").waitFor();
    assert.equal(await page.evaluate(() => navigator.clipboard.readText()), key);
    await screenshot(page, `account-new-key-${name}`);

    // The key works, and the list says when it was last used.
    assert.equal(await statusWithKey(key), 200);
    await page.getByRole("button", { name: "Done" }).click();
    assert.equal(await shown.innerText(), "", "the key is gone from the page");
    const row = page.getByRole("listitem").filter({ hasText: keyName });
    await waitUntil(
      async () => {
        await page.reload();
        await row.waitFor();
        return /last used/.test(await row.innerText());
      },
      { what: "the key's last use", intervalMs: 500 },
    );
    assert.doesNotMatch(await page.locator("body").innerText(), new RegExp(key), "never shown again");

    // Another person does not see it.
    const bob = await signedInAs(suite, t, { username: "bob", password: PASSWORD, viewport, path: "/account" });
    await bob.page.getByText("No keys yet.").waitFor();
    assert.doesNotMatch(await bob.page.locator("#key-list").innerText(), new RegExp(keyName));

    // Revoked after a confirmation that names it; Keep it changes nothing.
    await row.getByRole("button", { name: `Revoke ${keyName}` }).click();
    await page.getByRole("button", { name: "Keep it" }).click();
    assert.equal(await statusWithKey(key), 200);
    await row.getByRole("button", { name: `Revoke ${keyName}` }).click();
    assert.match(await row.innerText(), new RegExp(`Revoke “${keyName}”\\? Whatever uses it stops working`));
    await screenshot(page, `account-revoke-${name}`);
    await page.getByRole("button", { name: `Revoke ${keyName}`, exact: true }).last().click();
    await page.getByText(`Revoked ${keyName}.`).waitFor();
    assert.equal(await statusWithKey(key), 401);
    await page.getByText("No keys yet.").waitFor();

    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
    assert.ok(overflow <= 0, `the page is ${overflow}px wider than the screen`);
    assert.deepEqual(problems, []);
    assert.deepEqual(bob.problems, []);
  });
}

test("the display name, the theme and the password are changed on the account page", async (t) => {
  const { page, problems } = await signedInAs(suite, t, {
    username: "bob",
    password: PASSWORD,
    viewport: { width: 1280, height: 900 },
    path: "/account",
  });
  await page.getByRole("textbox", { name: "Display name" }).fill("Bob Builder");
  await page.getByRole("button", { name: "Save name" }).click();
  await page.getByText("Name saved.").waitFor();
  await page.getByRole("link", { name: "Bob Builder, your account" }).waitFor();
  // An empty name is refused, in words, and the field says it is wrong.
  await page.getByRole("textbox", { name: "Display name" }).fill("   ");
  await page.getByRole("button", { name: "Save name" }).click();
  await page.getByText("A display name needs 1 to 64 characters.").waitFor();
  assert.equal(await page.getByRole("textbox", { name: "Display name" }).getAttribute("aria-invalid"), "true");

  // Dark, then the chat page and a reload keep it; "As the system" lets it go.
  const background = () => page.evaluate(() => getComputedStyle(document.body).backgroundColor);
  await page.getByRole("radio", { name: "Light" }).check();
  const light = await background();
  await page.getByRole("radio", { name: "Dark" }).check();
  const dark = await background();
  assert.notEqual(dark, light);
  await screenshot(page, "account-dark");
  await page.goto(new URL("/", suite.bor.url).toString());
  await page.getByRole("textbox", { name: "Message" }).waitFor();
  assert.equal(await background(), dark, "the chat page is dark too");
  await page.reload();
  assert.equal(await page.evaluate(() => document.documentElement.dataset.theme), "dark");
  await page.goto(new URL("/account", suite.bor.url).toString());
  assert.ok(await page.getByRole("radio", { name: "Dark" }).isChecked());
  await page.getByRole("radio", { name: "As the system" }).check();
  assert.equal(await page.evaluate(() => document.documentElement.dataset.theme), undefined);

  // A wrong current password is said; the right one changes it.
  await page.getByLabel("Current password").fill("not the password at all");
  await page.getByLabel("New password").fill("a brand new long password");
  await page.getByRole("button", { name: "Change password" }).click();
  await page.getByText("The current password is wrong.").waitFor();
  await page.getByLabel("Current password").fill(PASSWORD);
  await page.getByRole("button", { name: "Change password" }).click();
  await page.getByText("Password changed.", { exact: false }).waitFor();
  const response = await fetch(new URL("/api/auth/login", suite.bor.url), {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify({ username: "bob", password: "a brand new long password" }),
  });
  assert.equal(response.status, 200);
  // The refusals' 400 (the empty name) and 401 (the wrong password) are the browser's
  // console lines for them, expected here.
  assert.ok(problems.every((problem) => /status of 40[01]/.test(problem)), problems.join("\n"));
});

test("the account page's forms wait for the page to know who is signed in", async (t) => {
  const { page } = await signedInAs(suite, t, { username: "cy", password: PASSWORD });
  // Who is signed in is held back: until it is known, nothing typed could be
  // overwritten by the stored name or sent as a plain form.
  let release;
  const held = new Promise((resolve) => {
    release = resolve;
  });
  await page.route("**/api/auth/me", async (route) => {
    await held;
    await route.continue();
  });
  await page.goto(new URL("/account", suite.bor.url).toString());
  for (const field of ["Display name", "Current password", "New password", "Key name"]) {
    assert.ok(await page.getByLabel(field, { exact: true }).isDisabled(), `${field} waits`);
  }
  for (const button of ["Save name", "Change password", "Make key"]) {
    assert.ok(await page.getByRole("button", { name: button }).isDisabled(), `${button} waits`);
  }
  release();
  await page.getByRole("textbox", { name: "Display name" }).fill("Cy Early");
  await page.getByRole("button", { name: "Make key" }).waitFor();
  assert.ok(await page.getByRole("button", { name: "Make key" }).isEnabled());
  assert.equal(await page.getByRole("textbox", { name: "Display name" }).inputValue(), "Cy Early");
});

test("a person sees their own use of the last 30 days, and nobody else's", async (t) => {
  const { page, problems } = await signedInAs(suite, t, {
    username: "cy",
    password: PASSWORD,
    viewport: { width: 390, height: 844 },
  });
  await page.goto(new URL("/account", suite.bor.url).toString());
  await page.getByText("No questions in the last 30 days.").waitFor();
  await page.goto(suite.bor.url);
  await ask(page, "What is in the handbook?");
  await waitForStatus(page, "Answer ready.");
  await page.goto(new URL("/account", suite.bor.url).toString());
  await page.getByText(/^1 question, [\d,]+ tokens in all\.$/).waitFor();
  const table = page.getByRole("table", { name: "Your use, the last 30 days" });
  const today = new Date().toISOString().slice(0, 10);
  const row = table.getByRole("row", { name: new RegExp(`^${today}`) });
  const cells = await row.getByRole("cell").allInnerTexts();
  assert.equal(cells[0], "1");
  assert.ok(cells.slice(1).every((cell) => /^(≈ )?[\d,]+$/.test(cell)), cells.join(" | "));
  await screenshot(page, "account-usage-phone");
  const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
  assert.ok(overflow <= 0, `the page is ${overflow}px wider than the screen`);

  // Ann asked nothing: her page says so.
  const ann = await signedInAs(suite, t, { username: "ann", password: PASSWORD, path: "/account" });
  await ann.page.getByText("No questions in the last 30 days.").waitFor();
  assert.deepEqual(problems, []);
  assert.deepEqual(ann.problems, []);
});
