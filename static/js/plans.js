// The plan composer (plans.md 1.5): pick a change, fill its fields (the chaos controls'
// choices), "Add change" appends its command-line form to the changes box.
(function () {
  "use strict";
  function quote(value) {
    return /[\s'"]/.test(value) ? "'" + value.replace(/'/g, "'\\''") + "'" : value;
  }
  function init() {
    var kind = document.getElementById("change-kind");
    var add = document.getElementById("change-add");
    var box = document.getElementById("plan-changes");
    if (!kind || !add || !box) return;
    var sets = document.querySelectorAll(".change-fields");
    function show() {
      sets.forEach(function (set) { set.hidden = set.dataset.kind !== kind.value; });
    }
    kind.addEventListener("change", show);
    show();
    add.addEventListener("click", function () {
      var set = document.querySelector('.change-fields[data-kind="' + kind.value + '"]');
      var words = [kind.value];
      set.querySelectorAll("[data-field]").forEach(function (input) {
        var value = (input.value || "").trim();
        if (value !== "") words.push(input.dataset.field + "=" + quote(value));
      });
      var at = (document.getElementById("change-at").value || "").trim();
      if (at !== "" && at !== "0") words.push("at=" + at);
      var text = box.value.replace(/\s+$/, "");
      box.value = (text ? text + "\n" : "") + words.join(" ");
    });
  }
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", init);
  else init();

  // No polling (dashboard.md L7): a plan's page and the grid's zone-loss chips fetch
  // themselves again when the live layer says something changed (a frame of the plan's
  // own group, of the cluster, or of the clock), at most once per interval.
  var last = {}, waiting = {};
  function again(id, url, swap, interval) {
    if (waiting[id]) return;
    var now = Date.now(), gap = interval - (now - (last[id] || 0));
    if (gap > 0) {
      waiting[id] = true;
      setTimeout(function () { waiting[id] = false; again(id, url, swap, interval); }, gap);
      return;
    }
    last[id] = now;
    // A failed fetch is already an htmx:sendError (the next frame asks again); its
    // rejected promise must not also be an uncaught error in the console (dashboard.md L10).
    window.htmx.ajax("GET", url, {target: "#" + id, swap: swap}).catch(function () {});
  }
  document.addEventListener("htmx:wsAfterMessage", function () {
    var plan = document.getElementById("plan-result");
    if (plan && plan.dataset.follow === "true") {
      again("plan-result", plan.dataset.url, "outerHTML", plan.dataset.status === "running" ? 300 : 2000);
    }
    var chips = document.getElementById("zone-loss");
    if (chips) again("zone-loss", chips.getAttribute("hx-get"), "innerHTML", 10000);
  });
})();
