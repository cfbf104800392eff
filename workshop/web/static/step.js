// The race stepper: a walk over the tree of every schedule that the
// scenario tests exported (go test ./scenarios -run TestStepper). Nothing
// runs here: a move follows an edge of the tree, undo goes back up it.
"use strict";
(function () {
  const root = document.getElementById("stepper");
  const v = root.dataset.v, s = root.dataset.s;
  let tree = null;
  let path = [0];            // node indices from the root
  const visited = new Set(); // leaves reached, for "every branch tried"
  window.lastMoveMs = 0;     // how long the last move took to draw (read by the browser tests)

  const el = (tag, attrs, ...kids) => {
    const e = document.createElement(tag);
    for (const [k, val] of Object.entries(attrs || {})) {
      if (k === "class") e.className = val; else e.setAttribute(k, val);
    }
    for (const kid of kids) e.append(kid);
    return e;
  };
  const node = () => tree.nodes[path[path.length - 1]];
  const steps = () => path.slice(1).map(i => tree.nodes[i].step);

  function lanes(lines) {
    const sessions = [];
    for (const l of lines) if (l.session && !sessions.includes(l.session)) sessions.push(l.session);
    const table = el("table", { class: "lanes" });
    const head = el("tr", {}, el("th", { class: "lbl" }, "step"));
    for (const x of sessions) head.append(el("th", {}, x));
    table.append(el("thead", {}, head));
    const body = el("tbody");
    const waiting = {};
    for (const l of lines) {
      const wait = l.result === "<waiting>";
      if (l.session && l.session in waiting && (l.step !== waiting[l.session] || !wait)) delete waiting[l.session];
      const fail = (l.text || "").startsWith("FAIL: ");
      const tr = el("tr", { class: "k-" + (wait ? "wait" : fail ? "fail" : l.session ? (l.step ? "stmt" : "note") : "remark") });
      if (!l.session) {
        tr.append(el("td", { class: "lbl" }), el("td", { class: "remark", colspan: String(sessions.length) }, (fail ? "✗ " : "") + l.text));
      } else {
        tr.append(el("td", { class: "lbl" }, l.session + (l.step ? l.step : "")));
        for (const x of sessions) {
          if (x === l.session) {
            const td = el("td", { class: "here" });
            if (wait) td.append(el("span", { class: "waitmark" }, "⏳ waiting"), " ");
            td.append(el("code", {}, l.text));
            if (l.result && !wait) td.append(el("div", { class: "res" }, l.result));
            tr.append(td);
          } else if (x in waiting) {
            tr.append(el("td", { class: "waitbar", title: "waiting for the lock" }, el("span", { class: "sr" }, "waiting")));
          } else tr.append(el("td"));
        }
      }
      if (wait) waiting[l.session] = l.step;
      body.append(tr);
    }
    table.append(body);
    return table;
  }

  function draw() {
    const t0 = performance.now();
    const n = node();
    const sessions = document.getElementById("sessions");
    sessions.replaceChildren();
    for (const st of n.sessions || []) {
      const card = el("div", { class: "session s-" + st.state, "data-session": st.name });
      card.append(el("h2", {}, "Session " + st.name));
      if (st.state === "ready") {
        card.append(el("p", {}, "next: ", el("b", {}, st.step)), el("pre", {}, st.text));
        const b = el("button", { type: "button", class: "stepbtn", id: "step-" + st.name, "aria-keyshortcuts": st.name.toLowerCase() },
          "Step " + st.name + " (" + st.step + ") ", el("kbd", {}, st.name));
        b.addEventListener("click", () => move(st.name));
        card.append(b);
      } else if (st.state === "waiting") {
        card.append(el("p", {}, "⏳ ", el("b", {}, st.step), " is waiting for the write lock" +
          (st.waitingOn ? " held by " + st.waitingOn.join(", ") : "") + ": it cannot be chosen"), el("pre", {}, st.text));
        card.append(el("button", { type: "button", class: "stepbtn", id: "step-" + st.name, disabled: "" }, "Waiting on " + (st.waitingOn || ["the lock"]).join(", ")));
      } else {
        card.append(el("p", {}, "answered: ", el("b", {}, st.answer || "")));
      }
      sessions.append(card);
    }
    const sched = steps().join(" ");
    document.getElementById("schedule").textContent = sched ? "schedule: " + sched : "no step taken yet";
    document.getElementById("undo").disabled = path.length === 1;
    const leaf = n.leaf >= 0 ? tree.leaves[n.leaf] : null;
    if (leaf) visited.add(n.leaf);
    const end = document.getElementById("end");
    end.replaceChildren();
    if (leaf) {
      const held = !leaf.failures || leaf.failures.length === 0;
      end.className = "end " + (!held ? "broken" : leaf.neutral ? "neutral" : "held");
      end.append(el("h2", {}, !held ? "✗ A guarantee broke" + (tree.breaking ? " — level won!" : "") :
        leaf.neutral ? "○ Could not judge the handler" : "✓ Every guarantee held"));
      end.append(el("p", {}, "Outcome: " + leaf.outcome));
      if (held && leaf.neutral) end.append(el("p", {}, leaf.neutral));
      if (!held) {
        const ul = el("ul", { class: "failures" });
        for (const f of leaf.failures) ul.append(el("li", {}, "✗ " + f));
        end.append(ul);
      }
      end.append(el("p", {}, "Schedule: ", el("code", { id: "final-schedule" }, leaf.schedule),
        " — replay it with labtest.Plan(\"" + leaf.schedule + "\")"));
    }
    const ex = document.getElementById("explored");
    ex.textContent = "explored " + visited.size + " of " + tree.leaves.length + " schedules";
    if (tree.breaking === 0 && visited.size === tree.leaves.length) {
      end.append(el("p", { class: "unbreakable", id: "unbreakable" }, "Every branch tried. " + tree.unbreakable));
    }
    const below = tree.leaves[n.below];
    document.getElementById("transcript").replaceChildren(el("h2", {}, "Transcript so far"), lanes(below.lines.slice(0, n.lines)));
    window.lastMoveMs = performance.now() - t0;
  }

  function move(session) {
    const n = node();
    if (!n.next || !(session in n.next)) return; // not ready: waiting, done, or the run is over
    path.push(n.next[session]);
    draw();
    const b = document.getElementById("step-" + session);
    if (b && !b.disabled) b.focus();
  }
  function undo() { if (path.length > 1) { path.pop(); draw(); } }
  function restart() { path = [0]; draw(); }

  document.getElementById("undo").addEventListener("click", undo);
  document.getElementById("restart").addEventListener("click", restart);
  document.getElementById("level").addEventListener("change", e => e.target.form.submit());
  document.getElementById("race").addEventListener("change", e => e.target.form.submit());
  document.addEventListener("keydown", e => {
    if (e.ctrlKey || e.metaKey || e.altKey || e.target.tagName === "SELECT") return;
    const k = e.key.toUpperCase();
    if (k === "U" || e.key === "Backspace") { e.preventDefault(); undo(); }
    else if (k === "R") restart();
    else if (/^[A-Z]$/.test(k)) move(k);
  });
  fetch("/tree?v=" + encodeURIComponent(v) + "&s=" + encodeURIComponent(s))
    .then(r => { if (!r.ok) throw new Error(r.status); return r.json(); })
    .then(t => { tree = t; draw(); root.dataset.ready = "1"; })
    .catch(err => { document.getElementById("sessions").textContent = "could not load the tree: " + err; });
})();
