"""The page of ``sortie play``: the ego view, the brief, time and steps left, stages and keys.

Served on loopback by ``PageServer``: ``GET /`` is the page, ``GET /play/state`` what it shows
(polled), ``POST /play/key`` a key press (``{"key", "seq", "scale", "report"}``), and for a
household round ``POST /play/subtask`` the subtask chosen (``{"seq", "action", "target",
"skill", "place"}``).
"""

from __future__ import annotations

import json
from typing import Any

from sortie.remote.bounded import BoundedServer, Request, Response, SameOrigin, allowed_hosts
from sortie.remote.human import Desk
from sortie.remote.wire import WireError

MAX_KEY_BYTES = 16 * 1024

PAGE = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>sortie play</title>
<style>
body { font: 15px system-ui, sans-serif; margin: 1.5em; display: flex; gap: 2em; }
#view { width: 384px; height: 384px; image-rendering: pixelated; background: #222; }
table { border-collapse: collapse; } td { padding: 2px 8px; border-bottom: 1px solid #ddd; }
.done { color: #080; } .active { font-weight: bold; } kbd { border: 1px solid #888;
  border-radius: 3px; padding: 0 4px; background: #f4f4f4; }
#status { font-weight: bold; margin: .5em 0; }
#views img, #goals img { width: 192px; height: 192px; image-rendering: pixelated; }
figure { display: inline-block; margin: 0 4px 4px 0; } figcaption { font-size: 12px; }
#subtask input { width: 11em; } #history { font-family: monospace; white-space: pre-line; }
</style></head><body>
<div><img id="view" alt="ego view"><div id="status">starting…</div>
<div id="numbers"></div><div id="events"></div></div>
<div style="max-width: 34em"><h2 id="episode">sortie play</h2><p id="text"></p>
<div id="goals"></div>
<h3>Stages</h3><table id="stages"></table>
<div id="drone" hidden><h3>Magnitude</h3><p id="scale"></p>
<p>Report: <input id="report" size="30" placeholder="sent with each action"></p></div>
<div id="household" hidden><div id="views"></div>
<p id="round"></p><p>Holding: <span id="inventory"></span></p><p id="feedback"></p>
<h3>Subtask</h3><form id="subtask">
<label>action <input id="action" list="actions" autocomplete="off"></label>
<label>target <input id="target" list="targets" autocomplete="off"></label><br>
<label>place (put) <input id="place" list="targets" autocomplete="off"></label>
<label>skill <input id="skill" list="skills" autocomplete="off"></label>
<button id="send" type="submit">send</button></form>
<datalist id="actions"></datalist><datalist id="targets"></datalist>
<datalist id="skills"></datalist>
<p id="skillroles"></p><h3>History</h3><div id="history"></div></div>
<div id="keyed"><h3>Keys</h3><table id="keys"></table></div></div>
<script>
let state = {seq: -1}, scale = 1.0, sent = -1;
const $ = (id) => document.getElementById(id);
const name = (k) => k === " " ? "Space" : k;
function show(s) {
  state = s;
  $("episode").textContent = s.episode || "sortie play";
  $("text").textContent = s.text || s.message || "";
  if (s.frame) $("view").src = "data:image/png;base64," + s.frame;
  const left = s.max_steps ? `, ${s.max_steps - s.step} steps left` : "";
  $("numbers").textContent = s.step === undefined ? "" :
    `step ${s.step}, ${s.time_left} s left${left}`;
  $("events").textContent = (s.events || []).join("; ");
  $("status").textContent = s.phase === "waiting" ? "your move" :
    s.phase === "ended" ? `episode ended: ${s.outcome} ${s.failure || ""}` :
    s.phase === "finished" ? `${s.message}; last episode: ${s.outcome}` : s.phase;
  $("stages").innerHTML = "";
  for (const st of s.stages || []) {
    const row = $("stages").insertRow(); row.className = st.status;
    row.insertCell().textContent = st.name; row.insertCell().textContent = st.status;
    row.insertCell().textContent = st.instruction;
  }
  $("keys").innerHTML = "";
  for (const k of s.keys || []) {
    const row = $("keys").insertRow();
    row.insertCell().innerHTML = "<kbd></kbd>"; row.cells[0].firstChild.textContent = name(k.key);
    row.insertCell().textContent = k.label;
  }
  $("drone").hidden = !(s.scales || []).length;
  figures("goals", s.goals);  // the brief's images, as the agents get them
  showHousehold(s);
  $("scale").textContent = (s.scales || []).map((v, i) =>
    `${i + 1}: ${v * 100}%${v === scale ? " ←" : ""}`).join("  ");
}
function options(id, values) {
  $(id).innerHTML = "";
  for (const v of values) {
    const o = document.createElement("option"); o.value = v; $(id).append(o);
  }
}
function figures(id, images) {
  $(id).innerHTML = "";
  for (const [name, data] of Object.entries(images || {})) {
    const f = document.createElement("figure"), img = document.createElement("img");
    img.src = "data:image/png;base64," + data; img.alt = name; f.append(img);
    const c = document.createElement("figcaption"); c.textContent = name; f.append(c);
    $(id).append(f);
  }
}
function showHousehold(s) {
  const on = Boolean(s.form);  // a family of subtasks: a form instead of keys
  $("household").hidden = !on; $("keyed").hidden = on; $("view").hidden = on;
  if (!on) return;
  figures("views", s.views);
  $("text").textContent = s.task || s.text || s.message || "";
  $("round").textContent = s.round === undefined ? "" :
    `round ${s.round + 1}, ${s.rounds_left} left`;
  $("inventory").textContent = (s.inventory || []).join(", ") || "nothing";
  const code = s.code ? ` (${s.code})` : "";
  $("feedback").textContent = s.feedback ? `Feedback: ${s.feedback}${code}` : "";
  $("history").textContent = (s.history || []).join("\\n") || "(nothing yet)";
  options("actions", s.actions || []); options("targets", s.targets || []);
  options("skills", (s.skills || []).map((k) => k.name));
  $("skillroles").textContent = (s.skills || []).map((k) => `${k.name}: ${k.role}`).join("; ");
}
async function poll() {
  try { const r = await fetch("/play/state"); show(await r.json()); } catch (e) {}
  setTimeout(poll, 100);
}
document.addEventListener("keydown", async (event) => {
  if (event.target === $("report")) { if (event.key !== "Enter") return; }
  const digit = Number(event.key);
  if (state.scales && digit >= 1 && digit <= state.scales.length) {
    scale = state.scales[digit - 1]; show(state); return;
  }
  if (!(state.keys || []).some((k) => k.key === event.key)) return;
  event.preventDefault();
  if (state.phase !== "waiting" || sent === state.seq) return;
  sent = state.seq;
  const body = {key: event.key, seq: state.seq, scale: scale, report: $("report").value || null};
  await fetch("/play/key", {method: "POST", headers: {"Content-Type": "application/json"},
                            body: JSON.stringify(body)});
});
$("subtask").addEventListener("submit", async (event) => {
  event.preventDefault();
  if (state.phase !== "waiting" || sent === state.seq) return;
  sent = state.seq;
  const body = {seq: state.seq, action: $("action").value, target: $("target").value,
                skill: $("skill").value, place: $("place").value || null};
  const answer = await fetch("/play/subtask", {method: "POST",
    headers: {"Content-Type": "application/json"}, body: JSON.stringify(body)});
  if (answer.ok) { for (const id of ["action", "target", "place", "skill"]) $(id).value = ""; }
  else { sent = -1; $("status").textContent = (await answer.json()).message; }
});
poll();
</script></body></html>
"""


class PageServer:
    """Serves the play page for ``desk`` on ``host:port``, bounded (``remote.bounded``)."""

    def __init__(self, desk: Desk, host: str = "127.0.0.1", port: int = 8766) -> None:
        """Bind the socket (port 0: a free one)."""
        self.desk, self.origin = desk, SameOrigin(allowed_hosts(host))
        self.http = BoundedServer(self._handle, host, port, MAX_KEY_BYTES, self._gate, _refusal)

    @property
    def url(self) -> str:
        """Return the page's address."""
        host, port = self.http.address
        return f"http://{host!s}:{port}/"

    def start(self) -> PageServer:
        """Start serving; return self."""
        self.http.start()
        return self

    def stop(self) -> None:
        """Stop serving and close the socket."""
        self.http.stop()

    def _gate(self, request: Request) -> Response | None:
        """Refuse a request from elsewhere (``SameOrigin``) and a POST to no endpoint.

        A page on another site that reaches this port through a rebound DNS name sends its
        own name as Host: reading the state (frame, clue) would leak the episode to it.
        """
        refused = self.origin.refused(request)
        if refused is not None:
            return _refusal(*refused)
        if request.method == "POST" and request.path not in _POSTS:
            return _refusal(404, "not_found", f"POST {request.path}")
        return None

    def _handle(self, request: Request) -> Response:
        """Answer the page, its state, or a key press or subtask from it."""
        if request.method == "POST":
            try:
                _POSTS[request.path](self.desk, request.body)
            except WireError as error:
                return _json(error.status, {"error": error.code, "message": error.message})
            return _json(200, {"ok": True})
        if request.method == "GET" and request.path == "/":
            return Response(200, PAGE.encode(), "text/html; charset=utf-8", headers=NO_STORE)
        if request.method == "GET" and request.path == "/play/state":
            return _json(200, self.desk.state())
        return _json(404, {"error": "not_found", "message": f"{request.method} {request.path}"})


NO_STORE = {"Cache-Control": "no-store"}


def _json(status: int, body: dict[str, Any]) -> Response:
    return Response(status, json.dumps(body).encode(), headers=NO_STORE)


def _refusal(status: int, code: str, message: str) -> Response:
    body = json.dumps({"error": code, "message": message}).encode()
    return Response(status, body, close=True, headers=NO_STORE)


def press(desk: Desk, body: bytes) -> None:
    """Hand a key press body to the desk.

    Raises:
        WireError: a body that is not ``{"key": str, "seq": int, ...}`` (400), or what
            ``Desk.press`` refuses.
    """
    try:
        data = json.loads(body)
        key, seq = data["key"], data["seq"]
        scale, report = float(data.get("scale") or 1.0), data.get("report")
    except (ValueError, TypeError, KeyError, RecursionError) as error:  # deep JSON: recursion
        raise WireError(400, "malformed", f"key press: {_short(error)}; need key and seq") from None
    if not isinstance(key, str) or not isinstance(seq, int) or not isinstance(report, str | None):
        raise WireError(400, "malformed", "key press: key and report are text, seq a number")
    desk.press(key, seq, scale, report)


def _short(error: Exception) -> str:
    """Return an error as a short line (a parse error's text can be as long as the body)."""
    return repr(error)[:200]


def choose(desk: Desk, body: bytes) -> None:
    """Hand a household subtask body to the desk.

    Raises:
        WireError: a body that is not ``{"seq": int, "action": str, ...}`` (400), or what
            ``Desk.choose`` refuses.
    """
    try:
        data = json.loads(body)
        seq, words = data["seq"], [data.get(k) or "" for k in ("action", "target", "skill")]
        place = data.get("place")
    except (ValueError, TypeError, KeyError, AttributeError, RecursionError) as error:
        raise WireError(
            400, "malformed", f"subtask: {_short(error)}; need seq and action"
        ) from None
    texts = all(isinstance(w, str) for w in words) and isinstance(place, str | None)
    if not isinstance(seq, int) or not texts:
        raise WireError(400, "malformed", "subtask: seq is a number, the words are text")
    desk.choose(seq, words[0], words[1], words[2], place)


_POSTS = {"/play/key": press, "/play/subtask": choose}
