// The theme a person picked on the account page (light, dark, or the system's when
// none), set on the page before it is drawn: a classic script in each page's head, so
// that no page flashes in the other palette. account-page.js writes the choice.
(function applyTheme() {
  let theme = null;
  try {
    theme = window.localStorage.getItem("bor-theme");
  } catch {
    // Storage refused (a private window's policy): the system's theme.
  }
  if (theme === "light" || theme === "dark") {
    document.documentElement.dataset.theme = theme;
  }
})();
