// The admin page one can find one's way in (BOR_AUTH=accounts), at desktop and phone
// width: each section at its own address (reload, back and forward land on it), the
// section nav marking the current one; a group's member and a grant picked by keyboard
// from the people and groups there are; confirmations that name what goes; the
// one-time password with its Copy button, gone when dismissed or another section opens;
// and the documents searched, filtered and opened from their titles.

import assert from "node:assert/strict";
import { after, before, test } from "node:test";

import { screenshot, signedInAs } from "./chat-page.mjs";
import { runBor, startSuite, waitUntil } from "./harness.mjs";

const PASSWORD = "correct horse battery staple";
const VIEWPORTS = [
  ["desktop", { width: 1280, height: 900 }],
  ["phone", { width: 390, height: 844 }],
];

let suite;

before(async () => {
  suite = await startSuite({ borEnv: { BOR_AUTH: "accounts" } });
  runBor(suite.database, ["user", "add", "root", "--admin", "--password-stdin"], `${PASSWORD}\n`);
  runBor(suite.database, ["user", "add", "annika", "--password-stdin"], `${PASSWORD}\n`);
  runBor(suite.database, ["user", "add", "anton", "--password-stdin"], `${PASSWORD}\n`);
});

after(async () => {
  await suite?.stop();
});

const nav = (page) => page.getByRole("navigation", { name: "Admin sections" });
const current = (page) => nav(page).locator("a[aria-current=page]").innerText();
const visibleHeadings = (page) =>
  page.locator(".sections > section:not([hidden]) h2").allInnerTexts();

async function waitForText(locator, text) {
  await waitUntil(async () => (await locator.innerText()).includes(text), { what: `“${text}”` });
}

