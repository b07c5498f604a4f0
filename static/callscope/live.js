// Live updates for pages that hold an htmx websocket (ws-connect).
//
// The server sends partials whose root elements carry a stable id and a
// data-rev. Wrapped in hx-swap-oob="afterbegin:#x" / "beforeend:#x", they are
// upserts: a child already on the page is replaced in place (only by a newer
// rev, so a late message never rolls a row back), a new one is inserted in
// order of data-key, following the container's data-order. After every
// (re)connect the page tells the server what it shows and gets what it missed.
(function () {
  "use strict";

  function rev(el) { return Number(el.getAttribute("data-rev") || 0); }
  function key(el) { return Number(el.getAttribute("data-key") || 0); }

  function insertOrdered(container, el) {
    var desc = container.getAttribute("data-order") === "desc";
    var children = container.children;
    for (var i = 0; i < children.length; i++) {
      var k = key(children[i]);
      if (desc ? key(el) > k : key(el) < k) { container.insertBefore(el, children[i]); return; }
    }
    container.appendChild(el);
  }

  function upsert(container, el, matched) {
    var existing = el.id && document.getElementById(el.id);
    if (existing) {
      if (rev(el) > rev(existing)) { existing.replaceWith(el); htmx.process(el); }
      return;
    }
    if (container.hasAttribute("data-filtered") && !matched) {
      // A filtered list cannot tell whether a new call matches: say so instead.
      var notice = document.getElementById("filtered-new");
      if (notice) notice.hidden = false;
      return;
    }
    insertOrdered(container, el);
    htmx.process(el);
    document.querySelectorAll('[data-empty-for="' + container.id + '"]').forEach(function (e) { e.remove(); });
  }

  document.addEventListener("htmx:oobBeforeSwap", function (evt) {
    var d = evt.detail, target = d.target;
    if (!target || !target.hasAttribute("data-order")) {
      // A whole-element replacement: never let an older rev win.
      var incoming = d.fragment && d.fragment.firstElementChild;
      if (incoming && target && incoming.id === target.id && rev(incoming) && rev(incoming) <= rev(target)) {
        d.shouldSwap = false;
      }
      return;
    }
    d.shouldSwap = false;
    // Table rows come wrapped in a <template> (see calls/fragments.py).
    var source = d.fragment instanceof HTMLTemplateElement ? d.fragment.content : d.fragment;
    var matched = d.fragment.hasAttribute && d.fragment.hasAttribute("data-matched");
    Array.from(source.children).forEach(function (el) { upsert(target, document.importNode(el, true), matched); });
  });

  function status(state, label) {
    var s = document.getElementById("live-status");
    if (!s) return;
    s.setAttribute("data-state", state);
    s.querySelector(".label").textContent = label;
  }

  function resyncRequest(root) {
    if (root.getAttribute("data-live") === "call") {
      var keys = Array.from(document.querySelectorAll("#turns > [data-key]")).map(key);
      var after = keys.length ? Math.max.apply(null, keys) : 0;
      var first = keys.length ? Math.min.apply(null, keys) : 1;
      return { resync: true, after: after, first: first };
    }
    return { resync: true, filter: window.location.search };
  }

  document.addEventListener("htmx:wsOpen", function (evt) {
    var root = evt.target;
    status("live", "Live");
    evt.detail.socketWrapper.send(JSON.stringify(resyncRequest(root)));
    window.__callscopeLive = (window.__callscopeLive || 0) + 1;  // for browser tests
  });
  // The ws extension retries by itself only after abnormal closes (1006,
  // 1011-1013). A server that shuts down cleanly (a deploy: 1000/1001) must
  // not leave the page silently stale, so retry those too.
  var SELF_RETRIED = [1006, 1011, 1012, 1013];
  document.addEventListener("htmx:wsClose", function (evt) {
    status("down", "Reconnecting…");
    var code = evt.detail.event && evt.detail.event.code;
    if (SELF_RETRIED.indexOf(code) === -1 && document.body.contains(evt.target)) {
      var wrapper = evt.detail.socketWrapper;
      setTimeout(function () { wrapper.reconnect(); }, 1000 + Math.random() * 1000);
    }
  });
  document.addEventListener("htmx:wsError", function () { status("down", "Reconnecting…"); });
  // A call with no request or event for the idle timeout counts as ended.
  // Nothing is sent when that happens, so the page flips its own badges.
  setInterval(function () {
    var now = Date.now();
    document.querySelectorAll(".status[data-idle-at]").forEach(function (badge) {
      if (Number(badge.getAttribute("data-idle-at")) < now) {
        badge.removeAttribute("data-idle-at");
        badge.classList.replace("status-live", "status-ended");
        badge.textContent = "ended";
      }
    });
  }, 5000);

  document.addEventListener("htmx:wsBeforeMessage", function (evt) {
    if (evt.detail.message.indexOf('id="live-reload"') !== -1) {
      evt.preventDefault();
      window.location.reload();
    }
  });
})();
