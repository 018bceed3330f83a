// The documents page (/documents): every document a person may read, by collection,
// each title opening its passage page; a filter narrows the list by title or summary.
// Titles, summaries and descriptions are document content: they only go in as text.

import { unlessSignedOut } from "./account.js";
import { mountAccountMenu } from "./account-menu.js";
import { element } from "./dom.js";

const added = new Intl.DateTimeFormat(undefined, { dateStyle: "medium" });

/** `GET path` as JSON; a session that has ended goes to the sign-in page and back. */
async function getJson(path) {
  const response = unlessSignedOut(
    await fetch(path, { credentials: "same-origin", headers: { Accept: "application/json" } }),
  );
  if (!response.ok) throw new Error(`bor answered ${response.status}: reload the page to try again.`);
  return response.json();
}

function plural(count, one, many) {
  return `${count} ${count === 1 ? one : many}`;
}

/** One collection's section: its name, description and documents. */
function collectionSection(collection, documents, index) {
  const headingId = `collection-${index}`;
  const section = element("section", { class: "panel library-collection", "aria-labelledby": headingId });
  const heading = element("h2", { id: headingId }, collection.name);
  section.append(heading);
  if (collection.description) section.append(element("p", { class: "meta" }, collection.description));
  const count = element("p", { class: "meta library-count" });
  const list = element("ul", { class: "people library-list", "aria-labelledby": headingId });
  const items = documents.map((doc) => {
    const item = element("li", { class: "person library-item" });
    const text = element("div", { class: "key-text" });
    text.append(
      element("a", { class: "person-name", href: `/documents/${encodeURIComponent(doc.id)}` }, String(doc.title ?? "Untitled")),
      element("span", { class: "meta key-facts" }, `added ${added.format(new Date(doc.created_at))} · ${plural(doc.chunks, "passage", "passages")}`),
    );
    if (typeof doc.summary === "string" && doc.summary.trim() !== "") {
      text.append(element("span", { class: "library-summary" }, doc.summary));
    }
    item.append(text);
    return { item, words: `${doc.title ?? ""}\n${doc.summary ?? ""}`.toLowerCase() };
  });
  list.append(...items.map(({ item }) => item));
  section.append(count, list);
  return {
    section,
    /** Shows the documents matching `filter`; how many. */
    show(filter) {
      let shown = 0;
      for (const { item, words } of items) {
        item.hidden = filter !== "" && !words.includes(filter);
        if (!item.hidden) shown += 1;
      }
      count.textContent =
        filter === "" ? plural(items.length, "document", "documents") : `${shown} of ${items.length} shown`;
      section.hidden = filter !== "" && shown === 0;
      return shown;
    },
  };
}

async function main() {
  const banner = document.getElementById("page-message");
  const status = document.getElementById("library-status");
  const container = document.getElementById("library-collections");
  const filter = document.getElementById("library-filter");
  const menu = mountAccountMenu(document.getElementById("account"), { adminLink: true });
  let collections;
  let documents;
  try {
    [{ collections }, documents] = await Promise.all([getJson("/api/collections"), getJson("/api/documents")]);
  } catch (error) {
    banner.textContent = error.message;
    banner.hidden = false;
    return;
  }
  await menu;
  const byCollection = new Map(collections.map((collection) => [collection.name, []]));
  for (const doc of documents) byCollection.get(doc.collection)?.push(doc);
  for (const list of byCollection.values()) {
    list.sort((a, b) => String(a.title).localeCompare(String(b.title)));
  }
  const sections = collections.map((collection, index) =>
    collectionSection(collection, byCollection.get(collection.name) ?? [], index),
  );
  container.replaceChildren(...sections.map(({ section }) => section));
  const total = documents.length;
  const refresh = () => {
    const words = filter.value.trim().toLowerCase();
    const shown = sections.reduce((sum, section) => sum + section.show(words), 0);
    status.textContent =
      words === ""
        ? `${plural(total, "document", "documents")} in ${plural(collections.length, "collection", "collections")}.`
        : `${plural(shown, "document matches", "documents match")} “${filter.value.trim()}”.`;
  };
  filter.addEventListener("input", refresh);
  refresh();
}

main();
