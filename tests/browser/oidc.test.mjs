// Signing in with an OpenID Connect provider: the login page offers "Sign in with …",
// the link goes through the real provider's own login form (oidc-provider's
// devInteractions, tests/oidc/provider.mjs) and the browser lands signed in on the
// chat page at `next`.

import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { createInterface } from "node:readline";
import { after, before, test } from "node:test";

import { recordProblems } from "./chat-page.mjs";
import { ARTIFACTS, startSuite } from "./harness.mjs";

const PROVIDER_SCRIPT = new URL("../oidc/provider.mjs", import.meta.url).pathname;

let provider;
let suite;

/** The real provider on a free port: the process and its issuer URL. */
async function startProvider() {
  const child = spawn(process.execPath, [PROVIDER_SCRIPT], {
    env: { ...process.env, BOR_TEST_OIDC_GROUPS: JSON.stringify({ ada: ["staff"] }) },
    stdio: ["ignore", "pipe", "ignore"],
  });
  const lines = createInterface({ input: child.stdout });
  const [first] = await Promise.race([
    new Promise((resolve) => lines.once("line", (line) => resolve([line]))),
    new Promise((_, reject) => child.once("exit", (code) => reject(new Error(`the provider exited (${code})`)))),
  ]);
  lines.on("line", () => {});
  return { child, issuer: JSON.parse(first).issuer };
}

before(async () => {
  provider = await startProvider();
  suite = await startSuite({
    borEnv: {
      BOR_AUTH: "accounts",
      BOR_OIDC_ISSUER: provider.issuer,
      BOR_OIDC_CLIENT_ID: "bor",
      BOR_OIDC_CLIENT_SECRET: "bor-test-secret",
      BOR_OIDC_SCOPES: "openid profile email groups",
    },
  });
});

after(async () => {
  await suite?.stop();
  provider?.child.kill();
});

test("Sign in with the provider goes through its login form and lands on the chat page at next", async (t) => {
  const context = await suite.browser.newContext();
  context.setDefaultTimeout(15_000);
  t.after(() => context.close());
  const page = await context.newPage();
  const problems = [];
  recordProblems(page, problems);

  await page.goto(new URL("/?from=sso", suite.bor.url).toString());
  await page.waitForURL((url) => url.pathname === "/login");
  const link = page.getByRole("link", { name: "Sign in with 127.0.0.1" });
  await link.waitFor();
  await page.getByRole("textbox", { name: "Username" }).waitFor();
  assert.deepEqual(problems, [], "the login page");
  await link.click();

  await page.waitForURL((url) => url.origin === provider.issuer);
  await page.locator('input[name="login"]').fill("ada");
  await page.locator('input[name="password"]').fill("any password");
  await page.getByRole("button", { name: "Sign-in" }).click();
  // The provider asks for consent only when it has no grant yet.
  const consent = page.getByRole("button", { name: "Continue" });
  await page.waitForURL((url) => url.origin !== provider.issuer || url.pathname.startsWith("/interaction/"));
  if (new URL(page.url()).origin === provider.issuer && (await consent.count()) > 0) await consent.click();

  await page.waitForURL((url) => url.origin === new URL(suite.bor.url).origin && url.pathname === "/");
  // The provider's own pages load things from the internet; only bor's pages count.
  problems.length = 0;
  assert.equal(new URL(page.url()).search, "?from=sso");
  await page.locator("#message, textarea").first().waitFor();
  const me = await page.evaluate(async () => (await fetch("/api/auth/me")).json());
  assert.equal(me.user.username, "ada");
  assert.equal(me.session, true);
  await page.screenshot({ path: `${ARTIFACTS}/oidc-signed-in.png` });
  assert.deepEqual(problems, [], "the chat page");
});
