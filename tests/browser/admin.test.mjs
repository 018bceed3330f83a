// The admin page (`GET /admin`) against bor, the mock LLM and PostgreSQL: the token
// (401, 403, kept and forgotten), the health sections (ok, degraded, auto-refresh),
// uploading files of every kind (picked, dropped, with the keyboard, several at once,
// refused ones with their reason), finding and deleting documents, hostile titles and
// file names, phone width and dark mode.

import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
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
/** A bound below the default, so that a file over it is cheap to make. */
const MAX_UPLOAD_BYTES = 256 * 1024;
const FIXTURES = new URL("../../formats/tests/fixtures/", import.meta.url).pathname;
/** The titles the format readers find in the fixtures. */
const FIXTURE_TITLES = {
  "tex-report.pdf": "A Short Report on Office Workflows",
  "libreoffice.docx": "Field Guide to the Reading Room",
  "sphinx.html": "Lending files — Archive Handbook documentation",
};
const NOT_READ =
  "Not sent. Only Markdown, text, PDF, HTML, Word (.docx) and image (PNG, JPEG, TIFF, WebP) files can be uploaded.";

let suite;

before(async () => {
  suite = await startSuite({
    borEnv: { BOR_ADMIN_TOKEN: TOKEN, BOR_MAX_UPLOAD_BYTES: String(MAX_UPLOAD_BYTES) },
  });
});

after(async () => {
  await suite?.stop();
});

/**
 * A fresh browser context with the admin page of `borUrl` open; closed when test `t`
 * ends, after checking the page logged no errors but those `expected` (regular
 * expressions) allows. `prepare(context)` runs first.
 */
async function openAdmin(t, { borUrl = suite.bor.url, contextOptions = {}, prepare, expected = [], path = "admin" } = {}) {
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
  await page.goto(new URL(path, borUrl).toString());
  await page.getByLabel("Admin token").waitFor();
  return page;
}

/** Enters `token` with the keyboard (the field has focus when the page opens). */
async function enterToken(page, token) {
  const field = page.getByLabel("Admin token");
  // The page focuses it once it knows who is asking (a request of its own at start).
  await page
    .waitForFunction(() => document.activeElement?.id === "token", null, { timeout: 5000 })
    .catch(() => {});
  assert.ok(await field.evaluate((input) => input === document.activeElement), "the token field has focus");
  await page.keyboard.type(token);
  await page.keyboard.press("Enter");
}

