// Collections on the pages with BOR_AUTH=accounts, at phone width: an admin makes two
// collections, grants one to a group and a writer, puts a member in the group and
// stores a document into each; the member sees only what was granted in the chat
// page's chooser, and a question of theirs cites that collection only; the writer adds
// a file from the chat page. The tests follow on from each other, in order.

import assert from "node:assert/strict";
import { after, before, test } from "node:test";

import { ask, openAccountMenu, screenshot, signedInAs, waitForIdle, waitForStatus } from "./chat-page.mjs";
import { ARTIFACTS, runBor, startSuite, waitUntil } from "./harness.mjs";

const PASSWORD = "correct horse battery staple";
const PHONE = { width: 390, height: 844 };
const QUESTION = "When is the yearly bonus paid out?";

let suite;

before(async () => {
  suite = await startSuite({ borEnv: { BOR_AUTH: "accounts" } });
  runBor(suite.database, ["user", "add", "root", "--admin", "--password-stdin"], `${PASSWORD}\n`);
  runBor(suite.database, ["user", "add", "ann", "--password-stdin"], `${PASSWORD}\n`);
  runBor(suite.database, ["user", "add", "wes", "--password-stdin"], `${PASSWORD}\n`);
});

after(async () => {
  await suite?.stop();
});

/** A browser of `username`'s own at phone width, signed in and sent to `path`. */
const signedIn = (t, username, path) =>
  signedInAs(suite, t, { username, password: PASSWORD, viewport: PHONE, path });

/** A Markdown file for an `<input type=file>`. */
const markdown = (name, text) => ({ name, mimeType: "text/markdown", buffer: Buffer.from(text) });

/** Opens the admin page's section `name` from its nav. */
async function openSection(page, name) {
  await page.getByRole("navigation", { name: "Admin sections" }).getByRole("link", { name }).click();
  await page.getByRole("heading", { name, level: 2 }).waitFor();
}

/** Stores `file` (whose title is `title`) into `collection` with the admin page's
 *  chooser, in the Documents section; waits until the list shows it there. */
async function uploadInto(page, collection, file, title) {
  await openSection(page, "Documents");
  await page.getByLabel("Into collection").selectOption(collection);
  await page.locator("#upload-files").setInputFiles(file);
  const item = page.getByRole("list", { name: "Stored documents" }).getByRole("listitem").filter({ hasText: title });
  await waitUntil(async () => (await item.count()) === 1 && (await item.locator(".document-meta").innerText()).endsWith(` · in ${collection}`), {
    what: `${file.name} in ${collection}`,
  });
}

/** The collection list item named `name` on the admin page. */
const collectionItem = (page, name) => page.getByRole("listitem", { name, exact: true });

