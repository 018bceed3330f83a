// The open conversation's bar: its title, and Rename (a dialog with the title to edit),
// Delete (a dialog that asks first) and Export (a menu of the Markdown and JSON
// downloads). Dialogs are modal `<dialog>`s: Escape or Cancel closes them, and the
// keyboard goes back to the button that opened them.

import { exportHref, turnsLabel } from "./conversation.js";
import { deleteConversation, renameConversation } from "./conversations-api.js";

/** The longest title the server takes (docs/PROTOCOL.md, "Conversations"). */
const MAX_TITLE_CHARS = 200;

export class ConversationActions {
  #ui;
  #handlers;
  /** The summary of the conversation the bar is for, or null when none is stored. */
  #summary = null;

  /**
   * `ui` holds the bar's elements and the two dialogs'; `handlers` are
   * `renamed(summary)` and `deleted(id)`, called once the server did it.
   */
  constructor(ui, handlers) {
    this.#ui = ui;
    this.#handlers = handlers;
    ui.rename.addEventListener("click", () => this.#openRename());
    ui.renameForm.addEventListener("submit", (event) => {
      event.preventDefault();
      this.#rename();
    });
    ui.renameCancel.addEventListener("click", () => ui.renameDialog.close());
    ui.renameDialog.addEventListener("close", () => ui.rename.focus());

    ui.delete.addEventListener("click", () => this.#openDelete());
    ui.deleteConfirm.addEventListener("click", () => this.#delete());
    ui.deleteCancel.addEventListener("click", () => ui.deleteDialog.close());
    ui.deleteDialog.addEventListener("close", () => {
      // After a delete the bar is gone: the caller has put the keyboard elsewhere.
      if (this.#summary !== null) ui.delete.focus();
    });

    ui.export.addEventListener("click", () => this.#setExportOpen(ui.exportMenu.hidden));
    ui.exportArea.addEventListener("keydown", (event) => {
      if (event.key === "Escape" && !ui.exportMenu.hidden) {
        event.stopPropagation();
        this.#setExportOpen(false);
        ui.export.focus();
      }
    });
    ui.exportArea.addEventListener("focusout", (event) => {
      if (!ui.exportArea.contains(event.relatedTarget)) this.#setExportOpen(false);
    });
    ui.exportMenu.addEventListener("click", (event) => {
      if (event.target.closest("a") !== null) this.#setExportOpen(false);
    });
  }

  /** Shows the bar for the stored conversation `summary` (`{id, title, turns}`), or
   *  hides it (null: a new chat, or a conversation the server does not hold yet). */
  show(summary) {
    this.#summary = summary;
    this.#ui.bar.hidden = summary === null;
    this.#setExportOpen(false);
    if (summary === null) return;
    this.#ui.title.textContent = summary.title;
    this.#ui.exportMarkdown.href = exportHref(summary.id, "markdown");
    this.#ui.exportJson.href = exportHref(summary.id, "json");
  }

  #setExportOpen(open) {
    this.#ui.exportMenu.hidden = !open;
    this.#ui.export.setAttribute("aria-expanded", String(open));
  }

  #openRename() {
    if (this.#summary === null) return;
    this.#ui.renameInput.value = this.#summary.title;
    this.#showError(this.#ui.renameError, "");
    this.#ui.renameDialog.showModal();
    this.#ui.renameInput.select();
  }

  async #rename() {
    const title = this.#ui.renameInput.value.trim();
    if (title === "" || [...title].length > MAX_TITLE_CHARS) {
      this.#showError(this.#ui.renameError, `A title has 1 to ${MAX_TITLE_CHARS} characters.`);
      this.#ui.renameInput.focus();
      return;
    }
    const { id } = this.#summary;
    await this.#whileBusy(this.#ui.renameDialog, this.#ui.renameError, async () => {
      const summary = await renameConversation(id, title);
      this.#ui.renameDialog.close();
      this.#handlers.renamed(summary);
    });
  }

  #openDelete() {
    if (this.#summary === null) return;
    const { title, turns } = this.#summary;
    this.#ui.deleteText.textContent =
      `“${title}” and its ${turnsLabel(turns)} will be removed from the server for good.`;
    this.#showError(this.#ui.deleteError, "");
    this.#ui.deleteDialog.showModal();
    // The safe choice has the keyboard first.
    this.#ui.deleteCancel.focus();
  }

  async #delete() {
    const { id } = this.#summary;
    await this.#whileBusy(this.#ui.deleteDialog, this.#ui.deleteError, async () => {
      try {
        await deleteConversation(id);
      } catch (error) {
        // Already gone (another tab deleted it): what was asked for is done.
        if (error.status !== 404) throw error;
      }
      this.#summary = null;
      this.#ui.deleteDialog.close();
      this.#handlers.deleted(id);
    });
  }

  /** Runs `action` with the dialog's buttons disabled; a failure is shown in the
   *  dialog, which stays open. */
  async #whileBusy(dialog, errorNode, action) {
    const buttons = dialog.querySelectorAll("button");
    for (const button of buttons) button.disabled = true;
    try {
      await action();
    } catch (error) {
      this.#showError(errorNode, error.message);
    } finally {
      for (const button of buttons) button.disabled = false;
    }
  }

  #showError(node, text) {
    node.textContent = text;
    node.hidden = text === "";
  }
}
