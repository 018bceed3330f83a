// What the passage page reads and shows, without the DOM: which document and chunk its
// address names, how a document's kind and date read, and where consecutive chunks
// repeat each other's text.

/** Names of the kinds of document bor reads (docs/PROTOCOL.md, "Documents and
 *  summaries"), by media type. */
const KINDS = {
  "text/markdown": "Markdown",
  "text/plain": "Plain text",
  "application/pdf": "PDF",
  "text/html": "Web page",
  "application/vnd.openxmlformats-officedocument.wordprocessingml.document": "Word document",
};

/**
 * The document and chunk that the page's address names: `/documents/{id}` and
 * `#chunk-{chunk_id}`. Either is `null` when the address does not name one.
 */
export function passageTarget(pathname, hash) {
  const documentId = /^\/documents\/([0-9]+)\/?$/.exec(pathname)?.[1] ?? null;
  const chunkId = /^#chunk-([0-9]+)$/.exec(hash)?.[1] ?? null;
  return { documentId, chunkId };
}

/** A person's name for a document's kind; an unknown media type is shown as it is. */
export function kindLabel(contentType) {
  if (typeof contentType !== "string") return "";
  const type = contentType.split(";")[0].trim().toLowerCase();
  return KINDS[type] ?? type;
}

/** The day a timestamp falls on, in the reader's language; "" when it is not one. */
export function formatDay(timestamp, locale) {
  const date = new Date(typeof timestamp === "string" ? timestamp : Number.NaN);
  if (Number.isNaN(date.getTime())) return "";
  return date.toLocaleDateString(locale, { year: "numeric", month: "long", day: "numeric" });
}

/** A document's source when it is a web page's address (http or https), else "". */
export function webAddress(source) {
  if (typeof source !== "string") return "";
  const text = source.trim();
  try {
    const url = new URL(text);
    return url.protocol === "http:" || url.protocol === "https:" ? text : "";
  } catch {
    return "";
  }
}

/** The name of the file a document was read from, without the folders where the server
 *  keeps it (which are no reader's business). */
function fileName(source) {
  return source.split(/[\\/]/).at(-1);
}

/**
 * The facts of a document on one line: kind, file name, day of import, number of
 * passages. A web page's address is left out: the page links it on a line of its own.
 */
export function documentFacts(doc, locale) {
  const day = formatDay(doc.created_at, locale);
  const count = Array.isArray(doc.chunks) ? doc.chunks.length : 0;
  const source = typeof doc.source === "string" ? doc.source.trim() : "";
  return [
    kindLabel(doc.content_type),
    webAddress(source) === "" ? fileName(source) : "",
    day === "" ? "" : `added ${day}`,
    `${count} ${count === 1 ? "passage" : "passages"}`,
  ]
    .filter((fact) => fact !== "")
    .join(" · ");
}

/**
 * How many characters at the start of `next` repeat the end of `previous`. Chunks of
 * one section overlap by up to `BOR_CHUNK_OVERLAP` characters: the next one starts
 * again at a word of the previous one, which ended where whitespace follows. So the
 * longest repeat between whitespace in both is taken; 0 when there is none. The page
 * only greys the repeat out, so a repeat found by chance hides nothing.
 */
export function overlapLength(previous, next) {
  for (let start = 1; start < previous.length; start += 1) {
    if (previous[start] !== next[0] || !/\s/.test(previous[start - 1])) continue;
    const repeat = previous.length - start;
    const followed = /\s/.test(next[repeat] ?? "");
    if (followed && next.startsWith(previous.slice(start))) return repeat;
  }
  return 0;
}
