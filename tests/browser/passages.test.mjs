// Citations and passages (docs/PROTOCOL.md, "Sources and citations") through the pages,
// against bor, the mock LLM and PostgreSQL: an answer's `[n]` links, the numbered
// sources, the passage page they open (highlighted, in view, by keyboard, on a phone),
// its failures, and the note on an answer cut at its length limit.

import assert from "node:assert/strict";
import { after, before, test } from "node:test";

import { startBor, startSuite } from "./harness.mjs";
import {
  answer,
  answerText,
  ask,
  openChat,
  recordProblems,
  screenshot,
  waitForStatus,
  withDirective,
} from "./chat-page.mjs";
import { storeDocument } from "./knowledge.mjs";

let suite;

before(async () => {
  suite = await startSuite();
});

after(async () => {
  await suite?.stop();
});

const TITLE = "Serengeti field notes";
const CITED_TEXT = "Zebras migrate across the Serengeti every spring, following the rains.";
const HOSTILE_TEXT = 'Camp rule: <img src=x onerror="window.injected=1"> no picture shows, nothing runs.';
/** What the hostile chunk shows once sanitised as an answer is. */
const HOSTILE_SHOWN = "Camp rule: no picture shows, nothing runs.";
/** Chromium reports the page's Content-Security-Policy (a second line of defence) as
 *  soon as the hostile chunk's inline handler is parsed, even into the inert document
 *  DOMPurify sanitises in; nothing runs, as the checks show. */
const HANDLER_REFUSED = /^console error: Executing inline event handler violates the following Content Security Policy/;
const QUESTION = "When do zebras migrate across the Serengeti?";

/**
 * A PDF of eighteen chunks that share no word with `QUESTION` but the cited one (the
 * tenth), so that it is source 1; chunk 2 repeats the end of chunk 1, as overlapping
 * chunks of one section do.
 */
function fieldNotes() {
  const camp = (i) => ({
    heading: "Overview › Camps",
    page: 1 + Math.floor(i / 5),
    text: `Camp routine ${i}: water carried at dawn, tents checked at noon, radios charged at dusk.`,
  });
  const chunks = [
    { heading: "Overview", page: 1, text: "Notes from three seasons on the plains, kept by the rangers." },
    ...Array.from({ length: 8 }, (_, i) => camp(i + 1)),
    { heading: "Migration › Timing", page: 3, text: CITED_TEXT },
    { heading: "Overview › Camps", page: 4, text: HOSTILE_TEXT },
    ...Array.from({ length: 7 }, (_, i) => ({
      heading: "Predators",
      page: 4 + Math.floor(i / 4),
      text: `Lions rest in the shade ${i} while hyenas circle the kopjes at night.`,
    })),
  ];
  chunks[2].text = `charged at dusk. ${chunks[2].text}`;
  return chunks;
}

async function storeFieldNotes(t) {
  const stored = await storeDocument(suite, t, {
    title: TITLE,
    chunks: fieldNotes(),
    contentType: "application/pdf",
    source: "serengeti-notes.pdf",
  });
  return { ...stored, citedChunk: stored.chunks[9].id };
}

const REPLY =
  "Zebras migrate every spring [1], after the rains [1]. Predators wait [2][3]. " +
  "No source has the number [9]; in code: `[1]`.";

/** The chat in a fresh context; checks, after `run`, that no page of it logged errors
 *  but those `expected` allows. */
async function withChat(t, run, { contextOptions = {}, expected = [] } = {}) {
  const chat = await openChat(suite, contextOptions);
  t.after(() => chat.context.close());
  chat.context.on("page", (page) => recordProblems(page, chat.problems));
  await run(chat);
  const unexpected = chat.problems.filter((problem) => !expected.some((re) => re.test(problem)));
  assert.deepEqual(unexpected, [], "the pages logged no errors");
}

