// The side panel (dashboard.md G9): a click or Enter on a block, a tray chip or a cell
// loads its panel into #panel with htmx; Esc or ✕ empties it and gives focus back.
// live.js announces Enter and Esc on the grid as "diego:open" / "diego:close"; this file
// also listens to the keys itself, so one selection made twice at once loads once.
(function () {
  "use strict";
  const SELECTABLE = ".block, .chip, .cell";
  let opener = null;
  let last = { url: "", at: 0 };

  function urlFor(data) {
    const enc = encodeURIComponent;
    if (data.instance) {
      const dot = data.instance.lastIndexOf(".");
      if (dot > 0) return `/panel/instance/${enc(data.instance.slice(0, dot))}/${enc(data.instance.slice(dot + 1))}/`;
    }
    if (data.task) return `/panel/task/${enc(data.task)}/`;
    if (data.cellId) return `/panel/cell/${enc(data.cellId)}/`;
    return null;
  }

  function open(data, from) {
    const url = urlFor(data || {});
    if (!url || !document.getElementById("panel") || !window.htmx) return;
    const now = Date.now();
    if (url === last.url && now - last.at < 300) return;
    last = { url, at: now };
    opener = from || null;
    window.htmx.ajax("GET", url, { target: "#panel", swap: "innerHTML" });
  }

  function close() {
    const panel = document.getElementById("panel");
    if (!panel || !panel.firstElementChild) return;
    panel.replaceChildren();
    last = { url: "", at: 0 };
    if (opener && document.contains(opener)) opener.focus();
  }

  function selectable(target) {
    const el = target && target.closest ? target.closest(SELECTABLE) : null;
    return el && el.closest("#main") && !el.closest("a, button, form") ? el : null;
  }

  document.addEventListener("click", (event) => {
    if (event.target.closest("[data-panel-close]")) { close(); return; }
    const el = selectable(event.target);
    if (el) open(el.dataset, el);
  });
  document.addEventListener("keydown", (event) => {
    if (event.key === "Escape") { close(); return; }
    if (event.key !== "Enter") return;
    const el = selectable(event.target);
    if (el && el === event.target) open(el.dataset, el);
  });
  document.addEventListener("diego:open", (event) => open(event.detail, document.activeElement));
  document.addEventListener("diego:close", close);

  // A 4xx panel (unknown item, refused action) is a message for the reader: show it.
  document.addEventListener("htmx:beforeSwap", (event) => {
    const target = event.detail.target;
    const status = event.detail.xhr.status;
    if (target && target.id === "panel" && status >= 400 && status < 500) {
      event.detail.shouldSwap = true;
      event.detail.isError = false;
    }
  });
})();
