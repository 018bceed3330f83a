// Building DOM nodes without ever parsing text as HTML.

/** A new `tag` element with `attributes` and, when given, `text` as its text content. */
export function element(tag, attributes = {}, text) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) node.setAttribute(name, value);
  if (text !== undefined) node.textContent = text;
  return node;
}

/** Lets `form` be used: a page's forms start disabled in its HTML so that nothing typed
 *  before their script is ready is overwritten or sent as a plain GET. */
export function enableForm(form) {
  for (const control of form.elements) control.disabled = false;
}