/** Asks the grounded question that cites `[1]`, `[2]`, `[3]` and a `[9]` without a source. */
async function askCiting(page) {
  await ask(page, withDirective(QUESTION, { reply: REPLY }));
  await waitForStatus(page, "Answer ready.");
  await answer(page).getByRole("list", { name: "Sources" }).waitFor();
}

/** Does `action` (a click or a key) and resolves with the passage page it opened in a
 *  new tab, once that page shows its document or its failure. */
async function passageOpenedBy(page, action) {
  const [passage] = await Promise.all([page.waitForEvent("popup"), action()]);
  await passageShown(passage);
  return passage;
}

async function passageShown(page) {
  await page.locator(".passage, #document-error:not([hidden])").first().waitFor();
}

/** The top of `locator`'s element, relative to the view, and whether it is inside it. */
async function placeInView(locator) {
  return locator.evaluate((node) => {
    const { top } = node.getBoundingClientRect();
    return { top, inView: top >= 0 && top < window.innerHeight };
  });
}

const activeElement = (page) =>
  page.evaluate(() => ({
    id: document.activeElement?.id ?? "",
    label: document.activeElement?.getAttribute("aria-label") ?? "",
    text: document.activeElement?.textContent.trim() ?? "",
  }));

test("an answer's citations link to its numbered sources, which open their passages", async (t) => {
  const notes = await storeFieldNotes(t);
  const passageUrl = `/documents/${notes.id}#chunk-${notes.citedChunk}`;
  await withChat(t, async ({ page }) => {
    await askCiting(page);
    const article = answer(page);
    // Linking changes no text.
    assert.equal(
      await answerText(article),
      "Zebras migrate every spring [1], after the rains [1]. Predators wait [2][3]. " +
        "No source has the number [9]; in code: [1].",
    );

    const first = article.getByRole("link", { name: "Source 1", exact: true });
    assert.equal(await first.count(), 2, "both [1] are links");
    for (const link of await first.all()) {
      assert.equal(await link.innerText(), "[1]");
      assert.equal(await link.getAttribute("href"), passageUrl);
      assert.equal(await link.getAttribute("title"), `${TITLE} — Migration › Timing · p.\u00a03`);
    }
    assert.equal(await article.getByRole("link", { name: "Source 2", exact: true }).count(), 1);
    assert.equal(await article.getByRole("link", { name: "Source 3", exact: true }).count(), 1);
    assert.equal(await article.getByRole("link", { name: "Source 9" }).count(), 0, "[9] has no source");
    assert.equal(await article.locator("code").innerText(), "[1]");
    assert.equal(await article.locator("code a").count(), 0, "code is never linked");

    const sources = article.getByRole("list", { name: "Sources" }).getByRole("listitem");
    const numbers = await sources.locator(".source-n").allInnerTexts();
    assert.ok(numbers.length >= 3, `one entry per source: ${numbers}`);
    assert.deepEqual(numbers, numbers.map((_, i) => `[${i + 1}]`), "in the order of their numbers");
    const cited = sources.first();
    const sourceLink = cited.getByRole("link", { name: `[1] ${TITLE}`, exact: true });
    assert.ok(await sourceLink.isVisible(), "the entry's link names its number and title");
    assert.match(await cited.locator(".source-facts").innerText(), /^Migration › Timing · p\.\u00a03 · score\u00a0-?\d\.\d\d$/);
    assert.equal(await cited.locator(".source-snippet").innerText(), CITED_TEXT);
    assert.equal(await sourceLink.getAttribute("href"), passageUrl, "the source opens the same passage");
    // The other sources are chunks of the same notes, each at its own passage.
    const hrefs = await sources.getByRole("link").evaluateAll((links) => links.map((a) => a.getAttribute("href")));
    assert.equal(new Set(hrefs).size, hrefs.length);
    await article.evaluate((node) => node.scrollIntoView({ block: "start" }));
    await screenshot(page, "passage-01-cited-answer");

    const passage = await passageOpenedBy(page, () => first.first().click());
    assert.equal(new URL(passage.url()).pathname + new URL(passage.url()).hash, passageUrl);
    assert.equal(await passage.title(), `${TITLE} — bor`);
    assert.equal(await passage.getByRole("heading", { level: 1 }).innerText(), TITLE);
    assert.match(
      await passage.locator("#document-facts").innerText(),
      /^PDF · serengeti-notes\.pdf · added .+ · 18 passages$/,
    );
    const items = passage.getByRole("list", { name: "Passages" }).getByRole("listitem");
    assert.deepEqual(
      await items.evaluateAll((nodes) => nodes.map((node) => node.id)),
      notes.chunks.map((chunk) => `chunk-${chunk.id}`),
      "every chunk, in order",
    );

    const highlighted = passage.locator('[aria-current="true"]');
    assert.equal(await highlighted.count(), 1);
    assert.equal(await highlighted.getAttribute("id"), `chunk-${notes.citedChunk}`);
    assert.equal(await highlighted.locator(".passage-cited").textContent(), "Cited passage");
    assert.equal(await highlighted.locator(".passage-place").innerText(), "Migration › Timing · p.\u00a03");
    assert.equal(await highlighted.locator(".passage-text").innerText(), CITED_TEXT);
    const place = await placeInView(highlighted);
    assert.ok(place.inView, `the cited passage is in view (top ${place.top})`);
    assert.ok(await passage.evaluate(() => window.scrollY > 0), "the page scrolled to it");
    assert.equal((await activeElement(passage)).id, `chunk-${notes.citedChunk}`, "and it has the focus");

    // The second chunk greys out what it repeats from the first; the rest is unmarked.
    assert.deepEqual(await items.nth(2).locator(".passage-overlap").allInnerTexts(), ["charged at dusk."]);
    assert.equal(await passage.locator(".passage-overlap").count(), 1);
    assert.match(await passage.locator(".document-note").innerText(), /^Consecutive passages overlap/);

    // Document text is sanitised as an answer is: the markup in one chunk runs nothing.
    assert.equal(await items.nth(10).locator(".passage-text").innerText(), HOSTILE_SHOWN);
    assert.equal(await passage.locator("img").count(), 0);
    assert.equal(await passage.evaluate(() => window.injected), undefined);
    await screenshot(passage, "passage-02-highlighted");

    const back = passage.getByRole("link", { name: "Back to the chat" });
    assert.equal(await back.getAttribute("href"), "/");
    await passage.close();
  }, { expected: [HANDLER_REFUSED] });
});

