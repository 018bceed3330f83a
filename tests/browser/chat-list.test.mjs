// The chat page's list of conversations and top bar, signed in (docs/PROTOCOL.md, "Chat
// page"): the list grouped by day in the browser's time zone with the pinned ones
// first, each group a list named by its heading; Pin and Archive from the
// conversation's menu, by keyboard, announced, an archived conversation listed apart,
// still answering, and brought back; and the top bar in one row at phone width, light
// and dark. Desktop and phone.

import assert from "node:assert/strict";
import { after, before, test } from "node:test";

import { ask, screenshot, signedInAs, waitForIdle, waitForStatus } from "./chat-page.mjs";
import { runBor, startSuite, waitUntil } from "./harness.mjs";
import { sqlText } from "./knowledge.mjs";

const PASSWORD = "correct horse battery staple";
/** A zone far from UTC, so that a day is the browser's day, not the server's. */
const TIME_ZONE = "Pacific/Auckland";

const VIEWS = [
  ["desktop", { width: 1280, height: 800 }],
  ["phone", { width: 390, height: 844 }],
];

let suite;

before(async () => {
  suite = await startSuite({ borEnv: { BOR_AUTH: "accounts" } });
  for (const username of ["ann", "bob"]) {
    runBor(suite.database, ["user", "add", username, "--password-stdin"], `${PASSWORD}\n`);
  }
});

after(async () => {
  await suite?.stop();
});

async function signIn(t, username, viewport, contextOptions = {}) {
  return signedInAs(suite, t, {
    username,
    password: PASSWORD,
    viewport,
    contextOptions: { locale: "en-US", timezoneId: TIME_ZONE, ...contextOptions },
  });
}

/** Stores a conversation of `username`'s last added to `daysAgo` days before now; its
 *  id. */
function storeConversation(username, title, { daysAgo = 0, pinned = false, archived = false } = {}) {
  const [[id]] = suite.database.query(
    `INSERT INTO conversations (id, title, created_at, updated_at, user_id, pinned_at, archived_at)
     VALUES (gen_random_uuid(), ${sqlText(title)}, now() - interval '${daysAgo} days',
             now() - interval '${daysAgo} days', (SELECT id FROM users WHERE username = '${username}'),
             ${pinned ? "now()" : "NULL"}, ${archived ? "now()" : "NULL"})
     RETURNING id`,
  );
  return id;
}

function deleteConversations() {
  suite.database.query("DELETE FROM conversations");
}

/** The list as shown: `[[heading, [titles…]]…]`, read from the page even while the
 *  drawer is closed. */
function shownGroups(page) {
  return page.locator("#conversation-list").evaluate((list) =>
    [...list.querySelectorAll(".conversation-group")].map((group) => [
      group.querySelector("h3").textContent,
      [...group.querySelectorAll(".conversation-title")].map((title) => title.textContent),
    ]),
  );
}

async function waitForGroups(page, expected) {
  await waitUntil(async () => JSON.stringify(await shownGroups(page)) === JSON.stringify(expected), {
    what: `the list to read ${JSON.stringify(expected)}`,
  }).catch(async (error) => {
    throw new Error(`${error.message}; it reads ${JSON.stringify(await shownGroups(page))}`);
  });
}

/** The month group of a conversation `daysAgo` days old, as the browser names it. */
function monthOf(daysAgo) {
  const date = new Date(Date.now() - daysAgo * 24 * 60 * 60 * 1000);
  return new Intl.DateTimeFormat("en-US", { month: "long", year: "numeric", timeZone: TIME_ZONE }).format(date);
}

const isFocused = (locator) => locator.evaluate((node) => node === document.activeElement);

