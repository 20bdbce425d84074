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
  document.addEventListener("htmx:wsClose", function (e) {
    // 4403: this wall screen's kiosk link was revoked (dashboard.md AD9); loading the
    // page again shows why instead of a frozen screen.
    if (e.detail && e.detail.event && e.detail.event.code === 4403) { location.reload(); return; }
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
  // A frame that redraws the focused element (a block, a chip, a control) must not drop the
  // keyboard reader's place: remember it by its hooks and focus the element drawn in its place.
  var HOOKS = ["id", "data-instance", "data-task", "data-cell-id"];
  document.addEventListener("htmx:wsBeforeMessage", function () {
    var a = document.activeElement;
    focusedId = null;
    if (!a || a === document.body) return;
    for (var i = 0; i < HOOKS.length; i++) {
      var value = a.getAttribute(HOOKS[i]);
      if (value) { focusedId = "[" + HOOKS[i] + '="' + CSS.escape(value) + '"]'; return; }
    }
  });
  function keepFocus() {
    if (!focusedId) return;
    var a = document.activeElement;
    if (a && a !== document.body && a.isConnected) return;
    var again = document.querySelector(focusedId);
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
  // The presenter's page, on every page of the app, reports what it shows: the path, its
  // query (filters, mode, zone, page), the selection (sel=), the replay step and the
  // scroll position. Followers mirror it within a second: a new page is a navigation, a
  // change within the page is applied in place (filters, panel, step, scroll).
  var socketWrapper = null; // htmx-ext-ws's public interface, from its open event
  var lastSent = "";
  document.addEventListener("htmx:wsOpen", function (e) { socketWrapper = e.detail && e.detail.socketWrapper; lastSent = ""; });
  function presenterState() { return document.getElementById("presenter-state"); }
  function isPresenter() {
    var state = presenterState();
    if (state && state.dataset.presenterId) return !!body.dataset.userId && state.dataset.presenterId === body.dataset.userId;
    return !!body.dataset.presenterPage;
  }
  function scrollFraction() {
    var max = document.documentElement.scrollHeight - window.innerHeight;
    return max > 0 ? (window.scrollY / max).toFixed(3) : "0";
  }
  // The app's own pages a follower may be sent to (the server checks again, C5).
  var FOLLOWABLE = /^\/(grid\/|lrps\/|events\/|auctions\/(\d+\/(cells\/)?)?|compare\/|otto\/)?$/;
  function presentState(url) {
    var u = url || location;
    var params = new URLSearchParams(u.search);
    ["token", "follow"].forEach(function (k) { params.delete(k); });
    return { view: u.pathname === "/present/" ? "/grid/" : u.pathname, query: params.toString(),
             sel: params.get("sel") || "", step: params.get("step") || "",
             scroll: url ? "0" : scrollFraction() };
  }
  function publishPresent(url) {
    if (!socketWrapper || !isPresenter()) return;
    var message = JSON.stringify({ present: presentState(url) });
    if (message === lastSent) return;
    lastSent = message;
    socketWrapper.send(message);
  }
  window.diegoPublishPresent = function () { publishPresent(); };
  document.addEventListener("htmx:wsOpen", function () { publishPresent(); });
  document.addEventListener("htmx:pushedIntoHistory", function () { publishPresent(); });
  window.addEventListener("popstate", function () { publishPresent(); });
  var scrollTimer = null;
  window.addEventListener("scroll", function () {
    if (scrollTimer || !isPresenter()) return;
    scrollTimer = setTimeout(function () { scrollTimer = null; publishPresent(); }, 120);
  }, { passive: true });
  // A link to another page of the app: tell followers now, while this page unloads, so
  // they load the next page alongside the presenter instead of after it.
  document.addEventListener("click", function (e) {
    var a = e.target.closest && e.target.closest("a[href]");
    if (!a || e.defaultPrevented || e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey) return;
    if (a.target || a.hasAttribute("hx-get") || a.hasAttribute("download")) return;
    var url = new URL(a.href, location.href);
    if (url.origin !== location.origin || !FOLLOWABLE.test(url.pathname) || url.pathname === location.pathname) return;
    publishPresent(url);
  });

  function unfollowed(state) { return sessionStorage.getItem("diego-unfollow") === state.dataset.since; }
  var CONTROLS = "#controls button, #controls select, #controls input, #controls textarea, [data-control], " +
    "[data-control] input, [data-control] select, [data-control] button, #panel form button, #panel form input, #panel form select";
  function disableControls(active, name) {
    var reason = "Following " + name + ": Unfollow to use this";
    document.querySelectorAll(CONTROLS).forEach(function (el) {
      if (active) {
        if (!el.dataset.followOff && !el.disabled) { el.dataset.followOff = "1"; if (el.title) el.dataset.followTitle = el.title; }
        if (el.dataset.followOff) { if ("disabled" in el) el.disabled = true; el.title = reason; el.setAttribute("aria-disabled", "true"); }
      } else if (el.dataset.followOff) {
        if ("disabled" in el) el.disabled = false;
        el.title = el.dataset.followTitle || "";
        if (!el.title) el.removeAttribute("title");
        el.removeAttribute("aria-disabled");
        delete el.dataset.followOff; delete el.dataset.followTitle;
      }
    });
  }
  function sorted(params, drop) {
    var out = new URLSearchParams(params.toString());
    drop.forEach(function (k) { out.delete(k); });
    out.sort();
    return out.toString();
  }
  var stepWanted = "";
  function followStep(step) {
    var replay = document.getElementById("replay");
    var shown = replay && replay.querySelector(".replay-state");
    if (!replay || !step || !window.htmx || step === stepWanted || (shown && shown.dataset.step === step)) return;
    stepWanted = step;
    window.htmx.ajax("GET", location.pathname + "?step=" + encodeURIComponent(step), { target: "#replay" })
      .then(function () { stepWanted = ""; }, function () { stepWanted = ""; });
  }
  function followScroll(fraction) {
    if (fraction === undefined || fraction === "") return;
    var max = document.documentElement.scrollHeight - window.innerHeight;
    var y = Math.round(Number(fraction) * Math.max(0, max));
    if (isFinite(y) && Math.abs(window.scrollY - y) > 4) window.scrollTo(0, y);
  }
  // Set once this page is sent to the presenter's page: until that page has loaded, no
  // further frame moves it again (on a slow page, each presenter frame restarted the
  // load, and the follower reloaded forever; C5).
  var moving = false;
  function moveTo(url) { moving = true; location.assign(url); }
  window.addEventListener("pageshow", function (e) { if (e.persisted) moving = false; });
  function follow() {
    if (moving) return;
    var state = presenterState();
    var banner = document.getElementById("presenter");
    if (!banner) return;
    if (!state && document.getElementById("presenter-ended")) {
      // The presenter left and the presentation ended (C5): say so, release the page.
      body.classList.remove("following");
      banner.hidden = false;
      disableControls(false, "");
      return;
    }
    var presenting = !!(state && state.dataset.presenter && isPresenter());
    body.classList.toggle("presenting", presenting);
    if (presenting) body.dataset.presenterPage = "1"; else if (state && state.dataset.presenterId) delete body.dataset.presenterPage;
    var active = !!(state && state.dataset.presenter && !presenting && !body.dataset.nofollow && !unfollowed(state));
    body.classList.toggle("following", active);
    banner.hidden = !(active || presenting);
    disableControls(active, state ? state.dataset.presenter : "");
    if (!active) return;
    var view = state.dataset.view || "";
    // Same-origin relative paths only (the server checks them too, dashboard.md C5).
    if (!/^\/(?![\/\\])[A-Za-z0-9_\-\/]*$/.test(view)) return;
    var here = new URLSearchParams(location.search);
    var target = new URLSearchParams(state.dataset.query || "");
    // A kiosk keeps its own token and follow flag on every page it is sent to.
    ["token", "follow"].forEach(function (k) { if (here.get(k)) target.set(k, here.get(k)); });
    var onKiosk = location.pathname === "/kiosk/";
    var kioskMode = onKiosk || body.classList.contains("kiosk-mode");
    var toGrid = view === "/grid/" || view === "/";
    var path = kioskMode && toGrid ? "/kiosk/" : view;
    var hereGrid = location.pathname === "/grid/" || location.pathname === "/";
    var samePage = location.pathname === path || (toGrid && hereGrid) || location.pathname === "/present/";
    var qs = function (p) { var t = p.toString(); return t ? "?" + t : ""; };
    if (!samePage) { moveTo(path + qs(target)); return; }
    // Within the page: what the page applies itself stays; anything else is a new page.
    var inPlace = ["sel", "scroll", "token", "follow"];
    if (document.getElementById("grid-filters") || onKiosk) inPlace = inPlace.concat(FILTERS);
    if (document.getElementById("replay")) inPlace.push("step");
    if (location.pathname !== "/present/" && sorted(here, inPlace) !== sorted(target, inPlace)) {
      moveTo(location.pathname + qs(target)); return;
    }
    var url = location.pathname + qs(target);
    if (url !== location.pathname + location.search) { history.replaceState(null, "", url); filtersFromUrl(); }
    followStep(target.get("step") || "");
    var sel = target.get("sel") || "";
    if (sel !== (body.dataset.sel || "")) document.dispatchEvent(new CustomEvent("diego:select", { detail: sel }));
    followScroll(state.dataset.scroll);
  }
  document.addEventListener("click", function (e) {
    if (e.target.closest && e.target.closest(".unfollow")) {
      var state = presenterState();
      if (state) sessionStorage.setItem("diego-unfollow", state.dataset.since || "1");
      follow();
    }
    var take = e.target.closest && e.target.closest(".takeover-link");
    if (take) take.href = "/present/?takeover=1&next=" + encodeURIComponent(location.pathname + location.search);
  });

  document.addEventListener("DOMContentLoaded", function () { bound(); applyFilters(); refreshTimers(); follow(); });
})();
