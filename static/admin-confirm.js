// The admin page's confirmation before something is deleted: a modal dialog (the
// page's one `<dialog>`) that names what goes with it, "Cancel" focused first; Escape
// or Cancel keeps everything, and the focus goes back where it was.

/**
 * Asks whether to go ahead. `title` is the question ("Delete the collection hr?"),
 * `losses` the sentences saying what is lost with it, `action` the confirming button's
 * words ("Delete hr"). Resolves with true when confirmed.
 */
export function confirmLoss({ title, losses, action }) {
  const dialog = document.getElementById("confirm-dialog");
  const opener = document.activeElement;
  document.getElementById("confirm-title").textContent = title;
  document.getElementById("confirm-loss").replaceChildren(
    ...losses.map((loss) => {
      const line = document.createElement("p");
      line.textContent = loss;
      return line;
    }),
  );
  document.getElementById("confirm-yes").textContent = action;
  dialog.returnValue = "";
  return new Promise((resolve) => {
    dialog.addEventListener(
      "close",
      () => {
        if (opener instanceof HTMLElement && opener.isConnected) opener.focus();
        resolve(dialog.returnValue === "confirm");
      },
      { once: true },
    );
    dialog.showModal();
    document.getElementById("confirm-no").focus();
  });
}