test("an admin makes collections and a group, grants one, and stores a document in each", async (t) => {
  const { page, problems } = await signedIn(t, "root", "/admin/collections");
  const panel = page.getByRole("region", { name: "Collections" });
  await panel.getByRole("heading", { name: "Collections" }).waitFor();
  const alert = page.locator("#collections-alert");

  // A name out of the rule: the server's 400 in the alert region, the field marked.
  await panel.getByLabel("Name", { exact: true }).fill("Human Resources");
  await panel.getByRole("button", { name: "Make collection" }).click();
  await waitUntil(async () => (await alert.isVisible()) && (await alert.innerText()).includes("1 to 64 characters"), {
    what: "the name rule in the alert",
  });
  assert.equal(await alert.getAttribute("role"), "alert");
  assert.equal(await panel.getByLabel("Name", { exact: true }).getAttribute("aria-invalid"), "true");

  // The keyboard alone: the name, Tab, the description, Enter.
  await panel.getByLabel("Name", { exact: true }).fill("");
  await panel.getByLabel("Name", { exact: true }).focus();
  await page.keyboard.type("hr");
  await page.keyboard.press("Tab");
  await page.keyboard.type("Payroll and leave");
  await page.keyboard.press("Enter");
  await collectionItem(page, "hr").waitFor();
  assert.equal(await alert.isVisible(), false);
  await panel.getByLabel("Name", { exact: true }).fill("legal");
  await panel.getByRole("button", { name: "Make collection" }).click();
  await collectionItem(page, "legal").waitFor();

  // A group, made and given a member by keyboard (picked from the people there are).
  await openSection(page, "Groups");
  const groups = page.getByRole("region", { name: "Groups" });
  await groups.getByLabel("Group name").focus();
  await page.keyboard.type("hr-team");
  await page.keyboard.press("Enter");
  const picker = groups.getByRole("combobox", { name: "Add a member to hr-team" });
  await picker.waitFor();
  assert.equal(await groups.getByRole("button", { name: "Delete group everyone" }).count(), 0, "everyone is built in");
  assert.ok(await groups.getByText("built in: every user, always").isVisible());
  await picker.focus();
  await page.keyboard.type("ann");
  await page.keyboard.press("Enter");
  const members = groups.getByRole("list", { name: "Members of hr-team" });
  await members.getByRole("button", { name: "Remove ann from hr-team" }).waitFor();
  await groups.getByRole("button", { name: "Save the members of hr-team" }).focus();
  await page.keyboard.press("Enter");
  await waitForText(page.locator("#groups-status"), "Saved the members of hr-team: 1 person.");
  assert.deepEqual(await members.locator("li").evaluateAll((items) => items.map((item) => item.dataset.username)), ["ann"]);
  await waitUntil(async () => (await page.evaluate(() => document.activeElement?.textContent)) === "Save members", {
    what: "the focus back on Save members",
  });
  await openSection(page, "Collections");

  // A grant to an unknown name is refused with the name; then hr goes to the group
  // (read) and to wes (write).
  const hr = collectionItem(page, "hr");
  await hr.getByRole("button", { name: "Add a grant to hr" }).click();
  await page.keyboard.type("nobody-here");
  await hr.getByRole("button", { name: "Save the grants of hr" }).click();
  await waitUntil(async () => (await alert.isVisible()) && (await alert.innerText()).includes("nobody-here"), {
    what: "the unknown name in the alert",
  });
  await hr.getByRole("button", { name: "Remove the grant to nobody-here, hr" }).click();
  await hr.getByRole("button", { name: "Add a grant to hr" }).click();
  await page.keyboard.type("hr-team");
  await hr.getByRole("button", { name: "Add a grant to hr" }).click();
  const rows = hr.getByRole("listitem");
  await rows.nth(1).getByRole("combobox", { name: "Grantee kind, hr" }).selectOption("user");
  await rows.nth(1).getByRole("combobox", { name: "User or group name, hr" }).fill("wes");
  await rows.nth(1).getByRole("combobox", { name: "Access, hr" }).selectOption("write");
  await hr.getByRole("button", { name: "Save the grants of hr" }).click();
  await waitForText(page.locator("#collections-status"), "Saved the grants of hr.");
  const listed = await page.evaluate(async () => (await (await fetch("/api/admin/collections")).json()).collections);
  const hrGrants = listed.find(({ name }) => name === "hr").grants;
  assert.deepEqual(hrGrants.map((grant) => JSON.stringify(grant)).sort(), [
    JSON.stringify({ group: "hr-team", access: "read" }),
    JSON.stringify({ user: "wes", access: "write" }),
  ]);
  assert.deepEqual(listed.find(({ name }) => name === "legal").grants, []);

  // The description changed in place.
  await hr.getByRole("textbox", { name: "Description", exact: true }).fill("Payroll, leave and bonuses");
  await hr.getByRole("button", { name: "Save the description of hr" }).click();
  await waitForText(page.locator("#collections-status"), "Saved the description of hr.");

  // One document in each collection, through the upload's chooser.
  await uploadInto(page, "hr", markdown("payroll.md", "# Payroll\n\nThe yearly bonus is paid out in March with the payroll."), "Payroll");
  await uploadInto(page, "legal", markdown("contracts.md", "# Contracts\n\nThe yearly bonus of the supplier contract is paid out in March."), "Contracts");
  await uploadInto(page, "default", markdown("handbook.md", "# Handbook\n\nThe yearly bonus for volunteers is paid out in March."), "Handbook");

  // A collection deleted: the confirmation says how many documents go with it.
  await openSection(page, "Collections");
  await panel.getByLabel("Name", { exact: true }).fill("scratch");
  await panel.getByRole("button", { name: "Make collection" }).click();
  await collectionItem(page, "scratch").waitFor();
  await uploadInto(page, "scratch", markdown("draft.md", "# Draft\n\nNothing to keep."), "Draft");
  await openSection(page, "Collections");
  await collectionItem(page, "scratch").getByRole("button", { name: "Delete collection scratch" }).click();
  const dialog = page.getByRole("dialog", { name: "Delete the collection scratch?" });
  const asked = await dialog.innerText();
  assert.match(asked, /Its 1 document \(1 chunk\) is deleted with it/, asked);
  assert.match(asked, /It is granted to no one\./, asked);
  await dialog.getByRole("button", { name: "Delete scratch" }).click();
  await waitForText(page.locator("#collections-status"), "Deleted the collection scratch.");
  await waitUntil(async () => (await collectionItem(page, "scratch").count()) === 0, { what: "scratch gone from the list" });

  const width = await page.evaluate(() => document.documentElement.scrollWidth);
  assert.ok(width <= PHONE.width, `nothing wider than the phone (${width} px)`);
  await page.screenshot({ path: `${ARTIFACTS}/collections-admin.png`, fullPage: true });
  await panel.screenshot({ path: `${ARTIFACTS}/collections-admin-collections.png` });
  await page.emulateMedia({ colorScheme: "dark" });
  await openSection(page, "Groups");
  await groups.screenshot({ path: `${ARTIFACTS}/collections-admin-groups-dark.png` });
  await openSection(page, "Documents");
  await screenshot(page, "collections-admin-documents-dark");
  // The refusal of the name above is the only error (the unknown grantee is refused by
  // the picker before it is sent).
  assert.deepEqual(problems, ["console error: Failed to load resource: the server responded with a status of 400 (Bad Request)"]);
});