/** Signs in and waits for the first health report (read whichever section shows). */
async function signIn(page) {
  await enterToken(page, TOKEN);
  await page.getByRole("navigation", { name: "Admin sections" }).waitFor();
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

/** A file of `formats/tests/fixtures/`, as `setInputFiles` takes it. */
function fixture(name) {
  return { name, mimeType: "application/octet-stream", buffer: readFileSync(join(FIXTURES, name)) };
}

/** A file of `text`, as `setInputFiles` takes it. */
function textFile(name, text, mimeType = "text/markdown") {
  return { name, mimeType, buffer: Buffer.from(text) };
}

/** The file picker, which the drop zone labels. */
function picker(page) {
  return page.getByLabel("Choose files or drop them here");
}

/**
 * Keeps the report of every upload `page` sends (in `reports`, in order); the documents
 * they stored are deleted when test `t` ends.
 */
function recordUploads(t, page) {
  const reports = [];
  page.on("response", (response) => {
    if (response.url().endsWith("/api/admin/documents") && response.request().method() === "POST") {
      reports.push(response.json().catch(() => null));
    }
  });
  t.after(async () => {
    for (const report of await Promise.all(reports)) {
      for (const doc of report?.documents ?? []) {
        suite.database.query(`DELETE FROM documents WHERE id = ${Number(doc.id)}`);
      }
    }
  });
  return reports;
}

/** Waits until every upload row shows its outcome; resolves with `[[file name, outcome]]`. */
async function uploadOutcomes(page) {
  await page.waitForFunction(() => {
    const rows = [...document.querySelectorAll("#uploads .upload")];
    return rows.length > 0 && rows.every((row) => row.querySelector(".upload-outcome").textContent !== "");
  });
  return page
    .getByRole("list", { name: "Uploads" })
    .getByRole("listitem")
    .evaluateAll((rows) =>
      rows.map((row) => [
        row.querySelector(".upload-name").textContent,
        row.querySelector(".upload-outcome").textContent,
      ]),
    );
}

/** Picks `files` and waits for the summary of the round; resolves with the outcomes. */
async function uploadFiles(page, files, summary) {
  await picker(page).setInputFiles(files);
  const outcomes = await uploadOutcomes(page);
  await documentsStatus(page, summary);
  return outcomes;
}

function chunkCount(n) {
  return n === 1 ? "1 chunk" : `${n} chunks`;
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

  await page.getByText("Settings in effect (secrets as set or unset)").click();
  const config = await sectionRows(page, "Configuration");
  assert.equal(config.BOR_LLM_API_KEY, "unset");
  assert.equal(config.BOR_LLM_BASE_URL, suite.mock.baseUrl);
  assert.equal(config.BOR_ADMIN_TOKEN, "set");
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
  const summary = page.getByText("Settings in effect (secrets as set or unset)");
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
  const file = textFile(
    "kestrels.md",
    [
      `# ${title}`,
      "",
      "Kestrels hover over meadows and watch the grass for voles.",
      "",
      "## Seasons",
      "",
      "In winter kestrels hunt along roadsides, where voles run in the verges.",
    ].join("\n"),
  );
  const page = await openAdmin(t, { path: "admin/documents" });
  const reports = recordUploads(t, page);
  await signIn(page);

  const first = await uploadFiles(page, [file], "1 file: 1 imported.");
  const [stored] = (await reports[0]).documents;
  assert.deepEqual([stored.file, stored.title, stored.status], ["kestrels.md", title, "imported"]);
  assert.ok(stored.chunks >= 1);
  const chunks = chunkCount(stored.chunks);
  assert.deepEqual(first, [["kestrels.md", `Imported as “${title}”: ${chunks}.`]]);
  await documentItem(page, title).waitFor();
  const meta = await documentItem(page, title).locator(".document-meta").innerText();
  assert.match(meta, new RegExp(`^${chunks} · added \\w`));
  const listed = (await apiDocuments()).filter((doc) => doc.title === title);
  assert.deepEqual(
    listed.map((doc) => [doc.id, doc.chunks, doc.summary]),
    [[stored.id, stored.chunks, null]],
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
  assert.ok(sources.length >= 1 && sources.every((source) => source === title), sources.join(" | "));
  await chat.close();

  const again = await uploadFiles(page, [file], "1 file: 1 unchanged.");
  assert.deepEqual(again, [["kestrels.md", `Unchanged: “${title}” is already stored, ${chunks}.`]]);
  assert.equal((await reports[1]).documents[0].id, stored.id);
  assert.equal(await documentItem(page, title).count(), 1);

  // Delete, keyboard only: Escape cancels the confirmation, then confirm.
  const remove = page.getByRole("button", { name: `Delete ${title}` });
  await remove.focus();
  await page.keyboard.press("Enter");
  const question = page.getByRole("group", {
    name: `Delete “${title}” and its ${chunks}? Questions will no longer find it.`,
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

test("several files of every kind go up at once, each with its outcome, and the list follows", async (t) => {
  const page = await openAdmin(t, { path: "admin/documents" });
  const reports = recordUploads(t, page);
  let sent = 0;
  page.on("request", (request) => {
    if (request.url().endsWith("/api/admin/documents")) sent += 1;
  });
  await signIn(page);
  const hint = page.locator("#upload-hint");
  await hint.filter({ hasText: "Each may be at most 256\u00a0KiB." }).waitFor();
  assert.equal(
    await picker(page).getAttribute("accept"),
    ".md,.markdown,.txt,.text,.pdf,.html,.htm,.docx,.png,.jpg,.jpeg,.tif,.tiff,.webp",
  );
  assert.equal(await picker(page).evaluate((input) => input.multiple), true);

  const files = [
    fixture("tex-report.pdf"),
    fixture("libreoffice.docx"),
    fixture("sphinx.html"),
    fixture("encrypted.pdf"),
    textFile("otters.md", "# Otter holts\n\nOtters rest in holts dug into river banks."),
    { name: "photo.gif", mimeType: "image/gif", buffer: Buffer.from("GIF89a") },
    textFile("blank.txt", "", "text/plain"),
    textFile("huge.txt", "a".repeat(MAX_UPLOAD_BYTES + 1), "text/plain"),
  ];
  await picker(page).setInputFiles(files);
  // Every file has its row at once, with its kind and size.
  const rows = page.getByRole("list", { name: "Uploads" }).getByRole("listitem");
  assert.equal(await rows.count(), files.length);
  assert.equal(await rows.first().locator(".upload-meta").innerText(), "PDF · 57.9\u00a0KiB");
  assert.equal(await rows.nth(1).locator(".upload-meta").innerText(), "Word · 7.6\u00a0KiB");

  const outcomes = await uploadOutcomes(page);
  await documentsStatus(page, "8 files: 4 imported, 1 skipped, 3 not sent.");
  assert.equal(sent, 5, "the files refused by the page were not sent");
  const stored = Object.fromEntries(
    (await Promise.all(reports)).flatMap((report) => report.documents).map((doc) => [doc.file, doc]),
  );
  const imported = (file, title = FIXTURE_TITLES[file]) =>
    `Imported as “${title}”: ${chunkCount(stored[file].chunks)}.`;
  assert.deepEqual(outcomes, [
    ["tex-report.pdf", imported("tex-report.pdf")],
    ["libreoffice.docx", imported("libreoffice.docx")],
    ["sphinx.html", imported("sphinx.html")],
    ["encrypted.pdf", "Skipped. Encrypted PDF: it cannot be read without its password."],
    ["otters.md", imported("otters.md", "Otter holts")],
    ["photo.gif", NOT_READ],
    ["blank.txt", "Not sent. The file is empty."],
    ["huge.txt", "Not sent. Larger than 256\u00a0KiB, the most the server takes (BOR_MAX_UPLOAD_BYTES)."],
  ]);
  // Each outcome is said in a polite live region of its own, in words with a symbol
  // (kept out of what is read aloud) as well as colour.
  const regions = await rows.locator(".upload-outcome").evaluateAll((results) =>
    results.map((result) => [result.getAttribute("role"), getComputedStyle(result, "::before").content]),
  );
  const storedRows = [true, true, true, false, true, false, false, false];
  assert.deepEqual(
    regions,
    storedRows.map((isStored) => ["status", isStored ? '"✓ " / ""' : '"✕ " / ""']),
  );
  assert.equal(await rows.locator("progress:visible").count(), 0, "no progress bar is left");
  assert.equal(await page.locator("#documents-status").getAttribute("aria-live"), "polite");

  for (const title of [...Object.values(FIXTURE_TITLES), "Otter holts"]) {
    await documentItem(page, title).waitFor();
  }
  await page.waitForFunction(
    (count) =>
      [...document.querySelectorAll("#health-knowledge .pair")].some(
        (pair) => pair.textContent === `Documents${count}`,
      ),
    String((await apiDocuments()).length),
  );
  await screenshot(page, "admin-07-several-files");

  // A new round replaces the rows of the last one.
  sent = 0;
  const again = await uploadFiles(page, [fixture("tex-report.pdf")], "1 file: 1 unchanged.");
  const { title, chunks } = stored["tex-report.pdf"];
  assert.deepEqual(again, [
    ["tex-report.pdf", `Unchanged: “${title}” is already stored, ${chunkCount(chunks)}.`],
  ]);
  assert.equal(sent, 1);
});

test("the drop zone opens the picker from the keyboard, takes dropped files and shows progress", async (t) => {
  const page = await openAdmin(t, { path: "admin/documents" });
  recordUploads(t, page);
  // Listening turns on Playwright's interception of file choosers, which takes effect a
  // moment later: turned on here, it is in place well before the first one opens.
  page.on("filechooser", () => {});
  await signIn(page);

  // Tab from the last control of the health panel reaches the collection chooser, then
  // the picker, and the drop zone shows the focus ring.
  await page.getByText("Settings in effect (secrets as set or unset)").focus();
  await page.keyboard.press("Tab");
  assert.equal(await page.evaluate(() => document.activeElement.id), "upload-collection");
  await page.keyboard.press("Tab");
  assert.equal(await page.evaluate(() => document.activeElement.id), "upload-files");
  const zone = page.locator("#drop-zone");
  assert.equal(await zone.evaluate((label) => getComputedStyle(label).outlineStyle), "solid");
  await screenshot(page, "admin-08-picker-focused");
  // Enter opens it, as on a button, and Space, as on any file picker.
  const enter = page.waitForEvent("filechooser");
  await page.keyboard.press("Enter");
  await (await enter).setFiles([fixture("sphinx.html")]);
  const html = FIXTURE_TITLES["sphinx.html"];
  assert.deepEqual(await uploadOutcomes(page), [
    ["sphinx.html", `Imported as “${html}”: ${await chunksOf(html)}.`],
  ]);
  await documentsStatus(page, "1 file: 1 imported.");
  assert.equal(await page.evaluate(() => document.activeElement.id), "upload-files", "focus stayed");
  const space = page.waitForEvent("filechooser");
  await page.keyboard.press("Space");
  await (await space).setFiles([textFile("swifts.md", "# Swifts\n\nSwifts sleep on the wing.")]);
  assert.deepEqual(await uploadOutcomes(page), [["swifts.md", "Imported as “Swifts”: 1 chunk."]]);
  await documentsStatus(page, "1 file: 1 imported.");

  // Dropped files: the zone says it takes them while they are dragged over it.
  const dropped = [
    { name: "report.pdf", type: "application/pdf", bytes: [...fixture("tex-report.pdf").buffer] },
    { name: "notes.odt", type: "application/vnd.oasis.opendocument.text", bytes: [1, 2, 3] },
  ];
  const dataTransfer = await page.evaluateHandle((files) => {
    const transfer = new DataTransfer();
    for (const { name, type, bytes } of files) {
      transfer.items.add(new File([new Uint8Array(bytes)], name, { type }));
    }
    return transfer;
  }, dropped);
  await zone.dispatchEvent("dragover", { dataTransfer });
  assert.equal(await zone.getAttribute("data-dragging"), "true");
  assert.equal(await zone.evaluate((label) => getComputedStyle(label).borderStyle), "solid");
  await zone.dispatchEvent("drop", { dataTransfer });
  assert.equal(await zone.getAttribute("data-dragging"), null);
  const title = FIXTURE_TITLES["tex-report.pdf"];
  assert.deepEqual(await uploadOutcomes(page), [
    ["report.pdf", `Imported as “${title}”: ${await chunksOf(title)}.`],
    ["notes.odt", NOT_READ],
  ]);
  await documentsStatus(page, "2 files: 1 imported, 1 not sent.");

  // On a slow line (64 KiB/s up) the bytes are seen going up, then the server reads
  // the file.
  const cdp = await page.context().newCDPSession(page);
  await cdp.send("Network.enable");
  const line = (uploadThroughput) =>
    cdp.send("Network.emulateNetworkConditions", {
      offline: false,
      latency: 0,
      downloadThroughput: -1,
      uploadThroughput,
    });
  await line(64 * 1024);
  const slow = textFile("slow.md", `# Slow upload\n\n${"Herons stand still in the shallows. ".repeat(5000)}`);
  await picker(page).setInputFiles([slow]);
  const row = page.getByRole("list", { name: "Uploads" }).getByRole("listitem");
  const bar = row.getByRole("progressbar", { name: "slow.md" });
  await page.waitForFunction(() => {
    const progress = document.querySelector("#uploads progress");
    return progress?.hasAttribute("value") && progress.value > 0 && progress.value < 1;
  });
  assert.match(await row.locator(".upload-progress-text").innerText(), /^Sending… \d{1,2} %$/);
  assert.ok(await bar.isVisible());
  await screenshot(page, "admin-09-progress");
  await documentsStatus(page, "1 file: 1 imported.");
  await line(-1);
});

/** "N chunks" of the stored document titled `title`. */
async function chunksOf(title) {
  const doc = (await apiDocuments()).find((candidate) => candidate.title === title);
  return chunkCount(doc.chunks);
}

test("a failed request ends only its file; a refused token ends the round and asks again", async (t) => {
  const page = await openAdmin(t, { expected: [refusedRequest(408), refusedRequest(401)], path: "admin/documents" });
  await signIn(page);
  let letTokenFail;
  const tokenFails = new Promise((resolve) => {
    letTokenFail = resolve;
  });
  const error = (status, code, message) => ({
    status,
    contentType: "application/json",
    body: JSON.stringify({ error: { code, message } }),
  });
  const answers = [
    {
      status: 200,
      contentType: "application/json",
      body: JSON.stringify({
        documents: [{ file: "a.md", id: 1, title: "Heron notes", chunks: 2, status: "replaced" }],
        skipped: [],
      }),
    },
    error(408, "body_timeout", "the request body did not arrive within 30 s"),
    error(401, "unauthorized", "a valid admin token is required (Authorization: Bearer …)"),
  ];
  let requests = 0;
  await page.route("**/api/admin/documents", async (route) => {
    requests += 1;
    const answer = answers.shift();
    if (answer.status === 401) await tokenFails;
    await route.fulfill(answer);
  });
  const files = ["a", "b", "c", "d"].map((name) => textFile(`${name}.md`, `# ${name}\n\ntext`));
  await picker(page).setInputFiles(files);
  const outcome = (name) =>
    page
      .getByRole("listitem")
      .filter({ has: page.getByText(name, { exact: true }) })
      .locator(".upload-outcome");
  await outcome("b.md").filter({ hasText: "Not uploaded" }).waitFor();
  assert.equal(
    await outcome("a.md").innerText(),
    "Replaced the earlier version of “Heron notes”: now 2 chunks.",
  );
  assert.equal(
    await outcome("b.md").innerText(),
    "Not uploaded. The request body did not arrive within 30 s.",
  );
  assert.equal(await outcome("d.md").innerText(), "", "d.md waits its turn");
  await screenshot(page, "admin-10-request-failed");

  letTokenFail();
  await page.getByRole("alert").filter({ hasText: "401" }).waitFor();
  assert.equal(await page.getByRole("alert").innerText(), MESSAGE.unauthorized);
  assert.ok(await page.getByLabel("Admin token").isVisible());
  assert.equal(await page.getByRole("list", { name: "Uploads" }).count(), 0, "the rows went with the token");
  assert.equal(requests, 3, "d.md was not sent with a refused token");
});

test("a title and a file name with markup are shown as text", async (t) => {
  const title = "<img src=x onerror=window.pwned=1> Field <b>notes</b>";
  const name = "<img src=x onerror=window.pwned=2>.md";
  const page = await openAdmin(t, { path: "admin/documents" });
  recordUploads(t, page);
  await signIn(page);
  const file = textFile(name, `# ${title}\n\nOwls nest in barns.`);
  const outcomes = await uploadFiles(page, [file], "1 file: 1 imported.");
  assert.deepEqual(outcomes, [[name, `Imported as “${title}”: 1 chunk.`]]);
  const item = documentItem(page, title);
  await item.waitFor();
  assert.equal(await item.getByRole("heading").innerText(), title);
  await page.getByRole("button", { name: `Delete ${title}` }).click();
  assert.equal(await page.locator("main img, main b, [onerror]").count(), 0);
  assert.equal(await page.evaluate(() => window.pwned), undefined);
  await screenshot(page, "admin-11-markup-title");
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
  const files = [
    fixture("libreoffice.docx"),
    fixture("encrypted.pdf"),
    textFile("a-rather-long-file-name-without-any-spaces-that-wraps-on-a-phone.md", "# Wrens\n\nWrens sing."),
    { name: "scan.tiff", mimeType: "image/tiff", buffer: Buffer.from([0x49, 0x49, 0x2a, 0]) },
  ];

  for (const look of LOOKS) {
    const { viewport, colorScheme } = look;
    const page = await openAdmin(t, { contextOptions: { viewport, colorScheme }, path: "admin/documents" });
    recordUploads(t, page);
    await signIn(page);
    await picker(page).setInputFiles(files);
    const outcomes = await uploadOutcomes(page);
    assert.equal(outcomes.length, files.length, look.name);
    await page.getByRole("button", { name: /^Delete A rather long/ }).click();
    const layout = await page.evaluate(() => ({
      overflow: document.documentElement.scrollWidth - document.documentElement.clientWidth,
      background: getComputedStyle(document.body).backgroundColor,
      zone: document.getElementById("drop-zone").getBoundingClientRect().height,
    }));
    assert.equal(layout.overflow, 0, `${look.name}: no horizontal overflow`);
    assert.ok(layout.zone >= 44, `${look.name}: the drop zone is easy to tap`);
    const lightness = luminance(layout.background);
    if (look.colorScheme === "dark") assert.ok(lightness < 0.2, `${look.name}: dark background`);
    else assert.ok(lightness > 0.8, `${look.name}: light background`);
    await screenshot(page, `admin-12-${look.name}`);
    await page
      .getByRole("region", { name: "Documents" })
      .screenshot({ path: join(ARTIFACTS, `admin-12-${look.name}-documents.png`) });
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
