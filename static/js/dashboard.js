// Shared page chrome: countdowns, expandable rows, the feed drawer and control answers.
// No polling (dashboard.md L7): countdowns run here from the last clock frame.
(function () {
  "use strict";

  // --- sim time, extrapolated from the last clock frame (as live.js does) -------------
  function simNow() {
    var clock = document.getElementById("sim-clock");
    if (!clock) return null;
    var now = Number(clock.dataset.simNow);
    if (clock.dataset.paused === "true") return now;
    var received = Number(clock.dataset.received || 0);
    if (!received) return now;
    return now + Math.min((Date.now() - received) / 1000, 5) * Number(clock.dataset.speed);
  }

  function tickCountdowns() {
    var now = simNow();
    if (now === null) return;
    document.querySelectorAll(".countdown[data-due]").forEach(function (el) {
      var left = Number(el.dataset.due) - now;
      var text = left > 0 ? el.dataset.template.replace("{s}", Math.ceil(left - 1e-9) + " s") : el.dataset.done;
      if (text && el.textContent !== text) el.textContent = text;
    });
  }
  setInterval(tickCountdowns, 250);

  // --- expandable rows and <details> keep their state across live swaps --------------
  var openRows = new Set();
  var openDetails = new Set();

  function setRow(button, open) {
    var target = document.getElementById(button.dataset.toggle);
    if (!target) return;
    target.hidden = !open;
    button.setAttribute("aria-expanded", open ? "true" : "false");
    button.textContent = open ? "▾" : "▸";
  }

  document.addEventListener("click", function (e) {
    var button = e.target.closest("button[data-toggle]");
    if (!button) return;
    var open = button.getAttribute("aria-expanded") !== "true";
    if (open) openRows.add(button.dataset.toggle); else openRows.delete(button.dataset.toggle);
    setRow(button, open);
  });

  document.addEventListener("toggle", function (e) {
    var el = e.target;
    if (!el.id || el.tagName !== "DETAILS") return;
    if (el.open) openDetails.add(el.id); else openDetails.delete(el.id);
  }, true);

  function restore() {
    document.querySelectorAll("button[data-toggle]").forEach(function (b) {
      if (openRows.has(b.dataset.toggle)) setRow(b, true);
    });
    openDetails.forEach(function (id) {
      var el = document.getElementById(id);
      if (el && !el.open) el.open = true;
    });
    tickCountdowns();
  }

  // --- the feed: live rows unless paused; filters by type, app, cell -----------------
  var paused = false;
  var shownNewest = 0;

  function feedFilter() {
    var type = (document.getElementById("feed-type") || {}).value || "";
    var app = ((document.getElementById("feed-app") || {}).value || "").trim();
    var cell = ((document.getElementById("feed-cell") || {}).value || "").trim();
    document.querySelectorAll("#feed-list .feed-row").forEach(function (row) {
      var ok = (!type || row.dataset.family === type) &&
        (!app || (" " + row.dataset.apps + " ").indexOf(" " + app + " ") >= 0) &&
        (!cell || (" " + row.dataset.cells + " ").indexOf(" " + cell + " ") >= 0);
      row.hidden = !ok;
    });
  }

  // A snapshot (data-full) carries every row; a frame carries the order of all rows by id
  // and only the rows that are new or changed (dashboard.md L3: send what changed). Rows
  // are kept here until shown, so a paused feed misses none of them.
  var heldRows = {};
  var heldOrder = null;
  function absorb(incoming) {
    var full = incoming.dataset.full === "1";
    if (!full && incoming.dataset.order === undefined) return false;
    if (full) heldRows = {};
    var ids = [];
    Array.prototype.forEach.call(incoming.querySelectorAll(".feed-row"), function (row) {
      heldRows[row.dataset.id] = row;
      ids.push(row.dataset.id);
    });
    heldOrder = full ? ids : (incoming.dataset.order ? incoming.dataset.order.split(" ") : []);
    // The holder only carries rows here: emptied, the page is the size of a fresh load.
    incoming.innerHTML = "";
    delete incoming.dataset.order;
    delete incoming.dataset.full;
    return true;
  }
  function showHeld(list) {
    if (heldOrder === null) return;
    var shown = {};
    Array.prototype.forEach.call(list.querySelectorAll(".feed-row"), function (row) { shown[row.dataset.id] = row; });
    var rows = heldOrder.map(function (id) { return heldRows[id] || shown[id]; }).filter(Boolean);
    if (rows.length) list.replaceChildren.apply(list, rows);
    else list.innerHTML = '<li class="feed-empty">no events yet</li>';
    heldRows = {};
    heldOrder = null;
  }
  // A changed row of desired vs actual arrives alone in a <template> (a bare <tbody> would
  // be dropped by the parser): it replaces the row of the same id, in arrival order.
  function placeRowUpdates() {
    var box = document.getElementById("lrp-updates");
    if (!box) return;
    Array.prototype.forEach.call(box.querySelectorAll("template"), function (t) {
      Array.prototype.forEach.call(t.content.querySelectorAll("tbody[id]"), function (row) {
        var old = document.getElementById(row.id);
        if (old) old.replaceWith(document.importNode(row, true));
      });
      t.remove();
    });
    restore();
  }
  document.addEventListener("htmx:oobAfterSwap", function (e) {
    if (e.target && e.target.id === "lrp-updates") placeRowUpdates();
  });
  // Two feed frames in one message: the first is taken before the second replaces it.
  document.addEventListener("htmx:oobBeforeSwap", function (e) {
    var target = e.detail && e.detail.target;
    if (target && target.id === "feed-incoming") absorb(target);
  });
  function takeIncoming() {
    var incoming = document.getElementById("feed-incoming");
    var list = document.getElementById("feed-list");
    var badge = document.getElementById("feed-new");
    if (!incoming || !list) return;
    var newest = Number(incoming.dataset.newest || 0);
    if (!shownNewest) shownNewest = Number(list.dataset.newest || newest);
    absorb(incoming);
    if (paused) {
      // Event ids count up one per stored event, so the gap is the number of new events.
      var fresh = Math.max(0, newest - shownNewest);
      if (badge) { badge.hidden = fresh === 0; badge.textContent = fresh + " new"; }
      return;
    }
    if (heldOrder !== null) {
      showHeld(list);
      shownNewest = newest;
      list.dataset.newest = String(newest);
      feedFilter();
    }
    if (badge) badge.hidden = true;
  }

  document.addEventListener("click", function (e) {
    if (!e.target.closest || !e.target.closest("#feed-pause")) return;
    var button = document.getElementById("feed-pause");
    paused = !paused;
    button.setAttribute("aria-pressed", paused ? "true" : "false");
    button.textContent = paused ? "▶ Resume feed" : "‖ Pause feed";
    if (!paused) takeIncoming();
  });
  document.addEventListener("input", function (e) {
    if (e.target.closest && e.target.closest(".feed-tools")) feedFilter();
  });
  document.addEventListener("change", function (e) {
    if (e.target.closest && e.target.closest(".feed-tools")) feedFilter();
  });

  // --- the controls' dropdowns follow the cluster (cells, their states, apps, instances) --
  // The live frame carries the options in a hidden holder; each select takes them and
  // keeps the operator's current choice when it still exists.
  // "web:0-2,5 api:0" → the options web.0 web.1 web.2 web.5 api.0
  function expandInstances(compact) {
    var out = [];
    (compact || "").split(" ").filter(Boolean).forEach(function (app) {
      var at = app.lastIndexOf(":"), guid = app.slice(0, at);
      app.slice(at + 1).split(",").forEach(function (run) {
        var ends = run.split("-").map(Number), last = ends.length > 1 ? ends[1] : ends[0];
        for (var i = ends[0]; i <= last; i++) out.push('<option value="' + guid + "." + i + '"></option>');
      });
    });
    return out.join("");
  }
  function syncChoices() {
    var holder = document.getElementById("control-choices");
    if (!holder) return;
    var crashable = document.getElementById("control-crashable");
    document.querySelectorAll("[data-choices]").forEach(function (target) {
      var kind = target.dataset.choices;
      var source = kind === "crashable" && crashable
        ? { innerHTML: expandInstances(crashable.dataset.instances) }
        : holder.querySelector('[data-kind="' + kind + '"]');
      if (!source || target.innerHTML === source.innerHTML) return;
      var chosen = target.value;
      target.innerHTML = source.innerHTML;
      if (chosen !== undefined && target.tagName === "SELECT") {
        var still = Array.prototype.some.call(target.options, function (o) { return o.value === chosen; });
        if (still) target.value = chosen;
      }
    });
  }

  document.addEventListener("htmx:wsAfterMessage", function () { placeRowUpdates(); takeIncoming(); restore(); syncChoices(); });

  // --- a control request in flight says so; a failed one says what failed (C7) --------
  function controlStatus(e) {
    var target = e.detail && e.detail.target;
    return target && target.id === "control-status" ? target : null;
  }
  document.addEventListener("htmx:beforeRequest", function (e) {
    var status = controlStatus(e);
    if (!status) return;
    status.setAttribute("aria-busy", "true");
    status.innerHTML = '<p class="control-result control-working"><span aria-hidden="true">…</span> working</p>';
  });
  document.addEventListener("htmx:afterRequest", function (e) {
    var status = controlStatus(e);
    if (status) status.removeAttribute("aria-busy");
  });
  function failed(e, why) {
    var status = controlStatus(e);
    if (!status) return;
    var p = document.createElement("p");
    p.className = "control-result control-error";
    p.setAttribute("role", "alert");
    p.textContent = "⚠ the request did not complete (" + why + "): check the cluster before repeating it";
    status.replaceChildren(p);
  }
  document.addEventListener("htmx:responseError", function (e) {
    var code = e.detail.xhr ? e.detail.xhr.status : 0;
    if (code >= 500 || code === 0) failed(e, "HTTP " + code);
  });
  document.addEventListener("htmx:sendError", function (e) { failed(e, "no answer from the server"); });
  document.addEventListener("htmx:timeout", function (e) { failed(e, "timed out"); });
  document.addEventListener("click", function (e) {
    var cancel = e.target.closest && e.target.closest("[data-dismiss-question]");
    if (!cancel) return;
    var status = document.getElementById("control-status");
    if (status) status.innerHTML = '<p class="control-result"><span aria-hidden="true">✓</span> cancelled: nothing changed</p>';
  });

  // --- control answers: a 400/403/404 carries the reason; show it, do not drop it ----
  document.addEventListener("htmx:beforeSwap", function (e) {
    var target = e.detail.target;
    if (target && target.id === "control-status" && e.detail.xhr.status >= 400 && e.detail.xhr.status < 500) {
      e.detail.shouldSwap = true;
      e.detail.isError = false;
    }
  });

  document.addEventListener("DOMContentLoaded", function () {
    var list = document.getElementById("feed-list");
    var incoming = document.getElementById("feed-incoming");
    if (list && incoming) list.dataset.newest = incoming.dataset.newest || "0";
    tickCountdowns();
  });
})();