for (const [name, viewport] of VIEWS) {
  test(`the list is grouped by day in the browser's time zone, pinned first, each group a named list (${name})`, async (t) => {
    deleteConversations();
    storeConversation("ann", "Seventy days old", { daysAgo: 70 });
    storeConversation("ann", "Forty days old", { daysAgo: 40 });
    storeConversation("ann", "Pinned long ago", { daysAgo: 100, pinned: true });
    storeConversation("ann", "Twenty days old", { daysAgo: 20 });
    storeConversation("ann", "Three days old", { daysAgo: 3 });
    storeConversation("ann", "From yesterday", { daysAgo: 1 });
    storeConversation("ann", "From today");
    storeConversation("ann", "Archived today", { archived: true });
    storeConversation("bob", "Bob's today");
    const { page, problems } = await signIn(t, "ann", viewport);
    const expected = [
      ["Pinned", ["Pinned long ago"]],
      ["Today", ["From today"]],
      ["Yesterday", ["From yesterday"]],
      ["Previous 7 days", ["Three days old"]],
      ["Previous 30 days", ["Twenty days old"]],
      [monthOf(40), ["Forty days old"]],
      [monthOf(70), ["Seventy days old"]],
    ];
    await waitForGroups(page, expected);
    if (name === "phone") {
      await page.getByRole("button", { name: "Conversations", exact: true }).click();
    }
    // A screen reader reaches each group by its heading and hears its list named by it.
    const nav = page.getByRole("navigation", { name: "Conversations" });
    const headings = await nav.getByRole("heading", { level: 3 }).allInnerTexts();
    assert.deepEqual(headings, expected.map(([heading]) => heading));
    for (const [heading, titles] of expected) {
      assert.equal(await nav.getByRole("list", { name: heading, exact: true }).getByRole("listitem").count(), titles.length, heading);
    }
    await screenshot(page, `chat-list-groups-${name}`);
    assert.deepEqual(problems, []);
  });

  test(`Pin and Archive from the conversation's menu, by keyboard; an archived one is listed apart, answers, and comes back (${name})`, async (t) => {
    deleteConversations();
    storeConversation("ann", "Kettle notes");
    const hose = storeConversation("ann", "Garden hose", { daysAgo: 2 });
    const { page, problems } = await signIn(t, "ann", viewport);
    await page.goto(`${suite.bor.url}?c=${hose}`);
    await page.getByRole("heading", { name: "Garden hose" }).waitFor();
    await waitForGroups(page, [["Today", ["Kettle notes"]], ["Previous 7 days", ["Garden hose"]]]);

    // At phone width the actions are a menu of their own, opened from the keyboard.
    const openMenu = async () => {
      if (name !== "phone") return;
      const toggle = page.getByRole("button", { name: "Conversation actions" });
      await toggle.focus();
      await page.keyboard.press("Enter");
      assert.equal(await toggle.getAttribute("aria-expanded"), "true");
    };
    await openMenu();
    const pin = page.getByRole("button", { name: "Pin", exact: true });
    await pin.focus();
    await page.keyboard.press("Enter");
    await waitForStatus(page, "Conversation pinned: it is listed first.");
    await waitForGroups(page, [["Pinned", ["Garden hose"]], ["Today", ["Kettle notes"]]]);
    await openMenu();
    const unpin = page.getByRole("button", { name: "Unpin", exact: true });
    await unpin.waitFor();
    if (name === "desktop") assert.ok(await isFocused(unpin), "the keyboard stays on the button");
    await screenshot(page, `chat-list-pinned-${name}`);

    const archive = page.getByRole("button", { name: "Archive", exact: true });
    await archive.focus();
    await page.keyboard.press("Enter");
    await waitForStatus(page, "Conversation archived: it is listed under Archived conversations.");
    await waitForGroups(page, [["Today", ["Kettle notes"]]]);
    assert.equal(await page.locator("#conversation-archived").innerText(), "Archived");
    const [[archivedAt]] = suite.database.query(`SELECT archived_at IS NOT NULL FROM conversations WHERE id = '${hose}'`);
    assert.equal(archivedAt, "t");

    // Pinned while archived, it stays in the archived list, which is in date order: the
    // status line says it is listed first once unarchived.
    await openMenu();
    const unpinArchived = page.getByRole("button", { name: "Unpin", exact: true });
    await unpinArchived.focus();
    await page.keyboard.press("Enter");
    await waitForStatus(page, "Conversation unpinned.");
    await openMenu();
    const pinArchived = page.getByRole("button", { name: "Pin", exact: true });
    await pinArchived.focus();
    await page.keyboard.press("Enter");
    await waitForStatus(page, "Conversation pinned: it will be listed first once unarchived.");
    await waitForGroups(page, [["Today", ["Kettle notes"]]]);
    assert.equal(await page.locator("#conversation-archived").innerText(), "Archived");

    // Still open, and it answers a follow-up, staying archived.
    await ask(page, "How long is it?");
    await waitForStatus(page, "Answer ready.");
    await waitForIdle(page);
    await waitForGroups(page, [["Today", ["Kettle notes"]]]);

    if (name === "phone") await page.getByRole("button", { name: "Conversations", exact: true }).click();
    const toArchived = page.getByRole("button", { name: "Archived conversations" });
    await toArchived.focus();
    await page.keyboard.press("Enter");
    const back = page.getByRole("button", { name: "Back to conversations" });
    await back.waitFor();
    assert.ok(await isFocused(back), "the keyboard stays on the switch");
    await page.getByRole("heading", { name: "Archived conversations", level: 2 }).waitFor();
    await waitForGroups(page, [["Today", ["Garden hose"]]]);
    const listed = page.locator("#conversation-list a[data-id]");
    assert.match(await listed.innerText(), /1 turn/);
    await screenshot(page, `chat-list-archived-${name}`);
    // The search box searches the archived ones here.
    const search = page.getByRole("searchbox", { name: "Search conversations" });
    assert.equal(await search.getAttribute("placeholder"), "Search archived conversations…");
    await search.fill("kettle");
    await page.getByText("No archived conversation matches “kettle”.").waitFor();
    await search.fill("hose");
    await waitForGroups(page, [["Today", ["Garden hose"]]]);

    // Opened from there and brought back: pinned as before.
    await listed.click();
    await openMenu();
    const unarchive = page.getByRole("button", { name: "Unarchive", exact: true });
    await unarchive.focus();
    await page.keyboard.press("Enter");
    await waitForStatus(page, "Conversation unarchived: it is back in the list, among the pinned ones.");
    assert.equal(await page.locator("#conversation-archived").isVisible(), false);
    if (name === "phone") await page.getByRole("button", { name: "Conversations", exact: true }).click();
    await page.getByText("No archived conversation matches “hose”.").waitFor();
    await page.getByRole("searchbox", { name: "Search conversations" }).fill("");
    await page.getByText("No archived conversations.").waitFor();
    await back.click();
    await waitForGroups(page, [["Pinned", ["Garden hose"]], ["Today", ["Kettle notes"]]]);
    assert.deepEqual(problems, []);
  });
}

