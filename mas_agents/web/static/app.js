// mas serve: the replay filters (private, done by, seen by), live replays, progress lines and the human seat's refresh.
// Served from /static only (the Content-Security-Policy allows no inline script). Every piece of
// text inserted here is HTML the server rendered and escaped, or set through textContent.
"use strict";

function applyPrivate() {
  // three filters of a replay: private events shown or not, "done by" (what a player did and its own
  // private events) and "seen by" (what a seat could see: data-vis holds "*" or names it)
  const box = document.getElementById("toggle-private");
  const who = document.getElementById("owner-filter");
  const seen = document.getElementById("seen-by");
  if (!box) return;
  document.body.classList.toggle("show-private", box.checked);
  const owner = who ? who.value : "";
  const seat = seen ? seen.value : "";
  document.body.classList.toggle("seen-by", !!seat);
  let nSeen = 0, n = 0;
  document.querySelectorAll("#events .ev").forEach(function (ev) {
    const mine = !owner || ev.dataset.actor === owner || (ev.dataset.owner || "").split(", ").indexOf(owner) >= 0;
    ev.classList.toggle("filtered", !mine);
    const vis = (ev.dataset.vis || "").split("|");
    const saw = !seat || vis.indexOf("*") >= 0 || vis.indexOf(seat) >= 0;
    ev.classList.toggle("unseen", !saw);
    ev.classList.toggle("seen", !!seat && saw);
    n += 1;
    if (saw) nSeen += 1;
  });
  const note = document.getElementById("seen-note");
  if (note) {
    note.hidden = !seat;
    if (seat) note.firstChild.textContent = "Showing what " + seat + " could see: the public events and those shown to "
      + seat + " (" + nSeen + " of " + n + " rows). ";
  }
  hideEmptyHeadings();
}

function hideEmptyHeadings() {
  // a round or phase heading whose events are all filtered out is hidden too
  const evs = Array.prototype.slice.call(document.querySelectorAll("#events .ev"));
  const shown = {};
  evs.forEach(function (ev) {
    if (getComputedStyle(ev).display === "none") return;
    shown[ev.dataset.group] = true;
    shown[ev.dataset.group + "\u0000" + ev.dataset.phase] = true;
  });
  document.querySelectorAll("#events h2.round, #events h3.phase").forEach(function (h) {
    const key = h.dataset.phase ? h.dataset.group + "\u0000" + h.dataset.phase : h.dataset.group;
    h.classList.toggle("empty", !shown[key]);
  });
  // and "Go to" offers only the parts shown (MAgIC's setup is private events only)
  document.querySelectorAll("#round-nav a[data-group]").forEach(function (a) {
    a.classList.toggle("empty", !shown[a.dataset.group]);
  });
}

function seenByChanged(sel) {
  // the filter is part of the address, so a link to it can be shared
  const url = new URL(window.location.href);
  if (sel.value) url.searchParams.set("seen_by", sel.value); else url.searchParams.delete("seen_by");
  window.history.replaceState(null, "", url.toString());
  applyPrivate();
}

function pollEvents(box) {
  const url = box.dataset.live;
  if (!url) return;
  fetch(url + "?after=" + encodeURIComponent(box.dataset.next || "0"), {cache: "no-store"})
    .then(function (r) {
      const next = r.headers.get("X-Next"), done = r.headers.get("X-Finished") === "1";
      return r.text().then(function (html) {
        if (html.trim()) box.insertAdjacentHTML("beforeend", html);
        if (next) box.dataset.next = next;
        applyPrivate();
        if (done) {   // the result is written: reload once for the truth section and totals
          window.location.reload();
        } else {
          setTimeout(function () { pollEvents(box); }, 1000);
        }
      });
    })
    .catch(function () { setTimeout(function () { pollEvents(box); }, 3000); });
}

function pollProgress(el) {
  // a composite run's parts (p.running) or a running evaluation (p.live); data-reload: the page
  // shows more than the line (an evaluation's characters), so a change reloads it
  fetch(el.dataset.src, {cache: "no-store"}).then(function (r) { return r.json(); }).then(function (p) {
    const before = el.firstChild.textContent.trim();
    const going = (p.running && p.running.length) || p.live;
    if (el.dataset.reload && (p.text !== before || !going)) { window.location.reload(); return; }
    el.firstChild.textContent = p.text + " ";
    const bar = el.querySelector("progress");
    if (bar && p.total) { bar.max = p.total; bar.value = p.done; }
    if (going) setTimeout(function () { pollProgress(el); }, 2000);
  }).catch(function () { setTimeout(function () { pollProgress(el); }, 5000); });
}

function pollSeat(page) {
  // data-sig: what the server showed; any change since (a new message, a new request, the end)
  // reloads the page, unless the person is typing an answer
  const sig = page.dataset.sig;
  function tick() {
    fetch(page.dataset.poll, {cache: "no-store"}).then(function (r) { return r.json(); }).then(function (s) {
      if (s.sig !== sig) {
        const t = document.getElementById("answer-text");
        if (!t || !t.value) { window.location.reload(); return; }
      }
      if (s.state === "running") setTimeout(tick, 700);
      else window.location.reload();   // finished or stopped: the page says so, and polls no more
    }).catch(function () { setTimeout(tick, 2000); });
  }
  tick();
}

document.addEventListener("DOMContentLoaded", function () {
  const box = document.getElementById("toggle-private");
  if (box) {
    box.addEventListener("change", applyPrivate);
    const who = document.getElementById("owner-filter");
    if (who) who.addEventListener("change", function () { if (who.value) box.checked = true; applyPrivate(); });
    const seen = document.getElementById("seen-by");
    if (seen) seen.addEventListener("change", function () { seenByChanged(seen); });
    applyPrivate();
    if (window.location.hash) {   // a link to a round or an event: bring it into view once filtered
      const target = document.getElementById(decodeURIComponent(window.location.hash.slice(1)));
      if (target) target.scrollIntoView();
    }
  }
  const events = document.getElementById("events");
  if (events && events.dataset.live) setTimeout(function () { pollEvents(events); }, 1000);
  const prog = document.getElementById("progress");
  if (prog && prog.dataset.src) setTimeout(function () { pollProgress(prog); }, 2000);
  const seat = document.getElementById("seat-page");
  if (seat && seat.dataset.poll) pollSeat(seat);   // only a game being played is polled
});
