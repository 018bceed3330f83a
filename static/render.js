// Turns Markdown (the model's answers, the documents' passages) into safe HTML: `marked`
// renders, DOMPurify sanitises.
// Both are vendored classic scripts (static/vendor/) that define `marked` and
// `DOMPurify` on the window before this module runs.

const { marked, DOMPurify } = globalThis;

/** Tags never allowed in an answer, on top of DOMPurify's defaults. Images are out so
 *  that a reply cannot make the browser fetch a URL it chose (a data-leak channel). */
const FORBIDDEN_TAGS = [
  "img", "picture", "source", "video", "audio", "track", "style", "form", "input",
  "button", "textarea", "select", "option", "dialog", "iframe", "frame", "object",
  "embed", "link", "meta", "base",
];

const renderer = {
  // A Markdown image becomes a plain link to it: nothing loads until the reader asks.
  image({ href, text }) {
    const label = text || href;
    return `<a href="${escapeText(href ?? "")}">${escapeText(`Image: ${label}`)}</a>`;
  },
};

/** Answers: a model that ends a line means it. */
const answerMarkdown = new marked.Marked({ gfm: true, breaks: true, renderer });

/** Documents: a line wrapped by a PDF or an editor stays in its paragraph, as CommonMark
 *  reads it. */
const documentMarkdown = new marked.Marked({ gfm: true, breaks: false, renderer });

DOMPurify.addHook("afterSanitizeAttributes", (node) => {
  if (node.tagName === "A" && node.hasAttribute("href")) {
    node.setAttribute("target", "_blank");
    node.setAttribute("rel", "noopener noreferrer");
  }
});

/** The sanitised HTML of a Markdown answer. */
export function renderMarkdown(text) {
  return sanitise(answerMarkdown.parse(text, { async: false }));
}

/** The sanitised HTML of a document's Markdown text (a passage). */
export function renderDocumentMarkdown(text) {
  return sanitise(documentMarkdown.parse(text, { async: false }));
}

function sanitise(html) {
  return DOMPurify.sanitize(html, {
    USE_PROFILES: { html: true },
    FORBID_TAGS: FORBIDDEN_TAGS,
    FORBID_ATTR: ["style", "srcset", "action", "formaction"],
  });
}

/** Replaces the content of `element` with the rendered answer. */
export function renderInto(element, text) {
  element.innerHTML = renderMarkdown(text);
}

function escapeText(text) {
  return text.replace(/[&<>"']/g, (char) => `&#${char.charCodeAt(0)};`);
}
