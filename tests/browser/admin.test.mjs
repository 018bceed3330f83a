// The admin page (`GET /admin`) against bor, the mock LLM and PostgreSQL: the token
// (401, 403, kept and forgotten), the health sections (ok, degraded, auto-refresh),
// uploading, finding and deleting documents, hostile titles, phone width and dark mode.

import assert from "node:assert/strict";
import { createServer } from "node:net";
import { join } from "node:path";
import { after, before, test } from "node:test";

import { ARTIFACTS, startBor, startSuite } from "./harness.mjs";
import { answer, ask, waitForStatus } from "./chat-page.mjs";

const TOKEN = "browser-test-admin-token";
const MESSAGE = {
  unauthorized:
    "The server did not accept this admin token (401). Check the value of BOR_ADMIN_TOKEN and enter it again.",
  adminDisabled:
    "The admin API is disabled on this server (403). Set BOR_ADMIN_TOKEN in the service's environment, restart bor, then enter that token here.",
};
const SECTIONS = ["Database", "LLM server", "Knowledge base", "Turns", "Log", "Configuration"];

let suite;

before(async () => {
  suite = await startSuite({ borEnv: { BOR_ADMIN_TOKEN: TOKEN } });
});

after(async () => {
  await suite?.stop();
});

/**
 * A fresh browser context with the admin page of `borUrl` open; closed when test `t`
 * ends, after checking the page logged no errors but those `expected` (regular
 * expressions) allows. `prepare(context)` runs first.
 */
async function openAdmin(t, { borUrl = suite.bor.url, contextOptions = {}, prepare, expected = [] } = {}) {
  const context = await suite.browser.newContext(contextOptions);
  context.setDefaultTimeout(15_000);
  await prepare?.(context);
  const page = await context.newPage();
  const problems = [];
  page.on("pageerror", (error) => problems.push(`page error: ${error.message}`));
  page.on("console", (message) => {
    if (message.type() === "error") problems.push(`console error: ${message.text()}`);
  });
  t.after(async () => {
    await context.close();
    const unexpected = problems.filter((problem) => !expected.some((re) => re.test(problem)));
    assert.deepEqual(unexpected, [], "the admin page logged no errors");
  });
  await page.goto(new URL("admin", borUrl).toString());
  await page.getByLabel("Admin token").waitFor();
  return page;
}

/** Enters `token` with the keyboard (the field has focus when the page opens). */
async function enterToken(page, token) {
  const field = page.getByLabel("Admin token");
  assert.ok(await field.evaluate((input) => input === document.activeElement), "the token field has focus");
  await page.keyboard.type(token);
  await page.keyboard.press("Enter");
}

/** Signs in and waits for the first health report. */
async function signIn(page) {
  await enterToken(page, TOKEN);
  await page.getByRole("heading", { name: "Service health" }).waitFor();
  await page.waitForFunction(() => document.getElementById("overall")?.dataset.status !== "unknown");
}

async function overallStatus(page) {
  return page.evaluate(() => ({
    status: document.getElementById("overall").dataset.status,
    label: document.getElementById("overall-label").textContent,
  }));
}

/** The rows of a health section, `{term: value}`. */
async function sectionRows(page, name) {
  return page.getByRole("region", { name }).evaluate((section) =>
    Object.fromEntries(
      [...section.querySelectorAll(".pair")].map((pair) => [
        pair.querySelector("dt").textContent,
        pair.querySelector("dd").textContent,
      ]),
    ),
  );
}

async function apiDocuments() {
  const response = await fetch(new URL("api/documents", suite.bor.url));
  assert.equal(response.status, 200);
  return response.json();
}

/** Chooses `file` ({name, mimeType, text}) in the upload field and presses Upload with
 *  the keyboard; resolves with the server's answer (status and JSON body). */
async function upload(page, { name, mimeType = "text/markdown", text }) {
  await page.getByLabel("Markdown or text file").setInputFiles({ name, mimeType, buffer: Buffer.from(text) });
  const response = page.waitForResponse(
    (r) => r.url().endsWith("/api/admin/documents") && r.request().method() === "POST",
  );
  await page.getByRole("button", { name: "Upload" }).focus();
  await page.keyboard.press("Enter");
  const answered = await response;
  return { status: answered.status(), body: await answered.json() };
}

async function documentsStatus(page, expected) {
  await page.waitForFunction(
    (text) => document.getElementById("documents-status")?.textContent === text,
    expected,
  );
}

