// The step player of a sortie episode page. It reads window.sortieEpisode (set by the page's
// data script) and shows one step at a time: the ego frame, the marker on the map, the agent's
// words and the step's events. Text goes in with textContent only: it is never markup.
"use strict";
(function () {
  const data = window.sortieEpisode;
  const $ = (id) => document.getElementById(id);
  if (!data || !data.steps.length || !$("player")) { return; }
  const steps = data.steps;
  const slider = $("player-slider");
  let timer = null;

  function setText(id, text) { $(id).textContent = text || "–"; }

  function showFrame(step) {
    const frame = $("player-frame");
    frame.hidden = !step.frame;
    $("player-noframe").hidden = Boolean(step.frame);
    if (step.frame) { frame.src = data.root + step.frame; }
  }

  function showMap(step) {
    // A building of several floors has a map per floor: show the one the agent is on.
    const map = $("player-map");
    const source = data.maps[step.map];  // relative to the page, as the page's own map is
    if (map && source && !map.src.endsWith(source)) { map.src = source; }
  }

  function showMarker(step) {
    const marker = $("player-marker");
    if (!marker) { return; }
    marker.hidden = !step.at;
    if (!step.at) { return; }
    marker.style.left = (100 * step.at[0]) + "%";
    marker.style.top = (100 * step.at[1]) + "%";
    // Yaw turns counter-clockwise from +x; the map's rows run downwards, so CSS turns the other way.
    marker.style.transform = "translate(-50%, -50%) rotate(" + (-step.yaw) + "deg)";
  }

  function showEvents(step) {
    const list = $("player-events");
    list.replaceChildren();
    for (const text of step.events.length ? step.events : ["none"]) {
      const item = document.createElement("li");
      item.textContent = text;
      list.appendChild(item);
    }
  }

  function show(position) {
    const step = steps[position];
    slider.value = String(position);
    setText("player-step", "step " + step.i + " of " + steps[steps.length - 1].i);
    setText("player-stage", "stage: " + step.stage);
    setText("player-pose", step.pose);
    setText("player-action", step.action);
    setText("player-said", step.said);
    setText("player-calls", step.calls);
    showFrame(step);
    showMap(step);
    showMarker(step);
    showEvents(step);
  }

  function move(delta) {
    const next = Math.min(steps.length - 1, Math.max(0, Number(slider.value) + delta));
    show(next);
    return next;
  }

  function toggle() {
    const button = $("player-play");
    if (timer !== null) { clearInterval(timer); timer = null; button.textContent = "play"; return; }
    if (Number(slider.value) >= steps.length - 1) { show(0); }
    button.textContent = "pause";
    timer = setInterval(() => { if (move(1) >= steps.length - 1) { toggle(); } }, 150);
  }

  function drawStages() {
    const bar = $("player-stages");
    for (const span of data.spans) {
      const part = document.createElement("span");
      part.className = "stage stage-" + (span.key || "none");
      part.style.width = (100 * span.n / steps.length) + "%";
      part.title = span.label + ": steps " + steps[span.from].i + "–" + steps[span.from + span.n - 1].i;
      part.textContent = span.label;
      part.addEventListener("click", () => show(span.from));
      bar.appendChild(part);
    }
  }

  slider.max = String(steps.length - 1);
  slider.addEventListener("input", () => show(Number(slider.value)));
  $("player-play").addEventListener("click", toggle);
  document.addEventListener("keydown", (event) => {
    // The slider steps itself on arrows and a focused button clicks itself on space.
    if (event.target === slider || (event.target.tagName === "BUTTON" && event.key === " ")) {
      return;
    }
    if (event.key === "ArrowRight" || event.key === "ArrowLeft") {
      event.preventDefault();
      move(event.key === "ArrowRight" ? 1 : -1);
    } else if (event.key === " ") {
      event.preventDefault();
      toggle();
    }
  });
  drawStages();
  show(0);
})();
