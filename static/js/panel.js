// The side panel (dashboard.md G9): a click or Enter on a block, a tray chip, a cell or a
// feed row loads its panel into #panel with htmx; Esc or ✕ empties it and gives focus
// back. The selection is in the URL (sel=, U1) so a reload, a link and a presenter's
// followers (C5) open the same panel.
// live.js announces Enter and Esc on the grid as "diego:open" / "diego:close"; this file
// also listens to the keys itself, so one selection made twice at once loads once.
(function () {
  "use strict";
  const SELECTABLE = ".block, .chip, .cell, .feed-row[data-open]";
  let opener = null;
  let focusInto = false;
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

  // sel=instance:web.2 | task:task-c | cell:cell-3
  function selOf(data) {
    if (data.instance) return `instance:${data.instance}`;
    if (data.task) return `task:${data.task}`;
    if (data.cellId) return `cell:${data.cellId}`;
    return "";
  }
  function dataOf(sel) {
    const colon = sel.indexOf(":");
    const kind = sel.slice(0, colon), value = sel.slice(colon + 1);
    if (colon < 1 || !value) return null;
    if (kind === "instance") return { instance: value };
    if (kind === "task") return { task: value };
    if (kind === "cell") return { cellId: value };
    return null;
  }
  function setSel(sel) {
    if (sel) document.body.dataset.sel = sel; else delete document.body.dataset.sel;
    const params = new URLSearchParams(location.search);
    if ((params.get("sel") || "") === sel) return;
    if (sel) params.set("sel", sel); else params.delete("sel");
    const query = params.toString();
    history.replaceState(history.state, "", location.pathname + (query ? `?${query}` : "") + location.hash);
    if (window.diegoPublishPresent) window.diegoPublishPresent();
  }

  function open(data, from, keyboard) {
    const url = urlFor(data || {});
    if (!url || !document.getElementById("panel") || !window.htmx) return;
    const now = Date.now();
    if (url === last.url && now - last.at < 300) return;
    last = { url, at: now };
    opener = from || null;
    focusInto = !!keyboard;
    setSel(selOf(data));
    // No answer is shown by the htmx:sendError handler; the rejection is not a page error.
    window.htmx.ajax("GET", url, { target: "#panel", swap: "innerHTML" }).catch(function () {});
  }

  function close() {
    const panel = document.getElementById("panel");
    setSel("");
    if (!panel || !panel.firstElementChild) return;
    panel.replaceChildren();
    last = { url: "", at: 0 };
    if (opener && !document.contains(opener)) opener = sameElement(opener);
    if (opener) opener.focus();
  }

  // The element that opened the panel may have been swapped by a live frame since (its
  // cell re-rendered): focus goes back to the one drawn in its place, found by its hooks.
  function sameElement(gone) {
    for (const name of ["data-instance", "data-task", "data-cell-id", "id"]) {
      const value = gone.getAttribute(name);
      if (value) return document.querySelector("#main [" + name + '="' + CSS.escape(value) + '"]');
    }
    return null;
  }

  function selectable(target) {
    const el = target && target.closest ? target.closest(SELECTABLE) : null;
    if (!el || el.closest("a, button, form")) return null;
    return el.closest("#main") || el.closest(".feed") || el.closest("#feed-list") ? el : null;
  }

  // A feed row names what it opens as a selection (data-open="instance:web.2").
  const dataFor = (el) => (el.dataset.open ? dataOf(el.dataset.open) : el.dataset);
  document.addEventListener("click", (event) => {
    if (event.target.closest("[data-panel-close]")) { close(); return; }
    const el = selectable(event.target);
    if (el) open(dataFor(el), el, false);
  });
  document.addEventListener("keydown", (event) => {
    if (event.key === "Escape") { close(); return; }
    if (event.key !== "Enter") return;
    const el = selectable(event.target);
    if (el && el === event.target) open(dataFor(el), el, true);
  });
  document.addEventListener("diego:open", (event) => open(event.detail, document.activeElement, true));
  document.addEventListener("diego:close", close);
  // A presenter's selection reached this follower (live.js): open it, or close.
  document.addEventListener("diego:select", (event) => {
    const data = event.detail ? dataOf(event.detail) : null;
    if (data) open(data, null, false); else close();
  });

  // Enter moved the reader into the panel: focus goes to its title (Esc brings it back).
  document.addEventListener("htmx:afterSwap", (event) => {
    const target = event.detail.target;
    if (!target || target.id !== "panel" || !focusInto) return;
    focusInto = false;
    const title = target.querySelector("h2, h3") || target.querySelector("button, a");
    if (!title) return;
    if (!title.matches("button, a")) title.setAttribute("tabindex", "-1");
    title.focus();
  });

  // A 4xx panel (unknown item, refused action) is a message for the reader: show it.
  document.addEventListener("htmx:beforeSwap", (event) => {
    const target = event.detail.target;
    const status = event.detail.xhr.status;
    if (target && target.id === "panel" && status >= 400 && status < 500) {
      event.detail.shouldSwap = true;
      event.detail.isError = false;
    }
  });

  // A URL with sel= opens its panel on load (a reload, a shared link, a follower).
  document.addEventListener("DOMContentLoaded", () => {
    const sel = new URLSearchParams(location.search).get("sel") || "";
    const data = sel ? dataOf(sel) : null;
    if (data) { document.body.dataset.sel = sel; open(data, null, false); }
  });
})();