for (const colorScheme of ["light", "dark"]) {
  test(`at phone width the top bar is one row of labelled 44 px controls, the account a menu (${colorScheme})`, async (t) => {
    deleteConversations();
    const id = storeConversation("ann", "A conversation with a title long enough to be cut at phone width");
    const { page, problems } = await signIn(t, "ann", { width: 390, height: 844 }, { colorScheme });
    await page.goto(`${suite.bor.url}?c=${id}`);
    const account = page.getByRole("button", { name: "ann, account menu" });
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
    assert.deepEqual(bar.controls.map(({ name }) => name), ["drawer-toggle", "h1", "new-chat", "account-toggle"]);
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
    await page.getByRole("button", { name: "Conversations", exact: true }).waitFor();
    await page.getByRole("button", { name: "New chat" }).waitFor();

    // The conversation's own bar is one row too, and the conversation has most of the
    // screen.
    const conversationBar = await page.locator("#conversation-bar").evaluate((node) => node.getBoundingClientRect().height);
    const actions = await page.getByRole("button", { name: "Conversation actions" }).evaluate((node) => node.getBoundingClientRect().height);
    assert.ok(conversationBar <= actions + 8, `the conversation's bar (${conversationBar} px) is one row`);
    const conversation = await page.locator("#conversation").evaluate((node) => node.getBoundingClientRect().height);
    assert.ok(conversation >= 844 / 2, `the conversation is ${conversation} of 844 px high`);

    // The account menu by keyboard: open, its items, Escape back to its button.
    await account.focus();
    await page.keyboard.press("Enter");
    assert.equal(await account.getAttribute("aria-expanded"), "true");
    await page.getByRole("link", { name: "ann, your account" }).waitFor();
    await page.getByRole("button", { name: "Sign out" }).waitFor();
    await screenshot(page, `chat-top-bar-phone-${colorScheme}`);
    await page.keyboard.press("Tab");
    await page.keyboard.press("Escape");
    assert.equal(await page.getByRole("button", { name: "Sign out" }).isVisible(), false);
    assert.ok(await isFocused(account), "the keyboard is back on the menu's button");
    assert.deepEqual(problems, []);
  });
}

test("at desktop width the account controls and the conversation's actions lie open in their bars", async (t) => {
  deleteConversations();
  const id = storeConversation("ann", "Kettle notes");
  const { page, problems } = await signIn(t, "ann", { width: 1280, height: 800 });
  await page.goto(`${suite.bor.url}?c=${id}`);
  await page.getByRole("button", { name: "Sign out" }).waitFor();
  assert.equal(await page.getByRole("button", { name: "ann, account menu" }).isVisible(), false);
  assert.equal(await page.getByRole("button", { name: "Conversation actions" }).isVisible(), false);
  for (const action of ["Rename", "Pin", "Archive", "Export", "Delete"]) {
    await page.getByRole("button", { name: action, exact: true }).waitFor();
  }
  const height = await page.locator("#top-bar").evaluate((node) => node.getBoundingClientRect().height);
  assert.ok(height < 70, `the top bar is one row (${height} px)`);
  await screenshot(page, "chat-top-bar-desktop");
  assert.deepEqual(problems, []);
});
