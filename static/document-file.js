// A chosen file as a document for `POST /api/admin/documents`: which files qualify
// (Markdown and plain text), and its title (the first `# heading` of a Markdown file,
// else the file name without its extension).

/** The server takes a document body of at most 4 MiB. */
export const MAX_FILE_BYTES = 4 * 1024 * 1024;

const MARKDOWN_EXTENSIONS = ["md", "markdown", "mdown", "mkd"];
const TEXT_EXTENSIONS = ["txt", "text"];
const MARKDOWN_TYPES = ["text/markdown", "text/x-markdown"];

/** Why a file cannot become a document; its message is shown as it is. */
export class DocumentFileError extends Error {}

/**
 * `"markdown"` or `"text"` by the file's extension (or, without a known one, its
 * media type); `null` for anything else.
 */
export function fileKind({ name, type }) {
  const extension = extensionOf(name);
  if (MARKDOWN_EXTENSIONS.includes(extension)) return "markdown";
  if (TEXT_EXTENSIONS.includes(extension)) return "text";
  if (MARKDOWN_TYPES.includes(type)) return "markdown";
  if (type === "text/plain") return "text";
  return null;
}

/** `fileKind(file)`, or a `DocumentFileError` for a file of no known kind. */
export function documentKind(file) {
  const kind = fileKind(file);
  if (kind === null) {
    throw new DocumentFileError(
      `“${file.name}” is not a Markdown or text file. Choose a .md or .txt file.`,
    );
  }
  return kind;
}

/**
 * Reads `file` (a `File`) into `{title, content}`; throws `DocumentFileError` for a
 * file that is not Markdown or text, too large, empty, or binary.
 */
export async function readDocumentFile(file) {
  const kind = documentKind(file);
  if (file.size > MAX_FILE_BYTES) {
    throw new DocumentFileError(`“${file.name}” is larger than 4 MiB, the most one document may be.`);
  }
  const content = stripByteOrderMark(await file.text());
  if (content.trim() === "") throw new DocumentFileError(`“${file.name}” is empty.`);
  if (content.includes("\u0000")) {
    throw new DocumentFileError(`“${file.name}” holds binary data, not text.`);
  }
  const heading = kind === "markdown" ? firstHeading(content) : null;
  return { title: heading ?? titleFromName(file.name), content };
}

/** The text of the first level-one ATX heading (`# Title`) outside code fences. */
export function firstHeading(markdown) {
  let fence = null;
  for (const line of markdown.split(/\r\n|\r|\n/)) {
    if (fence !== null) {
      const closing = line.match(/^ {0,3}(`{3,}|~{3,})[ \t]*$/)?.[1];
      if (closing && closing[0] === fence[0] && closing.length >= fence.length) fence = null;
      continue;
    }
    fence = line.match(/^ {0,3}(`{3,}|~{3,})/)?.[1] ?? null;
    if (fence !== null) continue;
    const heading = line.match(/^ {0,3}#[ \t]+(.*?)(?:[ \t]+#+)?[ \t]*$/);
    if (heading && heading[1].trim() !== "") return heading[1].trim();
  }
  return null;
}

/** `notes.v2.md` → `notes.v2`; a name that is all extension stays as it is. */
export function titleFromName(name) {
  const dot = name.lastIndexOf(".");
  const stem = dot > 0 ? name.slice(0, dot) : name;
  return stem.trim() === "" ? name : stem.trim();
}

function extensionOf(name) {
  const dot = name.lastIndexOf(".");
  return dot > 0 ? name.slice(dot + 1).toLowerCase() : "";
}

function stripByteOrderMark(text) {
  return text.startsWith("\uFEFF") ? text.slice(1) : text;
}