test("a member chooses among the collections they read, and the sources come from that one", async (t) => {
  const { page, problems } = await signedIn(t, "ann", "/");
  const chooser = page.locator("#collection-choice");
  await chooser.waitFor();
  assert.equal(await page.locator("#collection-summary").innerText(), "Searching all my collections");
  await page.locator("#collection-summary").click();
  const offered = await chooser.locator(".collection-options label").allInnerTexts();
  assert.deepEqual(offered.map((text) => text.trim()), ["default", "hr"], "legal is not granted to ann");
  assert.equal(await page.getByRole("button", { name: "Add documents" }).count(), 0, "ann writes nowhere");

  // The overview lists what ann reads, each with its collection.
  const overview = await page.locator("#knowledge-list .knowledge-item").allInnerTexts();
  assert.equal(overview.length, 2);
  assert.ok(overview.some((text) => text.includes("Payroll") && text.includes("in hr")), overview.join(" | "));
  assert.ok(overview.every((text) => !text.includes("Contracts")));

  await page.getByRole("checkbox", { name: "hr" }).check();
  assert.equal(await page.getByRole("checkbox", { name: "All my collections" }).isChecked(), false);
  assert.equal(await page.locator("#collection-summary").innerText(), "Searching hr");
  await screenshot(page, "collections-member-chooser");
  // The choice is kept across a reload.
  await page.reload();
  await page.getByRole("textbox", { name: "Message" }).waitFor();
  await waitForText(page.locator("#collection-summary"), "Searching hr");

  const sent = page.waitForRequest((request) => request.url().endsWith("/api/chat"));
  await ask(page, QUESTION);
  assert.deepEqual((await sent).postDataJSON().collections, ["hr"]);
  await waitForStatus(page, "Answer ready.");
  await waitForIdle(page);
  const sources = page.getByRole("article").last().getByRole("list", { name: "Sources" });
  const titles = await linkTexts(sources);
  assert.deepEqual(titles, ["[1] Payroll"]);
  const facts = await sources.innerText();
  assert.ok(!facts.includes("score"), `a member is shown no raw score: ${facts}`);
  await screenshot(page, "collections-member-chat");

  // Back to all: the default collection's handbook may answer too, legal's never.
  await page.locator("#collection-summary").click();
  await page.getByRole("checkbox", { name: "All my collections" }).check();
  await page.getByRole("button", { name: "New chat" }).click();
  const sentAll = page.waitForRequest((request) => request.url().endsWith("/api/chat"));
  await ask(page, QUESTION);
  assert.equal((await sentAll).postDataJSON().collections, undefined);
  await waitForStatus(page, "Answer ready.");
  const allTitles = await linkTexts(page.getByRole("article").last().getByRole("list", { name: "Sources" }));
  assert.deepEqual(allTitles.map((title) => title.replace(/^\[\d+\] /, "")).sort(), ["Handbook", "Payroll"]);
  assert.deepEqual(problems, []);
});

