// Keyboard and clipboard helpers. Kept out of the templates: the CSP allows no inline script.
(function () {
  "use strict";

  function typing(evt) {
    var t = evt.target;
    return t.isContentEditable || /^(INPUT|TEXTAREA|SELECT)$/.test(t.tagName);
  }

  // j / k: next / previous turn on a call page.
  function moveTurn(step) {
    var turns = Array.from(document.querySelectorAll("#turns > .turn"));
    if (!turns.length) return;
    var current = turns.findIndex(function (t) { return t === document.activeElement; });
    if (current === -1) {
      var y = 80;
      current = turns.findIndex(function (t) { return t.getBoundingClientRect().bottom > y; });
      if (step > 0 && current >= 0 && turns[current].getBoundingClientRect().top <= y) current -= 1;
      if (step < 0) current += 1;
    }
    var next = turns[Math.min(turns.length - 1, Math.max(0, current + step))];
    next.focus({ preventScroll: true });
    next.scrollIntoView({ block: "start" });
  }

  // n / p: next / previous finding at its message on a turn page.
  var findingAt = -1;
  function moveFinding(step) {
    var found = Array.from(document.querySelectorAll(".messages .finding"));
    if (!found.length) return;
    findingAt = Math.min(found.length - 1, Math.max(0, findingAt + step));
    found[findingAt].focus({ preventScroll: true });
    found[findingAt].scrollIntoView({ block: "center" });
  }

  document.addEventListener("keydown", function (evt) {
    if (evt.ctrlKey || evt.metaKey || evt.altKey || typing(evt)) return;
    if (evt.key === "j") { moveTurn(1); evt.preventDefault(); }
    else if (evt.key === "k") { moveTurn(-1); evt.preventDefault(); }
    else if (document.querySelector('[data-shortcut-key="' + evt.key + '"]')) {
      // One key for a button (a: assign this call to me).
      document.querySelector('[data-shortcut-key="' + evt.key + '"]').click();
      evt.preventDefault();
    }
    else if (evt.key === "n") { moveFinding(1); evt.preventDefault(); }
    else if (evt.key === "p") { moveFinding(-1); evt.preventDefault(); }
    else {
      var link = document.querySelector('a[data-shortcut="' + evt.key + '"]');
      if (link && (evt.key === "[" || evt.key === "]")) { link.click(); evt.preventDefault(); }
    }
  });

  // A form posted through htmx (the page updates live) clears itself once accepted.
  document.addEventListener("htmx:afterRequest", function (evt) {
    var form = evt.detail.elt;
    if (form && form.hasAttribute && form.hasAttribute("data-reset-on-success") && evt.detail.successful) {
      form.reset();
    }
  });

  // A refused htmx post (400, 403) says why where the page keeps its alerts.
  document.addEventListener("htmx:responseError", function (evt) {
    var box = document.getElementById("form-error");
    if (!box) return;
    var doc = new DOMParser().parseFromString(evt.detail.xhr.responseText || "", "text/html");
    var reason = doc.querySelector(".form-errors");
    box.textContent = "Not changed: " + (reason ? reason.textContent : evt.detail.xhr.status + " " + evt.detail.xhr.statusText);
    box.hidden = false;
  });
  document.addEventListener("htmx:afterRequest", function (evt) {
    var box = document.getElementById("form-error");
    if (box && evt.detail.successful) box.hidden = true;
  });

  // Forms that cannot be undone ask first (inline onsubmit would break the CSP).
  document.addEventListener("submit", function (evt) {
    var message = evt.target.getAttribute("data-confirm");
    if (message && !window.confirm(message)) evt.preventDefault();
  });

  document.addEventListener("click", function (evt) {
    var button = evt.target.closest("[data-copy]");
    if (!button) return;
    var source = document.getElementById(button.getAttribute("data-copy"));
    if (!source) return;
    var text = source.textContent;
    function done(ok) {
      var old = button.textContent;
      button.textContent = ok ? "Copied" : "Copy failed";
      setTimeout(function () { button.textContent = old; }, 1500);
    }
    if (navigator.clipboard && window.isSecureContext) {
      navigator.clipboard.writeText(text).then(function () { done(true); }, function () { done(false); });
    } else {
      var range = document.createRange();
      range.selectNodeContents(source);
      var sel = window.getSelection();
      sel.removeAllRanges();
      sel.addRange(range);
      done(document.execCommand("copy"));
    }
  });
})();
