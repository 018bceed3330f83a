// The sign-in page with BOR_AUTH=accounts: the keyboard alone, a wrong password's
// alert, phone width and dark mode, the way back to where the browser was sent from,
// and signing out.

import assert from "node:assert/strict";
import { join } from "node:path";
import { after, before, test } from "node:test";

import { openAccountMenu, recordProblems } from "./chat-page.mjs";
import { ARTIFACTS, runBor, startSuite } from "./harness.mjs";

const PASSWORD = "correct horse battery staple";

let suite;

before(async () => {
  suite = await startSuite({ borEnv: { BOR_AUTH: "accounts" } });
  runBor(suite.database, ["user", "add", "root", "--admin", "--password-stdin"], `${PASSWORD}\n`);
  runBor(suite.database, ["user", "add", "ann", "--password-stdin"], `${PASSWORD}\n`);
});

after(async () => {
  await suite?.stop();
});

/** A fresh context (no cookie) with `path` opened; the page and the problems it logs. */
async function open(t, path, contextOptions = {}) {
  const context = await suite.browser.newContext(contextOptions);
  context.setDefaultTimeout(15_000);
  t.after(() => context.close());
  const page = await context.newPage();
  const problems = [];
  recordProblems(page, problems);
  await page.goto(new URL(path, suite.bor.url).toString());
  return { page, problems };
}

/** Signs in with the keyboard only: the username field has the focus on arrival. */
async function signInByKeyboard(page, username, password) {
  await page.getByRole("textbox", { name: "Username" }).waitFor();
  await page.keyboard.type(username);
  await page.keyboard.press("Tab");
  await page.keyboard.type(password);
  await page.keyboard.press("Enter");
}

test("a browser sent to sign in signs in by keyboard and comes back where it was", async (t) => {
  const { page, problems } = await open(t, "/admin");
  assert.equal(new URL(page.url()).pathname, "/login");
  assert.equal(new URL(page.url()).searchParams.get("next"), "/admin");
  await signInByKeyboard(page, "root", PASSWORD);
  await page.waitForURL((url) => url.pathname === "/admin");
  await page.getByRole("button", { name: "Sign out" }).waitFor();
  await page.getByRole("heading", { name: "Service health" }).waitFor();
  assert.equal(await page.locator("#token-form").isVisible(), false, "an admin's session needs no token");
  assert.deepEqual(problems, []);
});

test("a wrong password shows the alert and signs nobody in", async (t) => {
  const { page, problems } = await open(t, "/login");
  await signInByKeyboard(page, "ann", "not the password");
  const alert = page.getByRole("alert");
  await alert.waitFor();
  assert.equal((await alert.textContent()).trim(), "Wrong username or password.");
  assert.equal(new URL(page.url()).pathname, "/login");
  assert.equal(
    await page.evaluate(() => document.activeElement?.id),
    "password",
    "the focus is back on the password",
  );
  const me = await page.evaluate(async () => (await fetch("/api/auth/me")).status);
  assert.equal(me, 401);
  // The failed sign-in is the 401 the browser logs; nothing else.
  assert.ok(problems.every((problem) => problem.includes("401")), problems.join("\n"));
});

test("next only ever points inside bor", async (t) => {
  const { page } = await open(t, "/login?next=//evil.example/steal");
  await signInByKeyboard(page, "ann", PASSWORD);
  await page.waitForURL((url) => url.pathname === "/");
  assert.equal(new URL(page.url()).host, new URL(suite.bor.url).host);
});

test("at phone width in dark mode the form fits and signing out ends the session", async (t) => {
  const { page, problems } = await open(t, "/", {
    viewport: { width: 375, height: 700 },
    colorScheme: "dark",
  });
  await page.getByRole("textbox", { name: "Username" }).waitFor();
  const fits = await page.evaluate(
    () => document.documentElement.scrollWidth <= document.documentElement.clientWidth,
  );
  assert.ok(fits, "no sideways scrolling at 375 px");
  const background = await page.evaluate(
    () => getComputedStyle(document.querySelector(".login-form")).backgroundColor,
  );
  assert.equal(background, "rgb(30, 33, 39)", "the dark palette");
  await page.screenshot({ path: `${ARTIFACTS}/login-phone-dark.png` });

  await signInByKeyboard(page, "ann", PASSWORD);
  await page.waitForURL((url) => url.pathname === "/");
  await page.getByRole("textbox", { name: "Message" }).waitFor();
  await openAccountMenu(page);
  await page.getByRole("button", { name: "Sign out" }).waitFor();
  const chatFits = await page.evaluate(
    () => document.documentElement.scrollWidth <= document.documentElement.clientWidth,
  );
  assert.ok(chatFits, "the chat page with the account controls fits at 375 px");
  await page.screenshot({ path: `${ARTIFACTS}/chat-phone-signed-in.png` });
  await page.getByRole("button", { name: "Sign out" }).click();
  await page.waitForURL((url) => url.pathname === "/login");
  await page.goto(suite.bor.url);
  assert.equal(new URL(page.url()).pathname, "/login", "signed out: the chat page sends to sign in");
  assert.deepEqual(problems, []);
});

