// The OAuth consent page an MCP client opens: a person not signed in signs in and comes
// back to it; it names the client and the collections it may read; Allow and Deny work
// from the keyboard alone and send the browser back to the client; it fits a phone in
// dark mode.

import assert from "node:assert/strict";
import { createHash, randomBytes } from "node:crypto";
import { createServer } from "node:http";
import { after, before, test } from "node:test";

import { recordProblems } from "./chat-page.mjs";
import { ARTIFACTS, runBor, startSuite } from "./harness.mjs";

const PASSWORD = "correct horse battery staple";
let suite;
let clientId;
/** The client's own listener, where the browser is sent back: every address it got. */
let callback;
let REDIRECT_URI;
const returned = [];
/** The PKCE verifier of each authorization request, by its `state`. */
const verifiers = new Map();

before(async () => {
  callback = createServer((request, response) => {
    const url = new URL(request.url, REDIRECT_URI);
    if (url.pathname === "/callback") returned.push(url);
    response.end("the client got it");
  });
  await new Promise((resolve) => callback.listen(0, "127.0.0.1", resolve));
  REDIRECT_URI = `http://127.0.0.1:${callback.address().port}/callback`;
  suite = await startSuite({ borEnv: { BOR_AUTH: "accounts" } });
  runBor(suite.database, ["user", "add", "ann", "--password-stdin"], `${PASSWORD}\n`);
  const registered = await fetch(new URL("/oauth/register", suite.bor.url), {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({
      client_name: "Editor Agent",
      redirect_uris: [REDIRECT_URI],
      token_endpoint_auth_method: "none",
    }),
  });
  assert.equal(registered.status, 201);
  clientId = (await registered.json()).client_id;
});

after(async () => {
  await suite?.stop();
  callback?.close();
});

/** The authorization request an MCP client sends the browser to. */
function authorizationPath(state) {
  const verifier = randomBytes(32).toString("base64url");
  verifiers.set(state, verifier);
  const challenge = createHash("sha256").update(verifier).digest("base64url");
  const query = new URLSearchParams({
    response_type: "code",
    client_id: clientId,
    redirect_uri: REDIRECT_URI,
    state,
    code_challenge: challenge,
    code_challenge_method: "S256",
    resource: new URL("/mcp", suite.bor.url).toString(),
  });
  return `/oauth/authorize?${query}`;
}

/** A fresh context (no cookie) with `path` opened. */
async function open(t, path, contextOptions = {}) {
  const context = await suite.browser.newContext(contextOptions);
  context.setDefaultTimeout(15_000);
  t.after(() => context.close());
  returned.length = 0;
  const page = await context.newPage();
  const problems = [];
  recordProblems(page, problems);
  await page.goto(new URL(path, suite.bor.url).toString());
  return { page, problems };
}

async function signInByKeyboard(page) {
  await page.getByRole("textbox", { name: "Username" }).waitFor();
  await page.keyboard.type("ann");
  await page.keyboard.press("Tab");
  await page.keyboard.type(PASSWORD);
  await page.keyboard.press("Enter");
}

/** Tabs to the button `id` (at most ten steps) and presses Enter. */
async function pressByKeyboard(page, id) {
  for (let step = 0; step < 10; step += 1) {
    await page.keyboard.press("Tab");
    if ((await page.evaluate(() => document.activeElement?.id)) === id) {
      await page.keyboard.press("Enter");
      return;
    }
  }
  assert.fail(`no focus reached #${id}`);
}