test("citations, sources and the passage page work from the keyboard", async (t) => {
  const notes = await storeFieldNotes(t);
  await withChat(t, async ({ page }) => {
    await askCiting(page);
    // The open conversation's bar is the last stop before its answers (Delete its last
    // button), then the last question's Edit.
    const deleteButton = page.getByRole("button", { name: "Delete" });
    await deleteButton.waitFor();
    await deleteButton.focus();
    const reached = [];
    for (let i = 0; i < 6; i += 1) {
      await page.keyboard.press("Tab");
      const focused = await activeElement(page);
      reached.push(focused.label || focused.text);
    }
    assert.deepEqual(reached, ["Edit", "Source 1", "Source 1", "Source 2", "Source 3", `[1] ${TITLE}`]);

    const passage = await passageOpenedBy(page, () => page.keyboard.press("Enter"));
    const cited = `chunk-${notes.citedChunk}`;
    assert.equal((await activeElement(passage)).id, cited, "the cited passage has the focus");

    // Backwards: the link to the chat, then the skip link, shown where the reader is.
    await passage.keyboard.press("Shift+Tab");
    assert.equal((await activeElement(passage)).text, "Back to the chat");
    await passage.keyboard.press("Shift+Tab");
    const skip = passage.getByRole("link", { name: "Skip to the cited passage" });
    assert.equal((await activeElement(passage)).text, "Skip to the cited passage");
    assert.ok((await placeInView(skip)).inView, "the focused skip link is in view");
    await passage.keyboard.press("Enter");
    assert.equal((await activeElement(passage)).id, cited, "the skip link leads back to it");
    assert.ok((await placeInView(passage.locator(`#${cited}`))).inView);
    await screenshot(passage, "passage-03-keyboard");
    await passage.close();
  }, { expected: [HANDLER_REFUSED] });
});

