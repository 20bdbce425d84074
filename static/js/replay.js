// Auction replay keys and the play timer (dashboard.md A4). Every step is an htmx link
// (hx-get + hx-push-url), so this only clicks them: Home, ←, Space, →, End, + and −.
(function () {
  "use strict";
  const SPEEDS = ["0.5", "1", "2", "4"];
  const STEP_MS = 1000;
  let playing = false;
  let timer = null;
  let speed = sessionStorage.getItem("replay-speed") || "1";

  const control = (name) => document.querySelector(`#replay [data-replay="${name}"]`);
  const state = () => document.querySelector("#replay .replay-state");

  function atEnd() {
    const s = state();
    return !s || Number(s.dataset.step) >= Number(s.dataset.last);
  }

  function sync() {
    const play = control("play");
    if (play) {
      play.setAttribute("aria-pressed", String(playing));
      play.textContent = playing ? "❚❚ pause" : "▶ play";
    }
    const select = control("speed");
    if (select) select.value = speed;
  }

  function schedule() {
    clearTimeout(timer);
    if (!playing) return;
    if (atEnd()) { playing = false; sync(); return; }
    timer = setTimeout(() => { const step = control("step"); if (step) step.click(); },
                       STEP_MS / Number(speed));
  }

  function setPlaying(value) { playing = value; sync(); schedule(); }

  function setSpeed(value) {
    if (!SPEEDS.includes(value)) return;
    speed = value;
    sessionStorage.setItem("replay-speed", speed);
    sync();
    schedule();
  }

  function shiftSpeed(delta) {
    const i = SPEEDS.indexOf(speed) + delta;
    if (i >= 0 && i < SPEEDS.length) setSpeed(SPEEDS[i]);
  }

  document.addEventListener("click", (event) => {
    if (event.target.closest('#replay [data-replay="play"]')) setPlaying(!playing);
  });
  document.addEventListener("change", (event) => {
    if (event.target.matches('#replay [data-replay="speed"]')) setSpeed(event.target.value);
  });
  // A 4xx answer (a deleted auction, a bad page) carries a message: show it in place.
  document.addEventListener("htmx:beforeSwap", (event) => {
    const target = event.detail.target;
    const status = event.detail.xhr.status;
    if (target && (target.id === "replay" || target.id === "cell-pages") && status >= 400 && status < 500) {
      event.detail.shouldSwap = true;
      event.detail.isError = false;
    }
  });
  // After each swap the controls are new elements: restore their state, go on playing.
  document.addEventListener("htmx:afterSettle", (event) => {
    if (event.detail.target && event.detail.target.id === "replay") { sync(); schedule(); }
  });

  const KEYS = {
    Home: () => control("first"), ArrowLeft: () => control("back"),
    ArrowRight: () => control("step"), End: () => control("last"),
  };
  document.addEventListener("keydown", (event) => {
    if (event.altKey || event.ctrlKey || event.metaKey) return;
    if (event.target.closest("input, select, textarea, [contenteditable]")) return;
    if (!document.getElementById("replay")) return;
    if (event.key === " " || event.key === "Spacebar") {
      if (event.target.closest("button")) return;  // the button's own click toggles
      event.preventDefault();
      setPlaying(!playing);
    } else if (event.key === "+" || event.key === "=") {
      shiftSpeed(1);
    } else if (event.key === "-") {
      shiftSpeed(-1);
    } else if (KEYS[event.key]) {
      const link = KEYS[event.key]();
      if (link) { event.preventDefault(); playing = false; sync(); clearTimeout(timer); link.click(); }
    }
  });
  document.addEventListener("DOMContentLoaded", sync);
  sync();
})();