test("a member browses the documents they read, by collection, and opens one", async (t) => {
  const { page, problems } = await signedIn(t, "ann", "/");
  // From the conversations' drawer on a phone.
  await page.getByRole("button", { name: "Conversations" }).click();
  await page.getByRole("link", { name: "Browse your documents" }).click();
  await page.waitForURL((url) => url.pathname === "/documents");
  const status = page.locator("#library-status");
  await waitForText(status, "2 documents in 2 collections.");
  const headings = await page.locator("#library-collections h2").allInnerTexts();
  assert.deepEqual(headings, ["default", "hr"], "legal is not ann's to read");
  const hr = page.getByRole("region", { name: "hr" });
  assert.match(await hr.innerText(), /Payroll, leave and bonuses/, "the collection's description");
  assert.doesNotMatch(await page.locator("main").innerText(), /Contracts/);

  await page.getByRole("searchbox", { name: "Filter by title or summary" }).fill("payr");
  await waitForText(status, "1 document matches “payr”.");
  assert.equal(await page.getByRole("region", { name: "default" }).isVisible(), false);
  assert.match(await hr.innerText(), /1 of 1 shown/);
  const width = await page.evaluate(() => document.documentElement.scrollWidth);
  assert.ok(width <= PHONE.width, `nothing wider than the phone (${width} px)`);
  await screenshot(page, "library-phone");

  await hr.getByRole("link", { name: "Payroll" }).click();
  await page.waitForURL((url) => /^\/documents\/\d+$/.test(url.pathname));
  await page.getByText("The yearly bonus is paid out in March with the payroll.").waitFor();
  assert.deepEqual(problems, []);
});

test("a writer adds a file to their collection from the chat page", async (t) => {
  const { page, problems } = await signedIn(t, "wes", "/");
  await openAccountMenu(page);
  const add = page.getByRole("button", { name: "Add documents" });
  await add.click();
  const dialog = page.getByRole("dialog", { name: "Add documents" });
  assert.deepEqual(await dialog.getByLabel("Collection").locator("option").allInnerTexts(), ["hr"]);
  await dialog.getByLabel("Files").setInputFiles([
    markdown("leave.md", "# Leave\n\nEvery employee has twenty-five days of leave a year."),
    { name: "empty.md", mimeType: "text/markdown", buffer: Buffer.from("") },
  ]);
  await dialog.getByRole("button", { name: "Upload" }).click();
  const report = dialog.getByRole("list", { name: "Upload report" });
  await report.waitFor();
  const lines = await report.getByRole("listitem").allInnerTexts();
  assert.equal(lines.length, 2, lines.join(" | "));
  assert.match(lines[0], /^leave\.md: “Leave”, stored, 1 chunk$/);
  assert.match(lines[1], /^empty\.md: skipped, /);
  assert.equal(await dialog.getByRole("status").innerText(), "1 stored, 1 skipped, in hr.");
  await screenshot(page, "collections-writer-upload");

  const inHr = await page.evaluate(async () => (await (await fetch("/api/documents?collection=hr")).json()).map((doc) => doc.title));
  assert.deepEqual(inHr.sort(), ["Leave", "Payroll"]);
  await dialog.getByRole("button", { name: "Close" }).click();
  assert.deepEqual(problems, []);
});

/** The texts of the links in `list`, their white space made single spaces. */
async function linkTexts(list) {
  return (await list.getByRole("link").allInnerTexts()).map((text) => text.replace(/\s+/g, " ").trim());
}

/** Waits until `locator`'s text is `text`. */
async function waitForText(locator, text) {
  await waitUntil(async () => (await locator.innerText()).trim() === text, { what: `“${text}”` });
}
