// Otto board countdowns (dashboard.md O2, L7): run in the browser from the last clock frame
// (sim_now, speed, paused), never by polling. While the clock is paused every bar is frozen.
(function () {
  "use strict";
  var seen = new WeakMap();

  function simNow() {
    var clock = document.getElementById("sim-clock");
    if (!clock) return null;
    if (!seen.has(clock)) seen.set(clock, Date.now());
    var base = Number(clock.dataset.simNow);
    if (clock.dataset.paused === "true") return base;
    var elapsed = Math.min((Date.now() - seen.get(clock)) / 1000, 5); // never far ahead of the server
    return base + elapsed * Number(clock.dataset.speed || 1);
  }

  function tick() {
    var now = simNow();
    if (now === null) return;
    var bars = document.querySelectorAll(".otto-countdown[data-ends]");
    for (var i = 0; i < bars.length; i++) {
      var el = bars[i];
      var starts = Number(el.dataset.starts), ends = Number(el.dataset.ends);
      var left = Math.max(0, Math.min(ends - now, ends - starts));
      var bar = el.querySelector(".bar");
      if (bar) bar.style.width = (100 * left / Math.max(ends - starts, 1e-9)).toFixed(1) + "%";
      var text = el.querySelector(".remaining");
      if (text) text.textContent = left.toFixed(1) + " s";
      el.dataset.left = left.toFixed(2);
    }
    var texts = document.querySelectorAll(".otto-countdown-text[data-until]");
    for (var j = 0; j < texts.length; j++) {
      var t = texts[j];
      t.textContent = Math.max(0, Number(t.dataset.until) - now).toFixed(1) + " s";
    }
  }

  setInterval(tick, 100);
  document.addEventListener("htmx:wsAfterMessage", tick);
})();
