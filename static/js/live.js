// The page's live socket and everything that runs between frames (dashboard.md 10).
// No polling (L7): the server pushes frames; timers here only redraw text from the last
// clock frame (sim_now, speed, paused) and never touch the network.
(function () {
  "use strict";
  var body = document.body;
  var lastFrame = Date.now();
  var closedSince = null;
  var reduce = window.matchMedia && window.matchMedia("(prefers-reduced-motion: reduce)").matches;

  // L5: full-jitter exponential back-off (AWS architecture blog): a random delay in
  // [0, min(cap, base * 2^n)], so a restarted server is not hit by every page at once.
  function fullJitter(retry) {
    var cap = 30000, base = 500;
    return Math.floor(Math.random() * Math.min(cap, base * Math.pow(2, retry || 0)));
  }
  function configure() { if (window.htmx) window.htmx.config.wsReconnectDelay = fullJitter; }
  configure();
  document.addEventListener("DOMContentLoaded", configure);

  function setStatus(state, text) {
    body.dataset.ws = state;
    var el = document.querySelector(".ws-text");
    if (el) el.textContent = text;
  }
  function showReconnecting() {
    var ago = Math.round((Date.now() - lastFrame) / 1000);
    setStatus("closed", "reconnecting, last update " + ago + " s ago");
  }

  document.addEventListener("htmx:wsOpen", function () {
    closedSince = null;
    lastFrame = Date.now();
    setStatus("open", "live");
  });
  document.addEventListener("htmx:wsClose", function () {
    if (closedSince === null) closedSince = Date.now();
    showReconnecting();
  });
  // A structural change (cells, zones, a scenario) moved the world epoch: this page was
  // drawn for another cluster, so it loads itself again (after a short random wait, so
  // a room full of screens does not reload in the same millisecond).
  // A control request still running (often the very one that changed the world) is let
  // finish first, and its answer is carried across the reload: the operator always sees
  // the real outcome of what they asked for.
  var reloading = false, waitingFor = 0, reloadWanted = false;
  var KEPT = "diego-web:control-status";
  function reloadNow() {
    var status = document.getElementById("control-status");
    try {
      if (status && status.innerHTML.trim()) sessionStorage.setItem(KEPT, status.innerHTML);
    } catch (e) { /* storage refused: the answer is only lost, never wrong */ }
    location.reload();
  }
  function checkEpoch() {
    var marker = document.getElementById("world-epoch");
    if (!marker || reloading || marker.dataset.epoch === body.dataset.epoch) return;
    reloading = true;
    setStatus("reloading", "the cluster changed: reloading");
    if (waitingFor > 0) { reloadWanted = true; return; }
    setTimeout(reloadNow, 50 + Math.floor(Math.random() * 400));
  }
  document.addEventListener("htmx:beforeRequest", function () { waitingFor += 1; });
  document.addEventListener("htmx:afterRequest", function () {
    waitingFor = Math.max(0, waitingFor - 1);
    if (waitingFor === 0 && reloadWanted) { reloadWanted = false; setTimeout(reloadNow, 50); }
  });
  document.addEventListener("DOMContentLoaded", function () {
    var kept = null;
    try { kept = sessionStorage.getItem(KEPT); sessionStorage.removeItem(KEPT); } catch (e) { kept = null; }
    var status = document.getElementById("control-status");
    if (kept && status) status.innerHTML = kept;
  });
  // A frame replaces elements whole: the one with keyboard focus comes back under the
  // same id, and focus goes back to it (or a keyboard user is thrown to the page top).
  var focusedId = null;
  // A frame of another world's epoch is not swapped at all: its cells and zones are not
  // on this page (oobErrorNoTarget), and the page reloads for that world anyway.
  var EPOCH = /id="world-epoch" data-epoch="([^"]*)"/;
  document.addEventListener("htmx:wsBeforeMessage", function (e) {
    var text = e.detail && typeof e.detail.message === "string" ? e.detail.message : "";
    var epoch = EPOCH.exec(text);
    if (reloading || (epoch && epoch[1] !== body.dataset.epoch)) {
      e.preventDefault();
      if (!reloading) {
        var marker = document.getElementById("world-epoch");
        if (marker) marker.dataset.epoch = epoch[1];
        checkEpoch();
      }
      return;
    }
  });
  document.addEventListener("htmx:wsBeforeMessage", function () {
    var a = document.activeElement;
    focusedId = a && a !== document.body && a.id ? a.id : null;
  });
  function keepFocus() {
    if (!focusedId) return;
    var a = document.activeElement;
    if (a && a !== document.body && a.isConnected) return;
    var again = document.getElementById(focusedId);
    if (again) again.focus({ preventScroll: true });
  }
  document.addEventListener("htmx:wsAfterMessage", function () {
    keepFocus();
    checkEpoch();
    lastFrame = Date.now();
    body.dataset.frames = String(Number(body.dataset.frames || 0) + 1);
    bound();
    applyFilters();
    refreshTimers();
    follow();
  });

  // ---- the sim clock, extrapolated from the last clock frame ---------------------
  function pad(n) { return (n < 10 ? "0" : "") + n; }
  function format(seconds) {
    var tenths = Math.round(seconds * 10);
    var whole = Math.floor(tenths / 10), tenth = tenths % 10;
    var s = whole % 60, m = Math.floor(whole / 60) % 60, h = Math.floor(whole / 3600);
    return h + ":" + pad(m) + ":" + pad(s) + "." + tenth;
  }
  function mmss(seconds) {
    seconds = Math.max(0, Math.round(seconds));
    return Math.floor(seconds / 60) + ":" + pad(seconds % 60);
  }
  var clockSeen = null, clockSeenAt = 0;
  function simNow() {
    var clock = document.getElementById("sim-clock");
    if (!clock) return null;
    var base = Number(clock.dataset.simNow);
    if (clock !== clockSeen) { clockSeen = clock; clockSeenAt = Date.now(); }
    if (clock.dataset.paused === "true") return base;
    var elapsed = Math.min((Date.now() - clockSeenAt) / 1000, 5); // never run far ahead of the server
    return base + elapsed * Number(clock.dataset.speed || 1);
  }
  window.diegoSimNow = simNow;

  // Countdowns and count-ups (drain deadline, "missing 0:12", oldest unplaced age) and
  // the 5 sim-s ring on just-placed blocks (G4, G5, G6).
  function refreshTimers() {
    var now = simNow();
    if (now === null) return;
    var time = document.querySelector("#sim-clock .clock-time");
    if (time && !reduce) time.textContent = format(now);
    document.querySelectorAll("[data-count-down-to]").forEach(function (el) {
      el.textContent = mmss(Number(el.dataset.countDownTo) - now);
    });
    document.querySelectorAll("[data-count-up-from]").forEach(function (el) {
      el.textContent = mmss(now - Number(el.dataset.countUpFrom));
    });
    document.querySelectorAll(".block[data-since]").forEach(function (el) {
      el.classList.toggle("just-placed", now - Number(el.dataset.since) < 5);
    });
    if (closedSince !== null) showReconnecting();
  }
  setInterval(refreshTimers, reduce ? 1000 : 200);

  // ---- L6: bounded DOM: containers keep at most data-bounded children ------------
  function bound() {
    document.querySelectorAll("[data-bounded]").forEach(function (box) {
      var max = Number(box.dataset.bounded);
      while (box.children.length > max) box.removeChild(box.lastElementChild);
    });
  }

  // ---- G7 filters, kept in the URL (U1) ------------------------------------------
  var FILTERS = ["app", "domain", "state", "cell", "kind", "q"];
  function currentFilters() {
    var form = document.getElementById("grid-filters");
    var out = {};
    if (!form) { // a kiosk has no controls: the URL (set by the presenter) filters
      var params = new URLSearchParams(location.search);
      FILTERS.forEach(function (name) { if (params.get(name)) out[name] = params.get(name); });
      return out;
    }
    FILTERS.forEach(function (name) {
      var field = form.elements[name];
      var value = field ? field.value.trim() : "";
      if (value) out[name] = value;
    });
    return out;
  }
  function matches(el, f) {
    var d = el.dataset;
    if (f.app && (d.app || "").indexOf(f.app) === -1) return false;
    if (f.domain && d.domain !== f.domain) return false;
    if (f.kind && d.kind !== f.kind) return false;
    if (f.state && d.state !== f.state && d.presence !== f.state) return false;
    if (f.cell) {
      var cell = el.closest("[data-cell-id]");
      if (!cell || cell.dataset.cellId.indexOf(f.cell) === -1) return false;
    }
    if (f.q) {
      var hay = (el.getAttribute("aria-label") || "") + " " + (d.instance || d.task || "");
      if (hay.toLowerCase().indexOf(f.q.toLowerCase()) === -1) return false;
    }
    return true;
  }
  function applyFilters() {
    var f = currentFilters();
    var active = Object.keys(f).length > 0;
    var shown = 0, total = 0;
    document.querySelectorAll(".block[data-kind], .chip[data-kind]").forEach(function (el) {
      var ok = !active || matches(el, f);
      el.classList.toggle("dim", !ok);
      total += 1; if (ok) shown += 1;
    });
    body.classList.toggle("filtering", active);
    var out = document.querySelector(".filter-count");
    if (out) out.textContent = active ? shown + " of " + total + " match" : "";
  }
  // Each committed filter change is one history entry, so Back restores the previous
  // filters (U1). Typing opens one entry and then rewrites it in place.
  var typing = false;
  function filtersToUrl(how) {
    var params = new URLSearchParams(location.search);
    var f = currentFilters();
    FILTERS.forEach(function (name) { if (f[name]) params.set(name, f[name]); else params.delete(name); });
    var url = location.pathname + (params.toString() ? "?" + params.toString() : "");
    if (url === location.pathname + location.search) return;
    if (how === "type" && typing) history.replaceState({ filters: f }, "", url);
    else history.pushState({ filters: f }, "", url);
    typing = how === "type";
    publishPresent();
  }
  function filtersFromUrl() {
    var form = document.getElementById("grid-filters");
    var params = new URLSearchParams(location.search);
    if (form) FILTERS.forEach(function (name) { if (form.elements[name]) form.elements[name].value = params.get(name) || ""; });
    applyFilters();
  }
  document.addEventListener("input", function (e) {
    // Typing narrows at once and rewrites the URL in place; a committed change (select,
    // blur, Enter) adds a history entry so Back restores the previous filters (U1).
    if (e.target.form && e.target.form.id === "grid-filters" && e.target.tagName === "INPUT") { applyFilters(); filtersToUrl("type"); }
  });
  document.addEventListener("change", function (e) {
    if (e.target.form && e.target.form.id === "grid-filters") { typing = false; applyFilters(); filtersToUrl("commit"); }
  });
  document.addEventListener("submit", function (e) {
    if (e.target.id === "grid-filters") { e.preventDefault(); typing = false; applyFilters(); filtersToUrl("commit"); }
  });
  document.addEventListener("reset", function (e) {
    if (e.target.id === "grid-filters") setTimeout(function () { typing = false; applyFilters(); filtersToUrl("commit"); }, 0);
  });
  window.addEventListener("popstate", function () { typing = false; filtersFromUrl(); });

  // ---- U2 keyboard: arrows between cells, Enter opens, Esc closes, ? lists keys ----
  document.addEventListener("keydown", function (e) {
    var t = e.target;
    if (t && (t.tagName === "INPUT" || t.tagName === "SELECT" || t.tagName === "TEXTAREA")) return;
    if (e.key === "?") { var help = document.getElementById("keys-help"); if (help) help.hidden = !help.hidden; return; }
    if (e.key === "Escape") {
      var open = document.getElementById("keys-help"); if (open) open.hidden = true;
      document.dispatchEvent(new CustomEvent("diego:close"));
      return;
    }
    if (!t || !t.matches || !t.matches(".cell, .block, .chip, .zone-tile")) return;
    if (e.key === "Enter") {
      if (t.matches(".zone-tile")) return; // a link: the browser follows it
      document.dispatchEvent(new CustomEvent("diego:open", { detail: t.dataset }));
      t.classList.add("selected");
      return;
    }
    var cells = Array.prototype.slice.call(document.querySelectorAll(".cell"));
    var i = cells.indexOf(t.closest(".cell"));
    if (i < 0) return;
    if (e.key === "ArrowDown" || e.key === "ArrowRight") { e.preventDefault(); if (cells[i + 1]) cells[i + 1].focus(); }
    if (e.key === "ArrowUp" || e.key === "ArrowLeft") { e.preventDefault(); if (cells[i - 1]) cells[i - 1].focus(); }
  });

  // ---- C5 presenter / followers ----------------------------------------------------
  var socketWrapper = null; // htmx-ext-ws's public interface, from its open event
  document.addEventListener("htmx:wsOpen", function (e) { socketWrapper = e.detail && e.detail.socketWrapper; });
  function presentState() {
    var params = new URLSearchParams(location.search);
    return { view: location.pathname === "/present/" ? "/grid/" : location.pathname,
             query: params.toString(), sel: params.get("sel") || "", step: params.get("step") || "" };
  }
  function publishPresent() {
    if (!body.dataset.presenterPage) return;
    if (socketWrapper) socketWrapper.send(JSON.stringify({ present: presentState() }));
  }
  window.diegoPublishPresent = publishPresent;
  document.addEventListener("htmx:wsOpen", function () { setTimeout(publishPresent, 50); });

  function unfollowed(state) { return sessionStorage.getItem("diego-unfollow") === state.dataset.since; }
  function follow() {
    var state = document.getElementById("presenter-state");
    var banner = document.getElementById("presenter");
    if (!banner) return;
    var active = state && state.dataset.presenter && !body.dataset.presenterPage && !body.dataset.nofollow && !unfollowed(state);
    body.classList.toggle("following", !!active);
    banner.hidden = !active;
    document.querySelectorAll("[data-control], [data-control] input, [data-control] select, [data-control] button").forEach(function (el) {
      if ("disabled" in el) el.disabled = !!active;
      el.setAttribute("aria-disabled", active ? "true" : "false");
    });
    if (!active) return;
    var view = state.dataset.view || "";
    // Same-origin relative paths only (the server checks them too, dashboard.md C5).
    if (!/^\/(?![\/\\])[A-Za-z0-9_\-\/]*$/.test(view)) return;
    var here = new URLSearchParams(location.search);
    var target = new URLSearchParams(state.dataset.query || "");
    // A kiosk keeps its own screen settings and token; everything else follows.
    ["token", "follow"].forEach(function (k) { if (here.get(k)) target.set(k, here.get(k)); });
    var onKiosk = location.pathname === "/kiosk/";
    if (onKiosk) {
      target.set("view", view.replace(/\//g, "") || "grid");
      var wanted = "?" + target.toString();
      if (here.get("view") && here.get("view") !== target.get("view")) location.assign("/kiosk/" + wanted);
      else if (location.search !== wanted) { history.replaceState(null, "", "/kiosk/" + wanted); filtersFromUrl(); }
      return;
    }
    if (view !== location.pathname) { location.assign(view + (target.toString() ? "?" + target.toString() : "")); return; }
    var url = view + (target.toString() ? "?" + target.toString() : "");
    if (url !== location.pathname + location.search) { history.replaceState(null, "", url); filtersFromUrl(); }
  }
  document.addEventListener("click", function (e) {
    if (e.target.closest && e.target.closest(".unfollow")) {
      var state = document.getElementById("presenter-state");
      if (state) sessionStorage.setItem("diego-unfollow", state.dataset.since || "1");
      follow();
    }
  });

  document.addEventListener("DOMContentLoaded", function () { bound(); applyFilters(); refreshTimers(); follow(); });
})();
