// The open conversation's bar: its title, and Rename (a dialog with the title to edit),
// Pin or Unpin, Archive or Unarchive, Export (a menu of the Markdown and JSON
// downloads) and Delete (a dialog that asks first); at phone width they are a menu of
// their own. Dialogs are modal `<dialog>`s: Escape or Cancel closes them, and the
// keyboard goes back to the button that opened them (at phone width, to the menu's
// button).

import { exportHref, turnsLabel } from "./conversation.js";
import { changeConversation, deleteConversation } from "./conversations-api.js";
import { Disclosure } from "./disclosure.js";

/** The longest title the server takes (docs/PROTOCOL.md, "Conversations"). */
const MAX_TITLE_CHARS = 200;

export class ConversationActions {
  #ui;
  #handlers;
  /** The summary of the conversation the bar is for, or null when none is stored. */
  #summary = null;
  #actionsMenu;
  #exportMenu;
  /** Whether a pin or an archive is on its way to the server (a second waits). */
  #changing = false;

  /**
   * `ui` holds the bar's elements and the two dialogs'; `handlers` are
   * `renamed(summary)`, `changed(summary, changes)` (pinned, unpinned, archived or
   * unarchived) and `deleted(id)`, called once the server did it, and `failed(message)`
   * when a pin or an archive could not be done.
   */
  constructor(ui, handlers) {
    this.#ui = ui;
    this.#handlers = handlers;
    this.#actionsMenu = new Disclosure({ toggle: ui.actionsToggle, area: ui.actionsArea, menu: ui.actionsMenu });
    this.#exportMenu = new Disclosure({ toggle: ui.export, area: ui.exportArea, menu: ui.exportMenu });
    ui.rename.addEventListener("click", () => this.#openRename());
    ui.renameForm.addEventListener("submit", (event) => {
      event.preventDefault();
      this.#rename();
    });
    ui.renameCancel.addEventListener("click", () => ui.renameDialog.close());
    ui.renameDialog.addEventListener("close", () => this.#focusBack(ui.rename));
    ui.pin.addEventListener("click", () => this.#change({ pinned: !this.#summary?.pinned }, ui.pin));
    ui.archive.addEventListener("click", () => this.#change({ archived: !this.#summary?.archived }, ui.archive));

    ui.delete.addEventListener("click", () => this.#openDelete());
    ui.deleteConfirm.addEventListener("click", () => this.#delete());
    ui.deleteCancel.addEventListener("click", () => ui.deleteDialog.close());
    ui.deleteDialog.addEventListener("close", () => {
      // After a delete the bar is gone: the caller has put the keyboard elsewhere.
      if (this.#summary !== null) this.#focusBack(ui.delete);
    });
  }

  /** Shows the bar for the stored conversation `summary` (`{id, title, turns, pinned,
   *  archived}`), or hides it (null: a new chat, or a conversation the server does not
   *  hold yet). */
  show(summary) {
    this.#summary = summary;
    this.#ui.bar.hidden = summary === null;
    this.#exportMenu.setOpen(false);
    this.#actionsMenu.setOpen(false);
    if (summary === null) return;
    this.#ui.title.textContent = summary.title;
    this.#ui.archived.hidden = summary.archived !== true;
    this.#ui.pin.textContent = summary.pinned ? "Unpin" : "Pin";
    this.#ui.archive.textContent = summary.archived ? "Unarchive" : "Archive";
    this.#ui.exportMarkdown.href = exportHref(summary.id, "markdown");
    this.#ui.exportJson.href = exportHref(summary.id, "json");
  }

  /** Pins, unpins, archives or unarchives the conversation; `button` keeps the keyboard
   *  (at phone width the menu's button takes it), its new label saying what it does
   *  now, and the status line says what was done (the caller's `changed`). */
  async #change(changes, button) {
    if (this.#summary === null || this.#changing) return;
    const { id } = this.#summary;
    this.#changing = true;
    try {
      const summary = await changeConversation(id, changes);
      this.#handlers.changed(summary, changes);
    } catch (error) {
      this.#handlers.failed(error.message);
    } finally {
      this.#changing = false;
      this.#focusBack(button);
    }
  }

  /** Puts the keyboard back on `button`, or on the menu's button when the menu it is
   *  in is closed (phone width). */
  #focusBack(button) {
    (button.checkVisibility() ? button : this.#ui.actionsToggle).focus();
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
      const summary = await changeConversation(id, { title });
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
