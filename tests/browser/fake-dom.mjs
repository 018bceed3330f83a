// Just enough of the DOM for the page modules that walk and build nodes (elements with
// attributes and children, text nodes, `replaceWith`), so they run in Node; `html()`
// writes a tree out for the tests to compare.

class FakeNode {
  parentNode = null;

  /** Puts `nodes` (strings become text nodes) where this node is. */
  replaceWith(...nodes) {
    const parent = this.parentNode;
    const at = parent.childNodes.indexOf(this);
    const replacements = nodes.map(asNode);
    for (const node of replacements) node.parentNode = parent;
    parent.childNodes.splice(at, 1, ...replacements);
    this.parentNode = null;
  }
}

class FakeText extends FakeNode {
  nodeType = 3;
  nodeName = "#text";

  constructor(data) {
    super();
    this.data = String(data);
  }

  get textContent() {
    return this.data;
  }
}

class FakeElement extends FakeNode {
  nodeType = 1;
  childNodes = [];
  attributes = new Map();

  constructor(tag) {
    super();
    this.nodeName = tag.toUpperCase();
  }

  setAttribute(name, value) {
    this.attributes.set(name, String(value));
  }

  getAttribute(name) {
    return this.attributes.get(name) ?? null;
  }

  append(...nodes) {
    for (const node of nodes.map(asNode)) {
      node.parentNode = this;
      this.childNodes.push(node);
    }
  }

  get textContent() {
    return this.childNodes.map((node) => node.textContent).join("");
  }

  set textContent(text) {
    this.childNodes = [];
    this.append(String(text));
  }
}

function asNode(node) {
  return typeof node === "string" ? new FakeText(node) : node;
}

export const fakeDocument = {
  createElement: (tag) => new FakeElement(tag),
  createTextNode: (data) => new FakeText(data),
};

/** An element `tag` with `attributes` and `children` (strings become text nodes). */
export function h(tag, attributes = {}, ...children) {
  const node = new FakeElement(tag);
  for (const [name, value] of Object.entries(attributes)) node.setAttribute(name, value);
  node.append(...children);
  return node;
}

/** The tree as HTML (attributes in the order set, text unescaped). */
export function html(node) {
  if (node.nodeType === 3) return node.data;
  const tag = node.nodeName.toLowerCase();
  const attributes = [...node.attributes].map(([name, value]) => ` ${name}="${value}"`).join("");
  return `<${tag}${attributes}>${node.childNodes.map(html).join("")}</${tag}>`;
}
