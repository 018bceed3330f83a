// The admin page's "Try retrieval" box against bor, the mock LLM and PostgreSQL: a
// question searched with the keyboard shows the passages with each ranking's place and
// says grounded or deflected; an empty question is refused in place.

import assert from "node:assert/strict";
import { join } from "node:path";
import { after, before, test } from "node:test";

import { ARTIFACTS, startSuite } from "./harness.mjs";

const TOKEN = "browser-search-admin-token";
const OOLONG = "Oolong is a partly oxidised tea, between green and black.";

let suite;

before(async () => {
  suite = await startSuite({ borEnv: { BOR_ADMIN_TOKEN: TOKEN, BOR_DEFLECT_THRESHOLD: "0.99" } });
});

after(async () => {
  await suite?.stop();
});

/** Stores a document through the API of `into`'s bor (the index has it when the answer
 *  comes). */
async function addDocument(t, title, content, into = suite) {
  const stored = await fetch(new URL("api/admin/documents", into.bor.url), {
    method: "POST",
    headers: { Authorization: `Bearer ${TOKEN}`, "Content-Type": "application/json" },
    body: JSON.stringify({ title, content }),
  });
  assert.equal(stored.status, 201);
  const { id } = await stored.json();
  t.after(() => into.database.query(`DELETE FROM documents WHERE id = ${Number(id)}`));
  return id;
}

/** A page of a fresh context of `browser`, signed in to bor's admin page at `url` with
 *  the admin token; the page's errors are collected in `problems`. */
async function adminPage(t, browser, url, contextOptions = {}) {
  const context = await browser.newContext(contextOptions);
  context.setDefaultTimeout(15_000);
  t.after(() => context.close());
  const page = await context.newPage();
  const problems = [];
  page.on("pageerror", (error) => problems.push(error.message));
  await page.goto(new URL("admin/retrieval", url).toString());
  await page.getByLabel("Admin token").waitFor();
  await page.keyboard.type(TOKEN);
  await page.keyboard.press("Enter");
  await page.getByRole("heading", { name: "Try retrieval" }).waitFor();
  return { page, problems };
}

test("a question tried with the keyboard shows its passages, their rankings and the verdict", async (t) => {
  const id = await addDocument(t, "Teas", `# Oolong\n\n${OOLONG.replace("partly", "**partly**")}`);
  await addDocument(t, "Rocks", "Granite is an igneous rock rich in quartz.");
  const { page, problems } = await adminPage(t, suite.browser, suite.bor.url);

  const question = page.getByLabel("Question");
  await question.focus();
  await page.keyboard.press("Enter");
  const status = page.locator("#search-status");
  await page.getByRole("status").filter({ hasText: "Type a question first." }).waitFor();
  assert.equal(await question.getAttribute("aria-invalid"), "true");
  assert.ok(await question.evaluate((input) => input === document.activeElement));

  await page.keyboard.type("Which oolong, and why?");
  assert.equal(await question.getAttribute("aria-invalid"), null, "typing clears the mark");
  await page.keyboard.press("Tab");
  assert.ok(await page.getByLabel("Results").evaluate((input) => input === document.activeElement));
  await page.keyboard.press("Control+A");
  await page.keyboard.type("1");
  await page.keyboard.press("Enter");
  await page.getByRole("status").filter({ hasText: /^Grounded:/ }).waitFor();
  assert.match(await status.innerText(), /1 passage; embedding [\d.]+ ms, ranking [\d.]+ ms\.$/);

  const results = page.getByRole("list", { name: "Retrieved passages" });
  const items = results.getByRole("listitem");
  assert.equal(await items.count(), 1);
  const link = items.first().getByRole("link", { name: "Teas" });
  assert.match(await link.getAttribute("href"), new RegExp(`^/documents/${id}#chunk-\\d+$`));
  assert.equal(await items.first().locator(".document-meta").innerText(), "Oolong", "its heading");
  assert.equal(
    await items.first().locator(".search-snippet").innerText(),
    `Oolong ${OOLONG}`,
    "the snippet without its Markdown syntax",
  );
  const rows = await items.first().locator("dt").allInnerTexts();
  assert.deepEqual(rows, ["Vectors", "Full text", "Fused"]);
  const values = await items.first().locator("dd").allInnerTexts();
  assert.match(values[1], /^rank 1, BM25 \d+\.\d{4}$/);
  assert.match(values[2], /^rank 1, score (0\.\d{4}|1\.0000)$/);
  await page.screenshot({ path: join(ARTIFACTS, "admin-search-01-grounded.png"), fullPage: true });

  await question.fill("zebra");
  await question.press("Enter");
  await page.getByRole("status").filter({ hasText: /^Deflected:/ }).waitFor();
  const deflected = await items.first().locator("dd").allInnerTexts();
  assert.equal(deflected[1], "not in its top 50", "no word of the question in any passage");
  assert.deepEqual(problems, [], "the page logged no errors");
});

test("with re-ranking on, each passage shows its re-ranked place and a failed re-rank says so", async (t) => {
  const reranking = await startSuite({ borEnv: { BOR_ADMIN_TOKEN: TOKEN, BOR_RERANK_BASE_URL: "{mock}" } });
  try {
    await addDocument(t, "Alpha", "Oolong tea, oolong tea, oolong tea.", reranking);
    await addDocument(t, "Beta", "Oolong tea, grown.", reranking);
  } finally {
    // After hooks run in the order they were added: the suite stops after its documents go.
    t.after(() => reranking.stop());
  }
  const { page, problems } = await adminPage(t, reranking.browser, reranking.bor.url, {
    viewport: { width: 390, height: 844 },
  });

  const question = page.getByLabel("Question");
  await question.fill("oolong tea");
  await question.press("Enter");
  const status = page.locator("#search-status");
  await page.getByRole("status").filter({ hasText: /^Grounded:/ }).waitFor();
  assert.match(await status.innerText(), /ranking [\d.]+ ms, re-ranking [\d.]+ ms\.$/);
  const items = page.getByRole("list", { name: "Retrieved passages" }).getByRole("listitem");
  const first = items.first();
  assert.equal(await first.getByRole("link").innerText(), "Beta", "the mock's cross-encoder prefers the shorter");
  assert.deepEqual(await first.locator("dt").allInnerTexts(), ["Vectors", "Full text", "Fused", "Re-ranked"]);
  const values = await first.locator("dd").allInnerTexts();
  assert.match(values[2], /^rank 2, score/, "fusion put it second");
  assert.match(values[3], /^rank 1, cross-encoder -?\d+\.\d{4}$/);
  await page.screenshot({ path: join(ARTIFACTS, "admin-search-02-reranked.png"), fullPage: true });

  // A question that is only a directive line: the mock's re-ranking answers 500.
  await question.fill(`MOCK ${JSON.stringify({ status: 500, on: "rerank" })}`);
  await question.press("Enter");
  await page.getByRole("status").filter({ hasText: /Re-ranking failed/ }).waitFor();
  assert.match(await status.innerText(), /Re-ranking failed, so this is the fused order: .*500/);
  assert.deepEqual(await items.first().locator("dt").allInnerTexts(), ["Vectors", "Full text", "Fused"]);
  assert.deepEqual(problems, [], "the page logged no errors");
});
