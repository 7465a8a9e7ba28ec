// The reader's keyboard: j/k next/previous card (on a card's page: the next/previous
// page), o or Enter open it, m toggle read, s toggle star, n the next folder (or source)
// with unread cards, / search, ? the list of keys.
// Each mark is the card's own form, sent in place; without this script the forms work.
(() => {
  "use strict";
  const cards = () => Array.from(document.querySelectorAll("li.card"));
  let current = -1;

  function select(index) {
    const all = cards();
    if (!all.length) return;
    current = Math.max(0, Math.min(all.length - 1, index));
    all.forEach((card, i) => card.classList.toggle("current", i === current));
    all[current].scrollIntoView({ block: "nearest" });
    const link = all[current].querySelector("a.card-link");
    if (link) link.focus({ preventScroll: true });
  }

  // Sends a card's form; on success flips it to its opposite (read ↔ unread, star ↔ unstar).
  async function toggle(card, kind) {
    const button = card && card.querySelector(`button[data-mark=${kind}]`);
    if (!button) return;
    const form = button.form;
    const response = await fetch(form.action, {
      method: "POST", body: new URLSearchParams(new FormData(form)),
      headers: { Accept: "application/json" }, credentials: "same-origin",
    });
    if (!response.ok) { form.submit(); return; }
    const answer = await response.json();
    const on = kind === "read" ? /\/read$/.test(form.action) : /\/star$/.test(form.action);
    const [yes, no] = kind === "read" ? ["read", "unread"] : ["star", "unstar"];
    form.action = form.action.replace(new RegExp(`/${on ? yes : no}$`), `/${on ? no : yes}`);
    card.classList.toggle(kind === "read" ? "read" : "starred", on);
    button.textContent = kind === "read" ? (on ? "Mark unread" : "Mark read") : (on ? "Unstar" : "Star");
    if (kind === "star") button.setAttribute("aria-pressed", String(on));
    const count = document.querySelector("[data-unread]");
    if (count && typeof answer.unread === "number") count.textContent = answer.unread;
  }

  // The side list lists only folders and sources with unread cards: the next one after
  // the one shown (the first when none is), its folder's "All of" link where there are folders.
  function nextWithUnread() {
    const groups = Array.from(document.querySelectorAll(".source-views details.group"));
    const targets = groups.length
      ? groups.map((group) => group.querySelector("ul a"))
      : Array.from(document.querySelectorAll(".source-views li a"));
    const here = targets.findIndex((link, i) => link && (link.href === location.href
      || (groups.length ? groups[i].querySelector("[aria-current]") : link.hasAttribute("aria-current"))));
    const next = targets[(here + 1) % targets.length];
    if (next) next.click();
  }

  function help() {
    let dialog = document.getElementById("keys");
    if (!dialog) {
      dialog = document.createElement("dialog");
      dialog.id = "keys";
      const rows = [["j / k", "next / previous card"], ["o or Enter", "open the card"], ["m", "mark read or unread"],
        ["s", "star or unstar"], ["n", "next folder or source with unread cards"], ["/", "search"], ["?", "these keys"]];
      const list = document.createElement("dl");
      for (const [key, what] of rows) {
        const dt = document.createElement("dt"); dt.textContent = key;
        const dd = document.createElement("dd"); dd.textContent = what;
        list.append(dt, dd);
      }
      const close = document.createElement("button");
      close.textContent = "Close";
      close.addEventListener("click", () => dialog.close());
      const heading = document.createElement("h2");
      heading.textContent = "Keyboard shortcuts";
      dialog.append(heading, list, close);
      document.body.append(dialog);
    }
    dialog.open ? dialog.close() : dialog.showModal();
  }

  document.addEventListener("keydown", (event) => {
    if (event.ctrlKey || event.metaKey || event.altKey) return;
    const target = event.target;
    if (target.closest && target.closest("input, select, textarea, button, dialog")) return;
    const list = cards().length > 0;
    const card = list ? cards()[current] : document.querySelector("main.detail article");
    const follow = (rel) => { const link = document.querySelector(`nav.neighbours a[rel=${rel}]`); if (link) link.click(); };
    switch (event.key) {
      case "j": list ? select(current + 1) : follow("next"); break;
      case "k": list ? select(current - 1) : follow("prev"); break;
      case "o": case "Enter": { const link = card && card.querySelector("a.card-link"); if (!link) return; link.click(); break; }
      case "m": toggle(card, "read"); break;
      case "s": toggle(card, "star"); break;
      case "n": nextWithUnread(); break;
      case "/": { const box = document.querySelector("form.search input[name=q]"); if (!box) return; box.focus(); break; }
      case "?": help(); break;
      default: return;
    }
    event.preventDefault();
  });
})();
