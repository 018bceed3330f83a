// "Add from URL" on the admin page against bor, the mock LLM, PostgreSQL and a web
// server of the test's own on 127.0.0.1 (reached with BOR_FETCH_ALLOW_PRIVATE=true): a
// page is added and listed, its passage page links the page, and a page that cannot be
// fetched is named with its reason. bor also watches a folder (BOR_WATCH): the page
// shows what it did with each file.

import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, test } from "node:test";

import { startSuite, waitUntil } from "./harness.mjs";

const TOKEN = "browser-test-url-token";
const TITLE = "Heron feeding habits";

let suite;
let site;
let folder;

before(async () => {
  folder = mkdtempSync(join(tmpdir(), "bor-watched-"));
  writeFileSync(join(folder, "egrets.md"), "# Egrets\n\nEgrets follow cattle to catch insects.\n");
  writeFileSync(join(folder, "broken.md"), "# Bin\0ary");
  site = createServer((request, response) => {
    if (request.url === "/herons.html") {
      response.writeHead(200, { "Content-Type": "text/html; charset=utf-8", ETag: '"herons-1"' });
      response.end(
        `<!doctype html><html><head><title>${TITLE}</title></head><body><h1>${TITLE}</h1>` +
          "<p>Herons stand still in shallow water and strike at passing fish.</p></body></html>",
      );
      return;
    }
    response.writeHead(404, { "Content-Type": "text/plain" });
    response.end("not here");
  });
  await new Promise((resolve) => site.listen(0, "127.0.0.1", resolve));
  suite = await startSuite({
    borEnv: { BOR_ADMIN_TOKEN: TOKEN, BOR_FETCH_ALLOW_PRIVATE: "true", BOR_WATCH: folder },
  });
});

after(async () => {
  await suite?.stop();
  site?.close();
  if (folder) rmSync(folder, { recursive: true, force: true });
});

const siteUrl = (path) => `http://127.0.0.1:${site.address().port}${path}`;

async function openAdmin(t) {
  const context = await suite.browser.newContext();
  context.setDefaultTimeout(15_000);
  const page = await context.newPage();
  const problems = [];
  page.on("pageerror", (error) => problems.push(`page error: ${error.message}`));
  t.after(async () => {
    await context.close();
    assert.deepEqual(problems, [], "the page logged no errors");
  });
  await page.goto(new URL("admin/documents", suite.bor.url).toString());
  await page.getByLabel("Admin token").fill(TOKEN);
  await page.keyboard.press("Enter");
  await page.getByRole("heading", { name: "Documents", exact: true }).waitFor();
  return page;
}

async function addFromUrl(page, url, expected) {
  await page.getByLabel("Add from URL").fill(url);
  await page.getByRole("button", { name: "Add", exact: true }).click();
  await page.waitForFunction(
    (text) => document.getElementById("url-status")?.textContent === text,
    expected,
  );
}

test("a page added from its URL is listed and its passage page links it", async (t) => {
  const page = await openAdmin(t);
  const url = siteUrl("/herons.html");
  await addFromUrl(page, url, "1 page added or up to date.");
  const item = page
    .getByRole("list", { name: "Stored documents" })
    .getByRole("listitem")
    .filter({ has: page.getByRole("heading", { name: TITLE, exact: true }) });
  await item.waitFor();

  const documents = await (await fetch(new URL("api/documents", suite.bor.url))).json();
  const stored = documents.find((doc) => doc.title === TITLE);
  assert.ok(stored, JSON.stringify(documents));
  await page.goto(new URL(`documents/${stored.id}`, suite.bor.url).toString());
  const link = page.getByRole("link", { name: url });
  await link.waitFor();
  assert.equal(await link.getAttribute("href"), url);
  assert.equal(await link.getAttribute("rel"), "noopener noreferrer");
});

test("a page that cannot be fetched is named with its reason", async (t) => {
  const page = await openAdmin(t);
  const missing = siteUrl("/missing.html");
  await addFromUrl(
    page,
    missing,
    `0 pages added or up to date; 1 skipped (${missing}: the server answered HTTP 404).`,
  );
  const tone = await page.evaluate(() => document.getElementById("url-status").dataset.tone);
  assert.equal(tone, "error");
});

test("the watched folder's files are shown with what became of each", async (t) => {
  await waitUntil(
    async () => {
      const response = await fetch(new URL("api/admin/watched-files", suite.bor.url), {
        headers: { Authorization: `Bearer ${TOKEN}` },
      });
      const report = await response.json();
      return report.imported === 1 && report.skipped === 1;
    },
    { what: "the watcher's first pass" },
  );
  const page = await openAdmin(t);
  const section = page.getByRole("region", { name: "Watched folders" });
  await section.getByText("1 imported, 1 skipped, 0 removed.").waitFor();
  const skipped = await section.getByRole("list", { name: "Watched files skipped" }).innerText();
  assert.match(skipped, /broken\.md: binary \(it contains NUL bytes\)/);
});
