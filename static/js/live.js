// The page's live socket: state flag for tests and people, and a clock that runs between frames.
// No polling (dashboard.md L7): the server sends a clock frame; the browser extrapolates from it.
(function () {
  "use strict";
  var body = document.body;
  var lastFrame = Date.now();

  function setStatus(state, text) {
    body.dataset.ws = state;
    var el = document.querySelector(".ws-text");
    if (el) el.textContent = text;
  }

  document.addEventListener("htmx:wsOpen", function () { lastFrame = Date.now(); setStatus("open", "live"); });
  document.addEventListener("htmx:wsClose", function () {
    var ago = Math.round((Date.now() - lastFrame) / 1000);
    setStatus("closed", "reconnecting, last update " + ago + " s ago");
  });
  document.addEventListener("htmx:wsAfterMessage", function () { lastFrame = Date.now(); });

  function pad(n) { return (n < 10 ? "0" : "") + n; }
  function format(seconds) {
    var tenths = Math.round(seconds * 10);
    var whole = Math.floor(tenths / 10), tenth = tenths % 10;
    var s = whole % 60, m = Math.floor(whole / 60) % 60, h = Math.floor(whole / 3600);
    return h + ":" + pad(m) + ":" + pad(s) + "." + tenth;
  }

  // Between frames, advance the displayed sim time at the clock's speed.
  var reduce = window.matchMedia && window.matchMedia("(prefers-reduced-motion: reduce)").matches;
  setInterval(function () {
    var clock = document.getElementById("sim-clock");
    if (!clock || clock.dataset.paused === "true" || reduce) return;
    var received = Number(clock.dataset.received || 0);
    if (!received) { clock.dataset.received = String(Date.now()); return; }
    var elapsed = Math.min((Date.now() - received) / 1000, 5); // never run far ahead of the server
    var now = Number(clock.dataset.simNow) + elapsed * Number(clock.dataset.speed);
    var time = clock.querySelector(".clock-time");
    if (time) time.textContent = format(now);
  }, 100);
})();