/** The item of the documents list whose heading is `title`. */
function documentItem(page, title) {
  return page
    .getByRole("list", { name: "Stored documents" })
    .getByRole("listitem")
    .filter({ has: page.getByRole("heading", { name: title, exact: true }) });
}

/** The whole page, scrolled or not. */
async function screenshot(page, name) {
  await page.screenshot({ path: join(ARTIFACTS, `${name}.png`), fullPage: true });
}

/** A local TCP port nothing listens on. */
async function unusedPort() {
  const server = createServer();
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address();
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** Chromium logs every 4xx answer to a request as a console error. */
const refusedRequest = (status) =>
  new RegExp(`^console error: Failed to load resource: the server responded with a status of ${status}`);

test("a wrong token is refused with the 401 message and not kept", async (t) => {
  const page = await openAdmin(t, { expected: [refusedRequest(401)] });
  await page.getByRole("button", { name: "Use token" }).click();
  assert.equal(await page.getByRole("alert").innerText(), "Enter the admin token first.");

  await enterToken(page, "not-the-token");
  await page.getByRole("alert").filter({ hasText: "401" }).waitFor();
  assert.equal(await page.getByRole("alert").innerText(), MESSAGE.unauthorized);
  assert.equal(await page.getByLabel("Admin token").getAttribute("aria-invalid"), "true");
  assert.equal(await page.evaluate(() => sessionStorage.length), 0, "nothing kept");
  assert.equal(await page.getByRole("heading", { name: "Service health" }).count(), 0);
  await screenshot(page, "admin-01-wrong-token");
});

test("a server without BOR_ADMIN_TOKEN gets the 403 message", async (t) => {
  const disabled = await startBor({ mock: suite.mock, database: suite.database });
  t.after(() => disabled.stop());
  const page = await openAdmin(t, { borUrl: disabled.url, expected: [refusedRequest(403)] });
  await enterToken(page, TOKEN);
  await page.getByRole("alert").filter({ hasText: "403" }).waitFor();
  assert.equal(await page.getByRole("alert").innerText(), MESSAGE.adminDisabled);
  assert.equal(await page.evaluate(() => sessionStorage.length), 0);
  await screenshot(page, "admin-02-admin-disabled");
});

test("the right token shows every health section, ok, and is kept until forgotten", async (t) => {
  const page = await openAdmin(t);
  await signIn(page);
  assert.deepEqual(await overallStatus(page), { status: "ok", label: "OK" });
  assert.equal(
    await page.evaluate(() => document.activeElement.textContent),
    "Service health",
    "focus moved to the health heading",
  );
  for (const name of SECTIONS) {
    assert.ok(await page.getByRole("heading", { name, level: 3, exact: true }).isVisible(), name);
  }
  assert.equal(await page.getByRole("list", { name: "Problems" }).count(), 0);
  assert.ok(await page.getByText("None.", { exact: true }).isVisible());
  assert.equal(await page.getByRole("status").filter({ hasText: "Status: OK." }).count(), 1);

  const database = await sectionRows(page, "Database");
  assert.equal(database.Reachable, "yes");
  assert.match(database.Migrations, /^\d+ applied, none pending$/);
  assert.equal(database.Address, new URL(suite.database.url).toString());
  const llm = await sectionRows(page, "LLM server");
  assert.equal(llm.Reachable, "yes");
  assert.equal(llm["Chat model"], "smollm2 (listed)");
  assert.equal(llm["Embedding model"], "smollm2 (listed)");
  assert.equal(llm.Address, suite.mock.baseUrl);
  const knowledge = await sectionRows(page, "Knowledge base");
  assert.equal(knowledge.Documents, String((await apiDocuments()).length));
  const turns = await sectionRows(page, "Turns");
  assert.match(turns["In flight"], /^0 of \d+$/);
  assert.equal(turns["Accepting new turns"], "yes");
  assert.equal((await sectionRows(page, "Log"))["Failed writes"], "0");

  await page.getByText("Settings in effect (secrets left out)").click();
  const config = await sectionRows(page, "Configuration");
  assert.equal(config.BOR_LLM_API_KEY, "(unset)");
  assert.equal(config.BOR_LLM_BASE_URL, suite.mock.baseUrl);
  assert.equal(config.BOR_ADMIN_TOKEN, undefined);
  assert.ok(!(await page.content()).includes(TOKEN), "the token is nowhere in the page");
  await screenshot(page, "admin-03-health-ok");

  // Kept for this tab: a reload goes straight to the report.
  assert.equal(await page.evaluate(() => sessionStorage.getItem("bor.adminToken")), TOKEN);
  await page.reload();
  await page.getByRole("heading", { name: "Service health" }).waitFor();
  await page.waitForFunction(() => document.getElementById("overall")?.dataset.status === "ok");

  await page.getByRole("button", { name: "Forget token" }).click();
  assert.ok(await page.getByLabel("Admin token").isVisible());
  assert.equal(await page.getByRole("heading", { name: "Service health" }).count(), 0);
  assert.equal(await page.evaluate(() => sessionStorage.length), 0);
  await page.reload();
  await page.getByLabel("Admin token").waitFor();
  assert.equal(await page.getByRole("heading", { name: "Service health" }).count(), 0);
});

test("with the LLM server down the page answers and shows degraded", async (t) => {
  const port = await unusedPort();
  const cut = await startBor({
    mock: suite.mock,
    database: suite.database,
    env: { BOR_ADMIN_TOKEN: TOKEN, BOR_LLM_BASE_URL: `http://127.0.0.1:${port}/v1` },
  });
  t.after(() => cut.stop());
  const page = await openAdmin(t, { borUrl: cut.url });
  const started = Date.now();
  await signIn(page);
  t.diagnostic(`health shown ${Date.now() - started} ms after the token was entered`);
  assert.deepEqual(await overallStatus(page), { status: "degraded", label: "Degraded" });
  const problems = await page.getByRole("list", { name: "Problems" }).getByRole("listitem").allInnerTexts();
  assert.ok(problems.includes("the LLM server is unreachable"), problems.join(" | "));
  const llm = await sectionRows(page, "LLM server");
  assert.equal(llm.Reachable, "no");
  assert.equal(llm["Chat model"], "smollm2 (not checked)");
  assert.match(llm.Error, /connect/i);
  assert.equal((await sectionRows(page, "Database")).Reachable, "yes");
  await screenshot(page, "admin-04-health-degraded");
});

test("health refreshes itself every 10 s without disturbing the reader, until switched off", async (t) => {
  const page = await openAdmin(t, { prepare: (context) => context.clock.install() });
  let checks = 0;
  page.on("request", (request) => {
    if (request.url().endsWith("/api/admin/health")) checks += 1;
  });
  const checked = async (expected) => {
    await page.waitForFunction(() => !document.getElementById("overall").hasAttribute("aria-busy"));
    assert.equal(checks, expected);
  };
  await signIn(page);
  await checked(1);

  // The reader opened the configuration and keeps focus on it across a refresh.
  const summary = page.getByText("Settings in effect (secrets left out)");
  await summary.click();
  const next = page.waitForRequest((r) => r.url().endsWith("/api/admin/health"));
  await page.clock.fastForward(10_000);
  await next;
  await checked(2);
  assert.ok(await page.locator("#config-details").evaluate((details) => details.open));
  assert.ok(await summary.evaluate((element) => element === document.activeElement), "focus stayed");
  // An automatic check that finds the same status announces nothing new.
  assert.equal(await page.locator("#health-status").textContent(), "Status: OK.");

  // A hidden tab waits, and checks as soon as it shows again.
  const setHidden = (hidden) =>
    page.evaluate((value) => {
      Object.defineProperty(document, "hidden", { value, configurable: true });
      document.dispatchEvent(new Event("visibilitychange"));
    }, hidden);
  await setHidden(true);
  await page.clock.fastForward(25_000);
  assert.equal(checks, 2, "no check while hidden");
  await setHidden(false);
  await checked(3);

  await page.getByLabel("Refresh every 10 s").uncheck();
  await page.clock.fastForward(30_000);
  await page.getByRole("button", { name: "Refresh" }).click();
  await page.getByRole("status").filter({ hasText: /^Checked at .*: OK\.$/ }).waitFor();
  await page.clock.fastForward(30_000);
  assert.equal(checks, 4, "only the Refresh button checked again");
});

test("an uploaded Markdown file is listed, found by a question, not stored twice, and deleted", async (t) => {
  const title = "Kestrel hunting notes";
  const file = {
    name: "kestrels.md",
    text: [
      `# ${title}`,
      "",
      "Kestrels hover over meadows and watch the grass for voles.",
      "",
      "## Seasons",
      "",
      "In winter kestrels hunt along roadsides, where voles run in the verges.",
    ].join("\n"),
  };
  const page = await openAdmin(t);
  await signIn(page);

  const stored = await upload(page, file);
  assert.equal(stored.status, 201);
  const { chunks } = stored.body;
  assert.ok(chunks >= 1);
  const chunkCount = chunks === 1 ? "1 chunk" : `${chunks} chunks`;
  await documentsStatus(page, `Stored ${chunkCount} of “${title}”.`);
  assert.equal(await page.evaluate(() => document.activeElement.textContent), "Upload", "focus stayed");
  const meta = await documentItem(page, title).locator(".document-meta").innerText();
  assert.match(meta, new RegExp(`^${chunkCount} · added \\w`));
  const listed = (await apiDocuments()).filter((doc) => doc.title === title);
  assert.deepEqual(
    listed.map((doc) => [doc.id, doc.chunks]),
    [[stored.body.id, chunks]],
  );
  await page.waitForFunction(
    (count) =>
      [...document.querySelectorAll("#health-knowledge .pair")].some(
        (pair) => pair.textContent === `Documents${count}`,
      ),
    String((await apiDocuments()).length),
  );
  await screenshot(page, "admin-05-uploaded");

  // A question on the chat page finds the document.
  const chat = await page.context().newPage();
  await chat.goto(suite.bor.url);
  await ask(chat, "How do kestrels hunt voles in the meadows?");
  await waitForStatus(chat, "Answer ready.");
  const sources = await answer(chat)
    .getByRole("list", { name: "Sources" })
    .locator(".source-title")
    .allInnerTexts();
  assert.deepEqual(sources, [title]);
  await chat.close();

  const again = await upload(page, file);
  assert.deepEqual([again.status, again.body.id], [200, stored.body.id]);
  await documentsStatus(page, `Already stored: the same content is there as “${title}”.`);
  assert.equal(await documentItem(page, title).count(), 1);

  // Delete, keyboard only: Escape cancels the confirmation, then confirm.
  const remove = page.getByRole("button", { name: `Delete ${title}` });
  await remove.focus();
  await page.keyboard.press("Enter");
  const question = page.getByRole("group", {
    name: `Delete “${title}” and its ${chunkCount}? Questions will no longer find it.`,
  });
  await question.waitFor();
  assert.equal(await remove.getAttribute("aria-expanded"), "true");
  assert.equal(await page.evaluate(() => document.activeElement.textContent), "Cancel");
  await screenshot(page, "admin-06-confirm-delete");
  await page.keyboard.press("Escape");
  assert.equal(await question.count(), 0);
  assert.ok(await remove.evaluate((button) => button === document.activeElement), "focus back on Delete");
  const kept = (await apiDocuments()).filter((doc) => doc.title === title);
  assert.equal(kept.length, 1, "Escape deleted nothing");

  await page.keyboard.press("Enter");
  await question.waitFor();
  await page.keyboard.press("Shift+Tab");
  assert.equal(await page.evaluate(() => document.activeElement.textContent), "Yes, delete");
  await page.keyboard.press("Enter");
  await documentsStatus(page, `Deleted “${title}”.`);
  assert.equal(await documentItem(page, title).count(), 0);
  assert.deepEqual((await apiDocuments()).filter((doc) => doc.title === title), []);
});

test("files that are not text are refused before any upload, too large ones by the server", async (t) => {
  const page = await openAdmin(t, { expected: [refusedRequest(413)] });
  await signIn(page);
  let uploads = 0;
  page.on("request", (request) => {
    if (request.url().endsWith("/api/admin/documents")) uploads += 1;
  });
  const field = page.getByLabel("Markdown or text file");

  const png = Buffer.from([0x89, 0x50, 0x4e, 0x47]);
  await field.setInputFiles({ name: "photo.png", mimeType: "image/png", buffer: png });
  const refusal = "Not uploaded. “photo.png” is not a Markdown or text file. Choose a .md or .txt file.";
  await documentsStatus(page, refusal);
  await page.getByRole("button", { name: "Upload" }).click();
  await documentsStatus(page, refusal);
  await screenshot(page, "admin-07-not-text");

  const binary = Buffer.from("text\u0000\u0001binary");
  await field.setInputFiles({ name: "disguised.txt", mimeType: "text/plain", buffer: binary });
  await page.getByRole("button", { name: "Upload" }).click();
  await documentsStatus(page, "Not uploaded. “disguised.txt” holds binary data, not text.");

  await field.setInputFiles({ name: "blank.md", mimeType: "text/markdown", buffer: Buffer.from(" \n\n") });
  await page.getByRole("button", { name: "Upload" }).click();
  await documentsStatus(page, "Not uploaded. “blank.md” is empty.");
  assert.equal(uploads, 0);

  // Under 4 MiB as a file, over it as JSON (every quote is escaped): the server says 413.
  const quotes = { name: "quotes.txt", mimeType: "text/plain", text: '"'.repeat(2.5 * 1024 * 1024) };
  const refused = await upload(page, quotes);
  assert.equal(refused.status, 413);
  await documentsStatus(
    page,
    "Not uploaded. The file is too large for the server (413): a document may be at most 4 MiB.",
  );
});

test("a title with markup is shown as text", async (t) => {
  const title = "<img src=x onerror=window.pwned=1> Field <b>notes</b>";
  const page = await openAdmin(t);
  await signIn(page);
  const stored = await upload(page, { name: "hostile.md", text: `# ${title}\n\nOwls nest in barns.` });
  assert.equal(stored.status, 201);
  t.after(() => suite.database.query(`DELETE FROM documents WHERE id = ${Number(stored.body.id)}`));
  const item = documentItem(page, title);
  await item.waitFor();
  assert.equal(await item.getByRole("heading").innerText(), title);
  assert.match(await page.locator("#documents-status").innerText(), /<img src=x onerror=window.pwned=1>/);
  await page.getByRole("button", { name: `Delete ${title}` }).click();
  assert.equal(await page.locator("main img, main b, [onerror]").count(), 0);
  assert.equal(await page.evaluate(() => window.pwned), undefined);
  await screenshot(page, "admin-08-markup-title");
});

const LOOKS = [
  { name: "desktop-dark", viewport: { width: 1280, height: 900 }, colorScheme: "dark" },
  { name: "phone-light", viewport: { width: 360, height: 740 }, colorScheme: "light" },
  { name: "phone-dark", viewport: { width: 360, height: 740 }, colorScheme: "dark" },
];

test("the page fits phone width and follows dark mode", async (t) => {
  const stored = await fetch(new URL("api/admin/documents", suite.bor.url), {
    method: "POST",
    headers: { Authorization: `Bearer ${TOKEN}`, "Content-Type": "application/json" },
    body: JSON.stringify({
      title: "A rather long document title that has to wrap on a narrow phone screen",
      content: "Badgers dig setts with many entrances.",
    }),
  });
  assert.equal(stored.status, 201);
  const { id } = await stored.json();
  t.after(() => suite.database.query(`DELETE FROM documents WHERE id = ${Number(id)}`));

  for (const look of LOOKS) {
    const { viewport, colorScheme } = look;
    const page = await openAdmin(t, { contextOptions: { viewport, colorScheme } });
    await signIn(page);
    await page.getByRole("button", { name: /^Delete A rather long/ }).click();
    const layout = await page.evaluate(() => ({
      overflow: document.documentElement.scrollWidth - document.documentElement.clientWidth,
      background: getComputedStyle(document.body).backgroundColor,
    }));
    assert.equal(layout.overflow, 0, `${look.name}: no horizontal overflow`);
    const lightness = luminance(layout.background);
    if (look.colorScheme === "dark") assert.ok(lightness < 0.2, `${look.name}: dark background`);
    else assert.ok(lightness > 0.8, `${look.name}: light background`);
    await screenshot(page, `admin-09-${look.name}`);
  }
});

/** Relative luminance (0 black … 1 white) of a CSS `rgb(…)` colour. */
function luminance(rgb) {
  const [r, g, b] = rgb.match(/\d+(\.\d+)?/g).slice(0, 3).map(Number);
  return (0.2126 * r + 0.7152 * g + 0.0722 * b) / 255;
}

test("the address `make run` prints, with #token=…, signs in and leaves no token in the address", async (t) => {
  const context = await suite.browser.newContext();
  t.after(() => context.close());
  const page = await context.newPage();
  await page.goto(new URL(`admin#token=${TOKEN}`, suite.bor.url).toString());
  await page.getByRole("heading", { name: "Service health" }).waitFor();
  await page.waitForFunction(() => document.getElementById("overall")?.dataset.status !== "unknown");
  assert.equal(new URL(page.url()).hash, "", "the token left the address bar (the entry is replaced)");
  assert.equal(await page.getByRole("region", { name: "Embeddings server" }).count(), 0, "one LLM server here");
  // Kept for the tab like a typed token.
  await page.reload();
  await page.getByRole("heading", { name: "Service health" }).waitFor();
});