test("on a phone the answer, its sources and the passage fit the width", async (t) => {
  const notes = await storeFieldNotes(t);
  const phone = { viewport: { width: 360, height: 740 }, isMobile: true, hasTouch: true };
  const overflow = (page) =>
    page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
  await withChat(
    t,
    async ({ page }) => {
      await askCiting(page);
      await answer(page).evaluate((node) => node.scrollIntoView({ block: "start" }));
      assert.equal(await overflow(page), 0, "the chat does not scroll sideways");
      await screenshot(page, "passage-04-phone-chat");

      const citation = answer(page).getByRole("link", { name: "Source 1", exact: true }).first();
      const passage = await passageOpenedBy(page, () => citation.tap());
      assert.equal(await overflow(passage), 0, "the passage page does not scroll sideways");
      const cited = passage.locator(`#chunk-${notes.citedChunk}`);
      assert.equal(await cited.getAttribute("aria-current"), "true");
      assert.ok((await placeInView(cited)).inView);
      await screenshot(passage, "passage-05-phone-passage");
      await passage.close();
    },
    { contextOptions: phone, expected: [HANDLER_REFUSED] },
  );
});

const KETTLE_TITLE = "Kettle care";
const KETTLE_QUESTION = "How often should the kettle be descaled with citric acid?";
/** A Markdown document whose chunks hold a heading, bold text, lines wrapped by hand and
 *  a table: what the passage page renders and a snippet shows without its syntax. */
const KETTLE_CHUNKS = [
  { heading: "Kettle care", text: "# Kettle care\n\nRead this before the first boil." },
  {
    heading: "Kettle care › Descaling",
    text: "## Descaling\n\nDescale the kettle with **citric acid** every month,\nnot with vinegar.",
  },
  {
    heading: "Kettle care › Models",
    text: "## Models\n\n| Model | Litres |\n|---|---|\n| K1 | 1.7 |\n| K2 | 1.2 |",
  },
];
const DESCALING_SNIPPET = "Descaling Descale the kettle with citric acid every month, not with vinegar.";

/** Asks the kettle question, whose answer cites the descaling chunk as `[1]`, and opens
 *  that citation's passage. */
async function openKettlePassage(page) {
  await ask(page, withDirective(KETTLE_QUESTION, { reply: "Every month, with citric acid [1]." }));
  await waitForStatus(page, "Answer ready.");
  const article = answer(page);
  await article.getByRole("list", { name: "Sources" }).waitFor();
  return {
    article,
    passage: await passageOpenedBy(page, () =>
      article.getByRole("link", { name: "Source 1", exact: true }).click(),
    ),
  };
}