test("a person signs in, reads what the client may read, and allows it by keyboard", async (t) => {
  const { page, problems } = await open(t, authorizationPath("state-1"));
  assert.equal(new URL(page.url()).pathname, "/login");
  await signInByKeyboard(page);
  await page.waitForURL((url) => url.pathname === "/oauth/authorize");
  const heading = page.getByRole("heading", { level: 2 });
  assert.equal((await heading.textContent()).trim(), "Allow Editor Agent to read as you?");
  const form = page.getByRole("form", { name: "Allow Editor Agent to read as you?" });
  await form.waitFor();
  const collections = page.getByRole("list", { name: /It may read what you may read/ });
  assert.deepEqual(await collections.getByRole("listitem").allTextContents(), ["default"]);
  assert.equal(await page.locator("#redirect-host").textContent(), "127.0.0.1");
  await page.screenshot({ path: `${ARTIFACTS}/consent-desktop.png`, fullPage: true });

  await pressByKeyboard(page, "allow");
  await page.waitForURL((url) => url.href.startsWith(REDIRECT_URI));
  assert.equal(returned.length, 1);
  assert.equal(returned[0].searchParams.get("state"), "state-1");
  assert.match(returned[0].searchParams.get("code"), /^[0-9a-f]{64}$/);

  // The client exchanges the code; the person sees the app on their account page and
  // revokes it there, which ends its token.
  const exchanged = await fetch(new URL("/oauth/token", suite.bor.url), {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams({
      grant_type: "authorization_code",
      code: returned[0].searchParams.get("code"),
      redirect_uri: REDIRECT_URI,
      client_id: clientId,
      code_verifier: verifiers.get("state-1"),
      resource: new URL("/mcp", suite.bor.url).toString(),
    }),
  });
  assert.equal(exchanged.status, 200);
  const { access_token: token } = await exchanged.json();
  const listTools = () =>
    fetch(new URL("/mcp", suite.bor.url), {
      method: "POST",
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json", accept: "application/json, text/event-stream" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }),
    });
  assert.equal((await listTools()).status, 200);
  await page.goto(new URL("/account", suite.bor.url).toString());
  const app = page.getByRole("listitem").filter({ hasText: "Editor Agent" });
  await app.getByText("an app you allowed to read as you").waitFor();
  await app.getByRole("button", { name: "Revoke Editor Agent" }).click();
  assert.match(await app.innerText(), /The app loses access at once/);
  await page.getByRole("button", { name: "Revoke Editor Agent", exact: true }).last().click();
  await page.getByText("Revoked Editor Agent.").waitFor();
  assert.equal((await listTools()).status, 401);
  assert.deepEqual(problems, []);
});

test("at phone width in dark mode the page fits, and Deny sends the refusal back", async (t) => {
  const { page, problems } = await open(t, authorizationPath("state-2"), {
    viewport: { width: 375, height: 700 },
    colorScheme: "dark",
  });
  await signInByKeyboard(page);
  await page.getByRole("button", { name: "Deny" }).waitFor();
  const fits = await page.evaluate(
    () => document.documentElement.scrollWidth <= document.documentElement.clientWidth,
  );
  assert.ok(fits, "no sideways scrolling at 375 px");
  const background = await page.evaluate(
    () => getComputedStyle(document.querySelector(".login-form")).backgroundColor,
  );
  assert.equal(background, "rgb(30, 33, 39)", "the dark palette");
  await page.screenshot({ path: `${ARTIFACTS}/consent-phone-dark.png`, fullPage: true });

  await pressByKeyboard(page, "deny");
  await page.waitForURL((url) => url.href.startsWith(REDIRECT_URI));
  assert.equal(returned[0].searchParams.get("error"), "access_denied");
  assert.equal(returned[0].searchParams.get("state"), "state-2");
  assert.equal(returned[0].searchParams.get("code"), null);
  assert.deepEqual(problems, []);
});

test("an unknown client gets a page that says so, and no redirect", async (t) => {
  const path = authorizationPath("state-3").replace(clientId, "no-such-client");
  const { page } = await open(t, path);
  await signInByKeyboard(page);
  const alert = page.getByRole("alert");
  await alert.waitFor();
  assert.equal((await alert.textContent()).trim(), "No such client is registered with bor.");
  await page.screenshot({ path: `${ARTIFACTS}/consent-refused.png` });
  assert.equal(returned.length, 0);
});