/** A JSON request of the signed-in page. */
async function call(page, method, path, body) {
  return page.evaluate(
    async ({ method, path, body }) => {
      const response = await fetch(path, {
        method,
        headers: { "Content-Type": "application/json" },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      return { status: response.status, body: await response.text() };
    },
    { method, path, body },
  );
}

for (const [name, viewport] of VIEWPORTS) {
  test(`each section has its address; reload, back and forward land on it (${name})`, async (t) => {
    const { page, problems } = await signedInAs(suite, t, { username: "root", password: PASSWORD, viewport, path: "/admin" });
    await nav(page).waitFor();
    assert.equal(await current(page), "Health");
    assert.deepEqual(await visibleHeadings(page), ["Service health"], "one section at a time");

    // By keyboard: the People link, Enter; the address and the title follow, the
    // focus is on the section's heading.
    await nav(page).getByRole("link", { name: "People" }).focus();
    await page.keyboard.press("Enter");
    await page.waitForURL((url) => url.pathname === "/admin/people");
    assert.equal(await current(page), "People");
    assert.deepEqual(await visibleHeadings(page), ["People"]);
    assert.equal(await page.evaluate(() => document.activeElement?.textContent), "People");
    assert.match(await page.title(), /^People — /);

    await nav(page).getByRole("link", { name: "Documents" }).click();
    await page.waitForURL((url) => url.pathname === "/admin/documents");
    await page.reload();
    await nav(page).waitFor();
    assert.equal(await current(page), "Documents", "a reload stays on the section");
    assert.deepEqual(await visibleHeadings(page), ["Documents"]);
    await page.goBack();
    await page.waitForURL((url) => url.pathname === "/admin/people");
    await waitUntil(async () => (await current(page)) === "People", { what: "back on People" });
    assert.deepEqual(await visibleHeadings(page), ["People"]);
    await page.goForward();
    await waitUntil(async () => (await current(page)) === "Documents", { what: "forward on Documents" });

    // A shared link opens its section; the nav fits a phone without widening the page.
    await page.goto(new URL("/admin/audit", suite.bor.url).toString());
    await waitUntil(async () => (await current(page)) === "Audit trail", { what: "the audit section" });
    const widths = await page.evaluate(() => [document.documentElement.scrollWidth, window.innerWidth]);
    assert.ok(widths[0] <= widths[1], `no sideways scroll of the page: ${widths}`);
    await screenshot(page, `admin-sections-${name}`);
    await page.emulateMedia({ colorScheme: "dark" });
    await screenshot(page, `admin-sections-${name}-dark`);

    // How tall the page is on each section (the whole page was one scroll before).
    const heights = [];
    for (const link of await nav(page).getByRole("link").all()) {
      await link.click();
      heights.push(`${await link.innerText()} ${await page.evaluate(() => document.documentElement.scrollHeight)}`);
    }
    t.diagnostic(`page height by section (${name}): ${heights.join(", ")}`);
    assert.deepEqual(problems, []);
  });
}

for (const [name, viewport] of VIEWPORTS) {
  test(`members and grants are picked by keyboard; deletions name what goes (${name})`, async (t) => {
    const { page, problems } = await signedInAs(suite, t, { username: "root", password: PASSWORD, viewport, path: "/admin/groups" });
    // The phone in dark: the picker's offers and the dialog in the dark palette.
    if (name === "phone") await page.emulateMedia({ colorScheme: "dark" });
    const group = `team-${name}`;
    const collection = `notes-${name}`;
    const groups = page.getByRole("region", { name: "Groups" });
    await groups.getByLabel("Group name").fill(group);
    await groups.getByRole("button", { name: "Make group" }).click();

    // The picker offers the people whose name holds what is typed; arrows and Enter.
    const picker = groups.getByRole("combobox", { name: `Add a member to ${group}` });
    await picker.focus();
    await page.keyboard.type("an");
    const offers = groups.getByRole("listbox", { name: `Suggestions: Add a member to ${group}` }).getByRole("option");
    await waitUntil(async () => (await offers.allInnerTexts()).length === 2, { what: "annika and anton offered" });
    await page.keyboard.press("ArrowDown");
    assert.equal(await picker.getAttribute("aria-expanded"), "true");
    const active = await picker.getAttribute("aria-activedescendant");
    assert.equal(await page.locator(`#${active}`).innerText(), "anton");
    await screenshot(page, `admin-picker-${name}`);
    await page.keyboard.press("Enter");
    const members = groups.getByRole("list", { name: `Members of ${group}` });
    await waitForText(members, "anton");
    assert.equal(await picker.inputValue(), "", "the box is empty for the next one");
    // A name of no one is not taken: marked on leaving the box, refused on saving.
    await page.keyboard.type("nobody");
    await page.keyboard.press("Tab");
    assert.equal(await picker.getAttribute("aria-invalid"), "true");
    await page.keyboard.press("Enter");
    await waitForText(page.locator("#groups-alert"), `Pick a member of ${group} from the list: no one is named “nobody”.`);
    const problem = await picker.getAttribute("aria-describedby");
    await waitForText(page.locator(`#${problem}`), "No person is named “nobody”");
    assert.equal(await page.evaluate(() => document.activeElement?.getAttribute("role")), "combobox");
    await page.keyboard.press("Escape");
    assert.equal(await picker.inputValue(), "");
    await groups.getByRole("button", { name: `Save the members of ${group}` }).click();
    await waitForText(page.locator("#groups-status"), `Saved the members of ${group}: 1 person.`);

    // A grant of a new collection to the group, picked by keyboard.
    await nav(page).getByRole("link", { name: "Collections" }).click();
    const panel = page.getByRole("region", { name: "Collections" });
    await panel.getByLabel("Name", { exact: true }).fill(collection);
    await panel.getByRole("button", { name: "Make collection" }).click();
    const item = page.getByRole("listitem", { name: collection, exact: true });
    await item.getByRole("button", { name: `Add a grant to ${collection}` }).click();
    await page.keyboard.type(group.slice(0, 6));
    await waitUntil(async () => (await item.getByRole("option").allInnerTexts()).includes(group), { what: "the group offered" });
    await page.keyboard.press("Enter");
    await item.getByRole("button", { name: `Save the grants of ${collection}` }).click();
    await waitForText(page.locator("#collections-status"), `Saved the grants of ${collection}.`);
    const stored = await call(page, "POST", "/api/admin/documents", { title: "Kettle", content: "Descale it.", collection });
    assert.equal(stored.status, 201, stored.body);
    await page.reload();

    // Deleting the collection names its document and its grant, in a modal dialog;
    // Escape keeps it. `default` has no Delete button.
    assert.equal(await panel.getByRole("button", { name: "Delete collection default" }).count(), 0);
    await page.getByRole("listitem", { name: collection, exact: true }).getByRole("button", { name: `Delete collection ${collection}` }).click();
    const dialog = page.getByRole("dialog", { name: `Delete the collection ${collection}?` });
    await dialog.waitFor();
    const words = await dialog.innerText();
    assert.match(words, /Its 1 document \(1 chunk\) is deleted with it/, words);
    assert.match(words, new RegExp(`Its 1 grant goes: group ${group} \\(read\\)`), words);
    assert.equal(await page.evaluate(() => document.activeElement?.textContent), "Cancel", "Cancel first");
    await screenshot(page, `admin-confirm-${name}`);
    await page.keyboard.press("Escape");
    await dialog.waitFor({ state: "hidden" });
    assert.equal(
      await page.evaluate(() => document.activeElement?.getAttribute("aria-label")),
      `Delete collection ${collection}`,
      "the focus back on the button",
    );
    await page.getByRole("button", { name: `Delete collection ${collection}` }).click();
    await dialog.getByRole("button", { name: `Delete ${collection}` }).click();
    await waitForText(page.locator("#collections-status"), `Deleted the collection ${collection}.`);

    // Deleting the group names its member.
    await nav(page).getByRole("link", { name: "Groups" }).click();
    await groups.getByRole("button", { name: `Delete group ${group}` }).click();
    const groupDialog = page.getByRole("dialog", { name: `Delete the group ${group}?` });
    assert.match(await groupDialog.innerText(), /Its 1 member \(anton\) leave it/);
    await groupDialog.getByRole("button", { name: "Cancel" }).click();
    assert.deepEqual(problems, []);
  });
}

for (const [name, viewport] of VIEWPORTS) {
  test(`a new person's password is copied and gone after Done or another section (${name})`, async (t) => {
    const { page, problems } = await signedInAs(suite, t, { username: "root", password: PASSWORD, viewport, path: "/admin/people" });
    await page.context().grantPermissions(["clipboard-read", "clipboard-write"]);
    const people = page.getByRole("region", { name: "People" });
    const username = `temp-${name}`;
    await people.getByLabel("Username").fill(username);
    await people.getByRole("button", { name: "Add person" }).click();
    const secret = page.getByRole("group", { name: `Password for ${username}: shown this once, hand it over.` });
    await secret.waitFor();
    const password = await secret.locator("code").innerText();
    assert.match(password, /^\S{12,}$/);
    assert.equal(await page.evaluate(() => document.activeElement?.textContent), "Copy password");
    await page.keyboard.press("Enter");
    await waitUntil(async () => (await page.evaluate(() => navigator.clipboard.readText())) === password, {
      what: "the password on the clipboard",
    });
    await waitForText(page.locator("#person-secret-status"), "Copied.");
    await screenshot(page, `admin-password-${name}`);
    await secret.getByRole("button", { name: "Done" }).click();
    assert.equal(await secret.count(), 0, "gone after Done");
    assert.ok(!(await page.content()).includes(password));

    // A new password, then another section: gone as well.
    await people.getByRole("button", { name: `New password: ${username}` }).click();
    await page.getByText(`Password for ${username}:`).waitFor();
    const second = await page.locator("#person-secret-value").innerText();
    await nav(page).getByRole("link", { name: "Groups" }).click();
    await nav(page).getByRole("link", { name: "People" }).click();
    assert.equal(await page.locator("#person-secret").isVisible(), false);
    assert.ok(!(await page.content()).includes(second), "not on the page after another section");

    // Deleting the person names what goes with them.
    await people.getByRole("button", { name: `Delete: ${username}` }).click();
    const dialog = page.getByRole("dialog", { name: `Delete ${username}?` });
    assert.match(await dialog.innerText(), /Their 0 API keys stop working/);
    await dialog.getByRole("button", { name: `Delete ${username}` }).click();
    await waitForText(page.locator("#people-status"), `Deleted ${username}.`);
    assert.deepEqual(problems, []);
  });
}

for (const [name, viewport] of VIEWPORTS) {
  test(`documents are found by title, kind and who added them, and open from the list (${name})`, async (t) => {
    const { page, problems } = await signedInAs(suite, t, { username: "root", password: PASSWORD, viewport, path: "/admin/documents" });
    for (const [title, content] of [
      [`Boiler manual ${name}`, `Bleed the radiators in October (${name}).`],
      [`Garden rota ${name}`, `Mow the lawn on Saturdays (${name}).`],
    ]) {
      const stored = await call(page, "POST", "/api/admin/documents", { title, content });
      assert.equal(stored.status, 201, stored.body);
    }
    const panel = page.getByRole("region", { name: "Documents" });
    const list = page.getByRole("list", { name: "Stored documents" });
    await panel.getByRole("searchbox", { name: "Title or source" }).fill(`boiler manual ${name}`);
    await page.keyboard.press("Enter");
    await waitUntil(async () => (await list.getByRole("listitem").count()) === 1, { what: "one document found" });
    await waitForText(page.locator("#documents-count"), "Showing 1 of 1 document that match.");
    const item = list.getByRole("listitem").first();
    assert.match(await item.innerText(), /by root · Markdown · in default/);
    await panel.getByLabel("Added by").selectOption({ label: "No one signed in" });
    await waitForText(page.locator("#documents-count"), "No document matches.");
    await panel.getByLabel("Added by").selectOption({ label: "root (root)" });
    await waitUntil(async () => (await list.getByRole("listitem").count()) === 1, { what: "root's document" });
    await panel.getByLabel("Kind").selectOption({ label: "PDF" });
    await waitForText(page.locator("#documents-count"), "No document matches.");
    await panel.getByLabel("Kind").selectOption({ label: "Markdown" });
    await waitUntil(async () => (await list.getByRole("listitem").count()) === 1, { what: "the Markdown one" });
    await screenshot(page, `admin-documents-${name}`);

    // The address keeps the filters: a reload (or the link shared) shows the same list.
    const address = new URL(page.url());
    assert.equal(address.searchParams.get("q"), `boiler manual ${name}`);
    assert.equal(address.searchParams.get("kind"), "text/markdown");
    await page.reload();
    await waitForText(page.locator("#documents-count"), "Showing 1 of 1 document that match.");
    assert.equal(await panel.getByRole("searchbox", { name: "Title or source" }).inputValue(), `boiler manual ${name}`);
    await waitUntil(async () => (await panel.getByLabel("Added by").inputValue()) !== "", { what: "the person chosen again" });
    assert.equal(await list.getByRole("listitem").count(), 1);

    // The title opens the document's page.
    await list.getByRole("link", { name: `Boiler manual ${name}` }).click();
    await page.waitForURL((url) => /^\/documents\/\d+$/.test(url.pathname));
    await page.getByRole("heading", { name: `Boiler manual ${name}` }).waitFor();
    assert.deepEqual(problems, []);
  });
}

/** Stores `count` documents "Ledger {tag} 0001" … in `default` (the newest the highest
 *  number), deleted after test `t`. */
function storeLedger(t, tag, count) {
  suite.database.query(
    `INSERT INTO documents (title, content, content_sha256, collection_id)
     SELECT 'Ledger ${tag} ' || lpad(n::text, 4, '0'), content, encode(sha256(convert_to(content, 'UTF8')), 'hex'),
            (SELECT id FROM collections WHERE name = 'default')
     FROM generate_series(1, ${count}) AS n, LATERAL (SELECT 'Entry ' || n || ' of ${tag}' AS content) AS entry`,
  );
  t.after(() => suite.database.query(`DELETE FROM documents WHERE title LIKE 'Ledger ${tag} %'`));
}

for (const [name, viewport] of VIEWPORTS) {
  test(`a thousand documents come 50 at a time, the keyboard going on with the next page (${name})`, async (t) => {
    const tag = `bulk-${name}`;
    storeLedger(t, tag, 1000);
    const { page, problems } = await signedInAs(suite, t, { username: "root", password: PASSWORD, viewport, path: "/admin/documents" });
    const panel = page.getByRole("region", { name: "Documents" });
    await panel.getByRole("searchbox", { name: "Title or source" }).fill(tag);
    await page.keyboard.press("Enter");
    const count = page.locator("#documents-count");
    await waitForText(count, "Showing 50 of 1000 documents that match.");
    const titles = page.getByRole("list", { name: "Stored documents" }).getByRole("link");
    assert.equal(await titles.first().innerText(), `Ledger ${tag} 1000`, "newest first");
    const more = panel.getByRole("button", { name: "More documents" });
    await more.focus();
    await page.keyboard.press("Enter");
    await waitForText(count, "Showing 100 of 1000 documents that match.");
    assert.equal(
      await page.evaluate(() => document.activeElement?.textContent),
      `Ledger ${tag} 0950`,
      "the focus on the first document of the new page",
    );
    assert.equal(await titles.count(), 100);
    await screenshot(page, `admin-documents-paged-${name}`);
    assert.deepEqual(problems, []);
  });
}

for (const [name, viewport] of VIEWPORTS) {
  test(`a member's name typed in full is saved with the members, not dropped (${name})`, async (t) => {
    const { page, problems } = await signedInAs(suite, t, { username: "root", password: PASSWORD, viewport, path: "/admin/groups" });
    const group = `crew-${name}`;
    const groups = page.getByRole("region", { name: "Groups" });
    await groups.getByLabel("Group name").fill(group);
    await groups.getByRole("button", { name: "Make group" }).click();
    const picker = groups.getByRole("combobox", { name: `Add a member to ${group}` });
    await picker.fill("anton");
    await page.keyboard.press("Tab");
    assert.equal(await picker.getAttribute("aria-invalid"), null, "anton is someone");
    await groups.getByRole("button", { name: `Save the members of ${group}` }).click();
    await waitForText(page.locator("#groups-status"), `Saved the members of ${group}: 1 person.`);
    const members = groups.getByRole("list", { name: `Members of ${group}` });
    await waitForText(members, "anton");
    assert.deepEqual(problems, []);
  });
}

test("ArrowUp in a picker with no offer chosen goes to the last offer", async (t) => {
  const { page, problems } = await signedInAs(suite, t, { username: "root", password: PASSWORD, viewport: VIEWPORTS[0][1], path: "/admin/limits" });
  const picker = page.getByRole("combobox", { name: "Name", exact: true });
  await picker.focus();
  const offers = page.getByRole("listbox", { name: "Suggestions: Name" }).getByRole("option");
  // Opened again until the people are read (the list is drawn as it opens).
  await waitUntil(
    async () => {
      await page.keyboard.press("Escape");
      await page.keyboard.press("ArrowDown");
      return (await offers.count()) >= 3;
    },
    { what: "root, annika and anton offered" },
  );
  assert.equal(await picker.getAttribute("aria-activedescendant"), null, "none chosen yet");
  await page.keyboard.press("ArrowUp");
  assert.equal(await picker.getAttribute("aria-activedescendant"), await offers.last().getAttribute("id"));
  assert.deepEqual(problems, []);
});

test("More documents goes on with the list shown, not with words typed since and not yet searched", async (t) => {
  const tag = "mixed-pages";
  storeLedger(t, tag, 60);
  const { page, problems } = await signedInAs(suite, t, { username: "root", password: PASSWORD, viewport: VIEWPORTS[0][1], path: "/admin/documents" });
  const panel = page.getByRole("region", { name: "Documents" });
  const search = panel.getByRole("searchbox", { name: "Title or source" });
  await search.fill(tag);
  await page.keyboard.press("Enter");
  const count = page.locator("#documents-count");
  await waitForText(count, "Showing 50 of 60 documents that match.");
  // New words in the box, not searched yet: the next page is still the list's.
  await search.fill(`Ledger ${tag} 0001`);
  await panel.getByRole("button", { name: "More documents" }).click();
  await waitForText(count, "Showing 60 of 60 documents that match.");
  const titles = await page.getByRole("list", { name: "Stored documents" }).getByRole("link").allInnerTexts();
  assert.equal(titles.length, 60);
  assert.equal(titles.at(-1), `Ledger ${tag} 0001`);
  assert.deepEqual(problems, []);
});

test("an address naming a kind the filter does not offer lists every kind, as the filter says", async (t) => {
  const { page, problems } = await signedInAs(suite, t, { username: "root", password: PASSWORD, viewport: VIEWPORTS[0][1], path: "/admin/documents" });
  const stored = await call(page, "POST", "/api/admin/documents", { title: "Tea rota", content: "Whoever empties the pot fills it." });
  assert.equal(stored.status, 201, stored.body);
  await page.goto(new URL("/admin/documents?kind=text%2Fcsv", suite.bor.url).toString());
  const panel = page.getByRole("region", { name: "Documents" });
  await panel.getByRole("button", { name: "Show" }).click();
  assert.equal(await panel.getByLabel("Kind").inputValue(), "", "the filter says Any");
  await waitUntil(async () => /^Showing \d+ of \d+ documents?\.$/.test(await page.locator("#documents-count").innerText()), {
    what: "every document listed",
  });
  assert.deepEqual(problems, []);
});

test("the dates chosen are days in the browser's time zone, sent as the instants they start", async (t) => {
  const { page, problems } = await signedInAs(suite, t, {
    username: "root",
    password: PASSWORD,
    viewport: VIEWPORTS[0][1],
    path: "/admin/documents",
    contextOptions: { timezoneId: "Pacific/Auckland" },
  });
  const panel = page.getByRole("region", { name: "Documents" });
  const asked = (name, value) =>
    page.waitForRequest((request) => {
      const url = new URL(request.url());
      return url.pathname === "/api/admin/documents" && url.searchParams.get(name) === value;
    });
  // 1 December in Auckland starts 13 hours before it does in UTC.
  let request = asked("since", "2026-11-30T11:00:00.000Z");
  await panel.getByLabel("Added from").fill("2026-12-01");
  await request;
  request = asked("until", "2026-12-05T11:00:00.000Z");
  await panel.getByLabel("Added until").fill("2026-12-05");
  await request;
  // The address keeps the days as chosen.
  await waitUntil(() => new URL(page.url()).searchParams.get("until") === "2026-12-05", { what: "the days in the address" });
  assert.equal(new URL(page.url()).searchParams.get("since"), "2026-12-01");
  assert.deepEqual(problems, []);
});

for (const colorScheme of ["light", "dark"]) {
  test(`at phone width the top bar is one row of 44 px controls, the account a menu (${colorScheme})`, async (t) => {
    const { page, problems } = await signedInAs(suite, t, {
      username: "root",
      password: PASSWORD,
      viewport: { width: 390, height: 844 },
      path: "/admin",
      contextOptions: { colorScheme },
    });
    await nav(page).waitFor();
    const account = page.getByRole("button", { name: "root, account menu" });
    await account.waitFor();

    const bar = await page.locator("#top-bar").evaluate((node) => {
      const style = getComputedStyle(node);
      const rect = node.getBoundingClientRect();
      const controls = [...node.querySelectorAll(":scope > *, #account > .account-toggle")]
        .filter((child) => child.checkVisibility() && child.id !== "account")
        .map((child) => {
          const box = child.getBoundingClientRect();
          return { name: child.id || child.tagName.toLowerCase(), top: box.top, bottom: box.bottom, left: box.left, right: box.right, width: box.width, height: box.height };
        });
      return {
        height: rect.height,
        left: rect.left,
        right: rect.right,
        padding: parseFloat(style.paddingTop) + parseFloat(style.paddingBottom) + parseFloat(style.borderBottomWidth),
        controls,
      };
    });
    assert.deepEqual(bar.controls.map(({ name }) => name), ["h1", "a", "account-toggle"]);
    // One row: every control beside every other, and the bar as high as its highest.
    const lowestTop = Math.max(...bar.controls.map(({ top }) => top));
    const highestBottom = Math.min(...bar.controls.map(({ bottom }) => bottom));
    assert.ok(lowestTop < highestBottom, `the controls share one row: ${JSON.stringify(bar.controls)}`);
    const row = Math.max(...bar.controls.map(({ height }) => height));
    assert.ok(Math.abs(bar.height - (row + bar.padding)) < 1, `the bar (${bar.height} px) is one row of ${row} px`);
    for (const control of bar.controls) {
      assert.ok(control.left >= bar.left && control.right <= bar.right, `${control.name} is not cut off`);
      if (control.name !== "h1") assert.ok(control.width >= 44 && control.height >= 44, `${control.name} is a 44 px target`);
    }
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
    assert.equal(overflow, 0, "no sideways scrolling");
    await page.getByRole("banner").getByRole("link", { name: "Chat" }).waitFor();

    // The account menu by keyboard: open, its items, Escape back to its button.
    await account.focus();
    await page.keyboard.press("Enter");
    assert.equal(await account.getAttribute("aria-expanded"), "true");
    await page.getByRole("link", { name: "root, your account" }).waitFor();
    await page.getByRole("button", { name: "Sign out" }).waitFor();
    await screenshot(page, `admin-top-bar-phone-${colorScheme}`);
    await page.keyboard.press("Tab");
    await page.keyboard.press("Escape");
    assert.equal(await page.getByRole("button", { name: "Sign out" }).isVisible(), false);
    assert.equal(await page.evaluate(() => document.activeElement?.id), "account-toggle", "the keyboard is back on the menu's button");
    assert.deepEqual(problems, []);
  });
}