for (const [name, contextOptions] of [
  ["a desktop in light colours", { viewport: { width: 1280, height: 800 }, colorScheme: "light" }],
  [
    "a phone in dark colours",
    { viewport: { width: 360, height: 740 }, isMobile: true, hasTouch: true, colorScheme: "dark" },
  ],
]) {
  test(`on ${name} a passage shows its Markdown rendered and a snippet shows it as plain text`, async (t) => {
    const kettle = await storeDocument(suite, t, {
      title: KETTLE_TITLE,
      chunks: KETTLE_CHUNKS,
      source: "/srv/bor/knowledge/appliances/kettle-care.md",
    });
    const slug = contextOptions.isMobile ? "phone-dark" : "desktop-light";
    await withChat(
      t,
      async ({ page }) => {
        const { article, passage } = await openKettlePassage(page);
        const sources = article.getByRole("list", { name: "Sources" }).getByRole("listitem");
        assert.equal(await sources.first().locator(".source-snippet").innerText(), DESCALING_SNIPPET);
        await article.evaluate((node) => node.scrollIntoView({ block: "start" }));
        await screenshot(page, `passage-07-markdown-snippet-${slug}`);

        const cited = passage.locator('[aria-current="true"]');
        assert.equal(await cited.getAttribute("id"), `chunk-${kettle.chunks[1].id}`);
        assert.match(await passage.locator("#document-facts").innerText(), /^Markdown · kettle-care\.md · added /);
        assert.ok(!(await passage.locator("body").innerText()).includes("/srv/"), "no path of the server's");
        assert.ok((await placeInView(cited)).inView, "the cited passage is in view");
        assert.equal(
          await cited.getByRole("heading", { level: 2 }).innerText(),
          "Descaling",
          "a heading is a heading",
        );
        assert.equal(await cited.locator(".passage-text strong").innerText(), "citric acid");
        // A line wrapped by hand stays in its paragraph, as CommonMark reads it.
        assert.deepEqual(await cited.locator(".passage-text p").allInnerTexts(), [
          "Descale the kettle with citric acid every month, not with vinegar.",
        ]);
        assert.equal(await cited.locator(".passage-text br").count(), 0);

        const table = passage.locator(`#chunk-${kettle.chunks[2].id}`).getByRole("table");
        assert.deepEqual(await table.getByRole("columnheader").allInnerTexts(), ["Model", "Litres"]);
        assert.deepEqual(await table.getByRole("cell").allInnerTexts(), ["K1", "1.7", "K2", "1.2"]);
        const shown = await passage.getByRole("list", { name: "Passages" }).innerText();
        for (const syntax of ["##", "**", "|"]) {
          assert.ok(!shown.includes(syntax), `no ${syntax} is shown: ${shown}`);
        }
        const overflow = await passage.evaluate(
          () => document.documentElement.scrollWidth - document.documentElement.clientWidth,
        );
        assert.equal(overflow, 0, "the passage page does not scroll sideways");
        await passage.evaluate(() => window.scrollTo(0, 0));
        await screenshot(passage, `passage-08-markdown-${slug}`);
        await passage.close();
      },
      { contextOptions },
    );
  });
}

test("the passage page says so when the document is missing or the service is not reachable", async (t) => {
  const notes = await storeFieldNotes(t);
  const context = await suite.browser.newContext();
  t.after(() => context.close());
  const problems = [];
  const open = async (path) => {
    const page = await context.newPage();
    recordProblems(page, problems);
    await page.goto(new URL(path, suite.bor.url).toString());
    await passageShown(page);
    return page;
  };

  const missing = await open("/documents/987654321#chunk-1");
  const alert = missing.getByRole("alert");
  assert.equal(
    await alert.innerText(),
    "There is no such document: it may have been deleted from the knowledge base.",
  );
  assert.equal(await missing.getByRole("heading", { level: 1 }).innerText(), "Document not shown");
  assert.equal(await missing.getByRole("list", { name: "Passages" }).count(), 0);
  assert.ok(await missing.getByRole("link", { name: "Back to the chat" }).isVisible());
  await screenshot(missing, "passage-06-not-found");

  // A chunk that is not (or no longer) in the document: the whole document, and why
  // nothing is marked.
  const stale = await open(`/documents/${notes.id}#chunk-987654321`);
  assert.equal(await stale.locator(".passage").count(), 18);
  assert.equal(await stale.locator('[aria-current="true"]').count(), 0);
  assert.ok(
    (await stale.locator(".document-note").allInnerTexts()).some((note) =>
      note.startsWith("The cited passage is not in this document"),
    ),
  );

  await context.route("**/api/documents/**", (route) => route.abort("internetdisconnected"));
  const offline = await open(`/documents/${notes.id}#chunk-${notes.citedChunk}`);
  assert.equal(
    await offline.getByRole("alert").innerText(),
    "Could not reach the service — check your connection, then reload the page.",
  );
  const failedLoad =
    /^console error: Failed to load resource: (the server responded with a status of 404|net::ERR_INTERNET_DISCONNECTED)/;
  assert.deepEqual(
    problems.filter((problem) => !failedLoad.test(problem) && !HANDLER_REFUSED.test(problem)),
    [],
    "no errors but the failed loads themselves and the refused handler",
  );
});

