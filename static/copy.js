// Copying from an answer: the whole answer (its Markdown, as the model wrote it) from a
// button under it, and each code block from a button on the block. The button says
// "Copied" for a moment and a polite live region says it to screen readers; a
// browser that refuses the clipboard gets the text selected instead, with words.

import { element } from "./dom.js";

const COPIED_FOR_MS = 2000;

/** Copies `text`; selects `fallback`'s text when the clipboard is refused. Resolves
 *  with what to say. */
export async function copyText(text, fallback) {
  try {
    await navigator.clipboard.writeText(text);
    return "Copied.";
  } catch {
    window.getSelection()?.selectAllChildren(fallback);
    return "Copying was refused: the text is selected, copy it with the keyboard.";
  }
}

/** A "Copy …" button whose click copies `text()`, saying so in `status`. */
function copyButton(label, text, fallback, status, className) {
  const button = element("button", { type: "button", class: className }, label);
  let timer;
  button.addEventListener("click", async () => {
    const said = await copyText(text(), fallback());
    status.textContent = said;
    button.textContent = said === "Copied." ? "Copied" : label;
    clearTimeout(timer);
    timer = setTimeout(() => {
      button.textContent = label;
      status.textContent = "";
    }, COPIED_FOR_MS);
  });
  return button;
}

/** The "Copy answer" control of one answer: `root` (hidden until `show`). */
export class AnswerCopy {
  constructor(body) {
    this.text = "";
    this.root = element("div", { class: "answer-copy", hidden: "" });
    this.status = element("span", { class: "visually-hidden", role: "status" });
    this.root.append(
      copyButton("Copy answer", () => this.text, () => body, this.status, "quiet"),
      this.status,
    );
  }

  /** Offers the copy of `text` once the answer is finished (and has words). */
  show(text, finished) {
    this.text = text;
    this.root.hidden = !finished || text.trim() === "";
  }
}

/** Puts a "Copy code" button on each code block in `container` (after rendering). */
export function addCodeCopyButtons(container, status) {
  for (const pre of container.querySelectorAll("pre")) {
    const code = pre.querySelector("code") ?? pre;
    // Without the line end Markdown renderers put after a block's last line.
    const text = () => code.textContent.replace(/\n$/, "");
    const button = copyButton("Copy code", text, () => code, status, "code-copy quiet");
    pre.classList.add("has-copy");
    pre.prepend(button);
  }
}
