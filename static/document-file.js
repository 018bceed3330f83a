// Which chosen or dropped files the admin page sends to `POST /api/admin/documents`:
// the kinds the server reads (docs/PROTOCOL.md, "Documents and summaries"), told by the
// file's extension, and no more bytes than the server takes. The server reads the file
// itself; the page only spares a request that is bound to be refused.

/** The kinds read, by extension (lower case, without the dot), as a person names them. */
const KINDS = {
  md: "Markdown",
  markdown: "Markdown",
  txt: "Text",
  text: "Text",
  pdf: "PDF",
  html: "HTML",
  htm: "HTML",
  docx: "Word",
  png: "PNG image",
  jpg: "JPEG image",
  jpeg: "JPEG image",
  tif: "TIFF image",
  tiff: "TIFF image",
  webp: "WebP image",
};

/** The extensions read, as the file picker's `accept` lists them. */
export const EXTENSIONS = Object.keys(KINDS);

/** Media types that make a file without an extension text. */
const TEXT_TYPES = { "text/markdown": "Markdown", "text/x-markdown": "Markdown", "text/plain": "Text" };

/**
 * The file's kind (`"Markdown"`, `"Text"`, `"PDF"`, `"HTML"`, `"Word"`, `"PNG image"`…) by its
 * extension, or for a name without one by a text media type; `null` for anything else.
 */
export function fileKind({ name, type }) {
  const extension = extensionOf(name);
  if (extension === "") return TEXT_TYPES[type] ?? null;
  return Object.hasOwn(KINDS, extension) ? KINDS[extension] : null;
}

/**
 * Why `file` (a `File`) is not sent, as a sentence; `null` when it may go.
 * `maxBytes` is the server's bound (`BOR_MAX_UPLOAD_BYTES`), `null` while unknown.
 */
export function refusal(file, maxBytes) {
  if (fileKind(file) === null) {
    return "Only Markdown, text, PDF, HTML, Word (.docx) and image (PNG, JPEG, TIFF, WebP) files can be uploaded.";
  }
  if (file.size === 0) return "The file is empty.";
  if (maxBytes !== null && file.size > maxBytes) {
    return `Larger than ${formatBytes(maxBytes)}, the most the server takes (BOR_MAX_UPLOAD_BYTES).`;
  }
  return null;
}

/** `33554432` → `"32 MiB"`, `1536` → `"1.5 KiB"`, `900` → `"900 bytes"`; the number
 *  and its unit joined by a no-break space, so that a line never parts them. */
export function formatBytes(bytes) {
  const units = [
    [1024 ** 3, "GiB"],
    [1024 ** 2, "MiB"],
    [1024, "KiB"],
  ];
  for (const [size, unit] of units) {
    if (bytes >= size) return `${Number((bytes / size).toFixed(1))}\u00a0${unit}`;
  }
  return bytes === 1 ? "1\u00a0byte" : `${bytes}\u00a0bytes`;
}

/** `Notes.v2.MD` → `md`; a dot file (`.md`) has no extension. */
function extensionOf(name) {
  const dot = name.lastIndexOf(".");
  return dot > 0 ? name.slice(dot + 1).toLowerCase() : "";
}

/**
 * How an uploaded document's pages were read, from its entry in the upload report
 * (`ocr_pages`, `skipped_pages: [{page, reason}]`): "2 pages read by OCR, 1 skipped (page
 * 3: …)"; `""` when every page was read from its text layer.
 */
export function pagesRead({ ocr_pages: ocr = 0, skipped_pages: skipped = [] }) {
  if (ocr === 0 && skipped.length === 0) return "";
  const read = `${ocr} ${ocr === 1 ? "page" : "pages"} read by OCR`;
  if (skipped.length === 0) return read;
  const reasons = skipped.map(({ page, reason }) => `page ${page}: ${reason}`).join("; ");
  return `${read}, ${skipped.length} skipped (${reasons})`;
}
