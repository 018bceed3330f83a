// Building DOM nodes without ever parsing text as HTML.

/** A new `tag` element with `attributes` and, when given, `text` as its text content. */
export function element(tag, attributes = {}, text) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) node.setAttribute(name, value);
  if (text !== undefined) node.textContent = text;
  return node;
}