// The metrics header's collapsed state, remembered across pages and visits (M1).
(function () {
  "use strict";
  var KEY = "diego-web:metrics-collapsed";
  function apply(collapsed) {
    document.body.classList.toggle("metrics-collapsed", collapsed);
    var button = document.getElementById("metrics-toggle");
    if (button) {
      button.setAttribute("aria-expanded", collapsed ? "false" : "true");
      button.firstChild.textContent = collapsed ? "Metrics ▸" : "Metrics ▾";
    }
  }
  function stored() { try { return localStorage.getItem(KEY) === "1"; } catch (e) { return false; } }
  document.addEventListener("click", function (e) {
    if (!e.target.closest || !e.target.closest("#metrics-toggle")) return;
    var collapsed = !document.body.classList.contains("metrics-collapsed");
    try { localStorage.setItem(KEY, collapsed ? "1" : "0"); } catch (err) { /* kept for this page only */ }
    apply(collapsed);
  });
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", function () { apply(stored()); });
  else apply(stored());
})();

// Behaviour that pages once wrote inline (onsubmit, onfocus): the Content-Security-Policy
// allows scripts from our files only (dashboard.md AD5), so they are delegated here.
(function () {
  "use strict";
  document.addEventListener("submit", function (e) {
    var form = e.target;
    var question = form && form.getAttribute && form.getAttribute("data-confirm");
    if (!question) return;
    if (!window.confirm(question)) { e.preventDefault(); e.stopImmediatePropagation(); return; }
    // A form whose server refuses without it (a foundation's replace or delete) says so.
    var said = form.querySelector('input[name="confirm"]');
    if (said) said.value = "yes";
  }, true);
  document.addEventListener("focusin", function (e) {
    var field = e.target;
    if (field && field.getAttribute && field.getAttribute("data-select-on-focus")) field.select();
  });
})();
