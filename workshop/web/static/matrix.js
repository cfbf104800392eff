// The matrix fills in while its live run goes: every second the page asks
// /status whether anything changed, and if so fetches itself again and
// swaps the board (the banner, the legend and the table) for the new one,
// keeping the keyboard focus on the cell that had it. It stops once the
// run has ended. Without script the page is a snapshot; reload shows more.
(function () {
  "use strict";
  var board = document.getElementById("board");
  if (!board || board.dataset.running !== "true") return;
  var slug = board.dataset.b, version = board.dataset.version;
  function poll() {
    fetch("/status?b=" + encodeURIComponent(slug), {cache: "no-store"})
      .then(function (r) { return r.json(); })
      .then(function (st) {
        if (String(st.version) === version) { setTimeout(poll, 1000); return; }
        return fetch("/?b=" + encodeURIComponent(slug), {cache: "no-store"})
          .then(function (r) { return r.text(); })
          .then(function (html) {
            var doc = new DOMParser().parseFromString(html, "text/html");
            var next = doc.getElementById("board"), tabs = doc.getElementById("tabs");
            if (!next) { setTimeout(poll, 1000); return; }
            var f = document.activeElement, v = f && f.dataset ? f.dataset.v : null, s = f && f.dataset ? f.dataset.s : null;
            board.replaceWith(next);
            if (tabs) document.getElementById("tabs").replaceWith(tabs);
            board = next;
            version = next.dataset.version;
            if (v && s) {
              var again = board.querySelector('a[data-v="' + CSS.escape(v) + '"][data-s="' + CSS.escape(s) + '"]');
              if (again) again.focus();
            }
            if (board.dataset.running === "true") setTimeout(poll, 1000);
          });
      })
      .catch(function () { setTimeout(poll, 3000); });
  }
  setTimeout(poll, 1000);
})();
