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

  // An hourglass drawn inline: no font on a Debian machine has U+23F3.
  function hourglass() {
    const ns = "http://www.w3.org/2000/svg";
    const svg = document.createElementNS(ns, "svg");
    svg.setAttribute("viewBox", "0 0 16 16");
    svg.setAttribute("class", "icon");
    svg.setAttribute("aria-hidden", "true");
    const p = document.createElementNS(ns, "path");
    p.setAttribute("d", "M3 1h10v2h-1c0 2.6-1.6 4-3.2 5 1.6 1 3.2 2.4 3.2 5h1v2H3v-2h1c0-2.6 1.6-4 3.2-5C5.6 7 4 5.6 4 3H3z");
    svg.append(p);
    return svg;
  }
  const over = st => !!st && st.accounts.some(a => a.balance > a.most);
  // brokeAt is the step along the path that first took a balance past
  // what exactly once allows: where the guarantee broke, as it happened.
  function brokeAt() {
    for (let i = 1; i < path.length; i++) {
      if (over(tree.nodes[path[i]].state) && !over(tree.nodes[path[i - 1]].state)) return tree.nodes[path[i]].step;
    }
    return "";
  }

  function lanes(lines, broke) {
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
      const label = l.session ? l.session + (l.step ? l.step : "") : "";
      const tr = el("tr", { class: "k-" + (wait ? "wait" : fail ? "fail" : l.session ? (l.step ? "stmt" : "note") : "remark") +
        (broke && label === broke && !wait ? " broke" : ""), "data-label": label });
      if (!l.session) {
        tr.append(el("td", { class: "lbl" }), el("td", { class: "remark", colspan: String(sessions.length) }, (fail ? "✗ " : "") + l.text));
      } else {
        tr.append(el("td", { class: "lbl" }, label));
        for (const x of sessions) {
          if (x === l.session) {
            const td = el("td", { class: "here" });
            if (wait) td.append(el("span", { class: "waitmark" }, hourglass(), " waiting"), " ");
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

  // The database at this node, as the engine read it (report.DBState):
  // the balances, and how the step that led here moved them; the inbox;
  // the write lock; what the sessions read; what is not committed yet.
  function database(n, prev, broke) {
    const st = n.state;
    const box = document.getElementById("db");
    box.replaceChildren();
    if (!st) return;
    box.append(el("h2", {}, "Database ", el("small", {}, "committed rows: what another connection reads")));
    const table = el("table", { class: "accounts" });
    table.append(el("thead", {}, el("tr", {}, el("th", {}, "account"), el("th", {}, "balance"),
      el("th", {}, "its inbox rows"), el("th", {}, "exactly once allows"))));
    const body = el("tbody");
    const notes = [];
    for (const a of st.accounts) {
      const was = prev && prev.accounts.find(x => x.id === a.id);
      const moved = was && was.balance !== a.balance;
      const isOver = a.balance > a.most;
      const here = isOver && broke === n.step;
      const bal = el("td", { class: "balance" + (moved ? " moved" : "") + (isOver ? " over" : "") + (here ? " broke-here" : ""),
        "data-balance": String(a.balance) });
      if (moved) bal.append(el("span", { class: "was" }, String(was.balance)), " → ", el("b", {}, String(a.balance)));
      else bal.append(String(a.balance));
      if (moved) bal.append(el("small", { class: "by" }, " " + n.step));
      body.append(el("tr", { "data-account": String(a.id) }, el("th", {}, String(a.id)), bal,
        el("td", {}, String(a.inbox)), el("td", {}, "at most " + a.most)));
      if (here) notes.push(el("p", { class: "alert broke-here", id: "broke" }, "✗ " + n.step + " credited account " + a.id +
        " a second time: " + a.balance + " is past the " + a.most + " that exactly once allows. The guarantee broke here."));
      else if (isOver) notes.push(el("p", { class: "alert", id: "broke" }, "✗ account " + a.id + " was credited twice at " + broke +
        ": " + a.balance + ", exactly once allows " + a.most + "."));
      else if (a.balance - a.seed !== a.inbox) notes.push(el("p", { class: "warn" }, (a.balance - a.seed - a.inbox) + " of account " + a.id +
        "'s balance has no inbox row yet: a crash now, and the redelivery credits it again."));
    }
    table.append(body);
    box.append(table, ...notes);
    const inbox = el("ul", { class: "inbox", id: "inbox" });
    for (const r of st.inbox || []) inbox.append(el("li", {}, el("code", {}, r.source + "/" + r.eventId), " → account " + r.accountId + ", " + r.amount));
    if (!inbox.childElementCount) inbox.append(el("li", { class: "none" }, "no row"));
    box.append(el("div", { class: "row" }, el("b", {}, "Inbox"), inbox));
    if (st.unread) box.append(el("p", { class: "hint" }, "Unchanged: " + st.unread));
    const waiting = (n.sessions || []).filter(s => s.state === "waiting").map(s => s.name);
    const lock = el("p", { class: "lock" + (st.writer ? " held" : ""), id: "lock" }, el("b", {}, "Write lock "),
      st.writer ? "held by " + st.writer : "free");
    if (st.readers && st.readers.length) lock.append("; read lock held by " + st.readers.join(", "));
    if (waiting.length) lock.append("; ", hourglass(), waiting.join(", ") + " waiting for it");
    box.append(lock);
    if (st.reads && st.reads.length) {
      const ul = el("ul", { class: "reads", id: "reads" });
      for (const r of st.reads) {
        const got = r.err ? "error" : r.rows === 0 ? "no row" : r.rows === 1 ? "(" + (r.first || []).join(", ") + ")" :
          r.rows + " rows, first (" + (r.first || []).join(", ") + ")";
        ul.append(el("li", { "data-step": r.step }, el("b", {}, r.step), " " + r.table + ": " + got));
      }
      box.append(el("div", { class: "row" }, el("b", {}, "Read"), ul));
    }
    if (st.pending && st.pending.length) {
      const ul = el("ul", { class: "pending", id: "pending" });
      for (const w of st.pending) ul.append(el("li", {}, el("b", {}, w.step), " " + w.op + " " + w.table + " (" + w.rows + (w.rows === 1 ? " row)" : " rows)")));
      box.append(el("div", { class: "row" }, el("b", {}, "Not committed"), ul),
        el("p", { class: "hint" }, "No other session sees these writes until the transaction commits."));
    }
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
        card.append(el("p", {}, hourglass(), " ", el("b", {}, st.step), " is waiting for the write lock" +
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
    const broke = brokeAt();
    database(n, path.length > 1 ? tree.nodes[path[path.length - 2]].state : null, broke);
    const below = tree.leaves[n.below];
    document.getElementById("transcript").replaceChildren(el("h2", {}, "Transcript so far"), lanes(below.lines.slice(0, n.lines), broke));
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