test("an answer cut at its length limit says so", async (t) => {
  const short = await startBor({
    mock: suite.mock,
    database: suite.database,
    env: { BOR_MAX_ANSWER_CHARS: "100" },
  });
  t.after(() => short.stop());
  const words = Array.from({ length: 60 }, (_, i) => `word${i}`).join(" ");
  await withChat(t, async ({ page }) => {
    await page.goto(short.url);
    await ask(page, withDirective("Say a lot.", { reply: words }));
    await waitForStatus(page, "Answer ready.");
    const article = answer(page);
    assert.ok((await answerText(article)).length <= 100, "the answer was cut");
    assert.equal(await article.locator(".answer-note").innerText(), "The answer was cut at its length limit.");
  });
});

for (const [name, contextOptions] of [
  ["a desktop in light colours", { viewport: { width: 1280, height: 800 }, colorScheme: "light" }],
  [
    "a phone in dark colours",
    { viewport: { width: 360, height: 740 }, isMobile: true, hasTouch: true, colorScheme: "dark" },
  ],
]) {
  test(`on ${name} the cited sources come first, the others folded, and the view stays at the answer`, async (t) => {
    await storeFieldNotes(t);
    const slug = contextOptions.isMobile ? "phone-dark" : "desktop-light";
    const lines = Array.from({ length: 12 }, (_, i) => `Observation ${i + 1} from the plains.`);
    const reply = `${lines.join("\n\n")}\n\nPredators wait [2].`;
    await withChat(
      t,
      async ({ page }) => {
        await ask(page, withDirective(QUESTION, { reply }));
        await waitForStatus(page, "Answer ready.");
        const article = answer(page);
        const cited = article.getByRole("list", { name: "Sources" }).getByRole("listitem");
        assert.deepEqual(await cited.locator(".source-n").allInnerTexts(), ["[2]"], "only the cited source is listed");
        const folded = article.locator("details.uncited-sources");
        const others = await folded.getByRole("listitem", { includeHidden: true }).count();
        assert.ok(others >= 2, `the other passages are kept (${others})`);
        assert.equal(
          await folded.locator("summary").innerText(),
          `${others} more passages the answer does not cite`,
        );
        assert.equal(await folded.evaluate((node) => node.open), false, "folded");
        assert.equal(
          await article.getByRole("list", { name: "Passages not cited" }).isVisible(),
          false,
        );

        // The reader was following the answer as it streamed; its end stays in view.
        const end = await article.locator(".answer-body > :last-child").evaluate((node) => {
          const view = document.getElementById("conversation").getBoundingClientRect();
          const { bottom } = node.getBoundingClientRect();
          return { bottom, viewTop: view.top, viewBottom: view.bottom };
        });
        assert.ok(
          end.bottom > end.viewTop && end.bottom <= end.viewBottom,
          `the answer's last line is in view: ${JSON.stringify(end)}`,
        );
        await screenshot(page, `passage-09-sources-folded-${slug}`);

        await folded.locator("summary").click();
        assert.ok(await article.getByRole("list", { name: "Passages not cited" }).isVisible());
        assert.deepEqual(
          await folded.locator(".source-n").allInnerTexts(),
          Array.from({ length: others }, (_, i) => `[${i < 1 ? 1 : i + 2}]`),
          "the others, in the order of their numbers",
        );
        await folded.evaluate((node) => node.scrollIntoView({ block: "end" }));
        await screenshot(page, `passage-10-sources-unfolded-${slug}`);
      },
      { contextOptions },
    );
  });
}