test("an admin adds a person on the admin page, who signs in with the password shown once", async (t) => {
  const { page, problems } = await open(t, "/login?next=%2Fadmin%2Fpeople");
  await signInByKeyboard(page, "root", PASSWORD);
  await page.getByRole("heading", { name: "People" }).waitFor();
  await page.getByRole("textbox", { name: "Username" }).fill("cleo");
  await page.getByRole("button", { name: "Add person" }).click();
  const secret = page.locator("#person-secret code");
  await secret.waitFor();
  const password = (await secret.textContent()).trim();
  assert.match(password, /^[0-9a-f]{24}$/);
  await page.getByRole("button", { name: "Disable: ann" }).waitFor();
  await page.screenshot({ path: `${ARTIFACTS}/admin-people.png`, fullPage: true });

  const other = await open(t, "/login");
  await signInByKeyboard(other.page, "cleo", password);
  await other.page.waitForURL((url) => url.pathname === "/");
  await other.page.getByRole("button", { name: "Sign out" }).waitFor();
  assert.deepEqual(problems, []);
});

const LOOKS = [
  { name: "desktop-light", viewport: { width: 1280, height: 800 }, colorScheme: "light" },
  { name: "phone-dark", viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true, colorScheme: "dark" },
];

for (const look of LOOKS) {
  test(`${look.name}: an admin finds the admin page from the chat, a member is not offered it`, async (t) => {
    const { name, ...contextOptions } = look;
    const admin = await open(t, "/login?next=%2F", contextOptions);
    await signInByKeyboard(admin.page, "root", PASSWORD);
    await admin.page.waitForURL((url) => url.pathname === "/");
    await openAccountMenu(admin.page);
    const link = admin.page.getByRole("link", { name: "Admin page" });
    await link.waitFor();
    await admin.page.screenshot({ path: join(ARTIFACTS, `login-admin-link-${name}.png`) });
    await link.click();
    await admin.page.waitForURL((url) => url.pathname === "/admin");
    await admin.page.getByRole("heading", { name: "Service health" }).waitFor();
    assert.deepEqual(admin.problems, []);

    const member = await open(t, "/login?next=%2F", contextOptions);
    await signInByKeyboard(member.page, "ann", PASSWORD);
    await member.page.waitForURL((url) => url.pathname === "/");
    await openAccountMenu(member.page);
    await member.page.getByRole("button", { name: "Sign out" }).waitFor();
    assert.equal(await member.page.getByRole("link", { name: "Admin page" }).count(), 0);
    assert.deepEqual(member.problems, []);
  });
}

test("a session that ends while the chat is open sends the person to sign in, and back", async (t) => {
  const { page, problems } = await open(t, "/login?next=%2F");
  await signInByKeyboard(page, "ann", PASSWORD);
  await page.waitForURL((url) => url.pathname === "/");
  await page.getByRole("button", { name: "Sign out" }).waitFor();
  await page.context().clearCookies();
  await page.getByRole("textbox", { name: "Message" }).fill("Is anyone there?");
  await page.getByRole("button", { name: "Send" }).click();
  await page.waitForURL((url) => url.pathname === "/login");
  assert.equal(new URL(page.url()).searchParams.get("next"), "/");
  await signInByKeyboard(page, "ann", PASSWORD);
  await page.waitForURL((url) => url.pathname === "/");
  await page.getByRole("button", { name: "Sign out" }).waitFor();
  const refused = /^console error: Failed to load resource: the server responded with a status of 401/;
  assert.deepEqual(problems.filter((problem) => !refused.test(problem)), []);
});

for (const look of LOOKS) {
  test(`${look.name}: a member opening the admin page is told it is for admins, not asked for a token`, async (t) => {
    const { name, ...contextOptions } = look;
    const { page, problems } = await open(t, "/login?next=%2Fadmin", contextOptions);
    await signInByKeyboard(page, "ann", PASSWORD);
    await page.waitForURL((url) => url.pathname === "/admin");
    await page.getByRole("heading", { name: "Not an admin" }).waitFor();
    assert.match(
      await page.locator("#not-admin").innerText(),
      /You are signed in as ann, who is not an admin/,
    );
    assert.equal(await page.getByLabel("Admin token").isVisible(), false, "no token is asked for");
    const back = page.locator("#not-admin").getByRole("link", { name: "Back to the chat" });
    assert.equal(await back.getAttribute("href"), "/");
    await page.screenshot({ path: join(ARTIFACTS, `login-not-admin-${name}.png`) });
    assert.deepEqual(problems, []);
  });
}
