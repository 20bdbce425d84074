// The foundation upload (plans.md 3.6): refuse a capture over the limit before sending it,
// and show the upload's progress; the server answers the whole page, whose foundations
// section replaces this one's. A replace or a delete (plans.md 3.3) asks first, through
// the one data-confirm rule of dashboard.js: the server does neither unless the form says
// the operator confirmed.
(function () {
  "use strict";
  function wire() {
    const form = document.getElementById("foundation-form");
    if (form) form.addEventListener("submit", submit);
  }
  function submit(event) {
    const form = event.target;
    const files = form.querySelector('input[type="file"]').files;
    let total = 0;
    for (const f of files) total += f.size;
    const limit = Number(form.dataset.limit);
    let shown = document.querySelector("[data-error]");
    if (total > limit) {
      event.preventDefault();
      if (!shown) {
        shown = document.createElement("p");
        shown.className = "foundation-error";
        shown.setAttribute("role", "alert");
        shown.dataset.error = "";
        form.before(shown);
      }
      // The server's words (dashboard.md U5): sizes in MB, never raw bytes.
      shown.textContent = "capture too large: " + (total / 1048576).toFixed(1) + " MB, the limit is " +
        Math.round(limit / 1048576) + " MB";
      return;
    }
    if (!window.XMLHttpRequest || !window.FormData) return; // the plain form post still works
    event.preventDefault();
    const progress = form.querySelector("progress");
    progress.hidden = false;
    const xhr = new XMLHttpRequest();
    xhr.open("POST", form.action);
    xhr.upload.addEventListener("progress", function (e) {
      if (e.lengthComputable) progress.value = Math.round((100 * e.loaded) / e.total);
    });
    xhr.addEventListener("load", function () {
      const answer = new DOMParser().parseFromString(xhr.responseText, "text/html");
      const fresh = answer.querySelector("section.foundations");
      const here = document.querySelector("section.foundations");
      if (fresh && here) {
        here.replaceWith(document.importNode(fresh, true));
        wire();
      }
    });
    xhr.addEventListener("error", function () {
      progress.hidden = true;
      alert("the upload failed: the server did not answer");
    });
    xhr.send(new FormData(form));
  }
  wire();
})();
