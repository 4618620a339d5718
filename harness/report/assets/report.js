// The HTML report's only script, inlined by harness/report/html.py and allowed by the CSP
// through the SHA-256 of this file's bytes. It shows the filter bar and filters the cards by
// their data- attributes; without it every card stays visible.
(function () {
  "use strict";
  var bar = document.getElementById("filters");
  if (!bar) { return; }
  var input = document.getElementById("filter-text");
  var shown = document.getElementById("shown");
  var empty = document.getElementById("no-match");
  var cards = Array.prototype.slice.call(document.querySelectorAll("details.scenario"));
  var groups = Array.prototype.slice.call(document.querySelectorAll("section.group"));
  var buttons = Array.prototype.slice.call(bar.querySelectorAll("button[data-filter]"));
  var changeButtons = Array.prototype.slice.call(bar.querySelectorAll("button[data-change]"));
  var status = "all";
  var change = "all";
  function apply() {
    var words = input.value.toLowerCase().split(/\s+/).filter(Boolean);
    var count = 0;
    cards.forEach(function (card) {
      var text = card.getAttribute("data-search") || "";
      var ok = (status === "all" || card.getAttribute("data-status") === status) &&
        (change === "all" || card.getAttribute("data-change") === change) &&
        words.every(function (word) { return text.indexOf(word) !== -1; });
      card.hidden = !ok;
      if (ok) { count += 1; }
    });
    groups.forEach(function (group) {
      var all = group.querySelectorAll("details.scenario").length;
      var left = group.querySelectorAll("details.scenario:not([hidden])").length;
      var label = group.querySelector("h2 .count");
      if (label) { label.textContent = left === all ? String(all) : left + " of " + all; }
      group.hidden = left === 0;
    });
    buttons.forEach(function (button) {
      button.setAttribute("aria-pressed", String(button.getAttribute("data-filter") === status));
    });
    changeButtons.forEach(function (button) {
      button.setAttribute("aria-pressed", String(button.getAttribute("data-change") === change));
    });
    shown.textContent = count + " of " + cards.length + " shown";
    if (empty) { empty.hidden = count !== 0 || cards.length === 0; }
  }
  buttons.forEach(function (button) {
    button.addEventListener("click", function () {
      var wanted = button.getAttribute("data-filter");
      status = (wanted === status && wanted !== "all") ? "all" : wanted;
      apply();
    });
  });
  // --baseline: regressed / fixed / new, a second filter the status one narrows
  changeButtons.forEach(function (button) {
    button.addEventListener("click", function () {
      var wanted = button.getAttribute("data-change");
      change = wanted === change ? "all" : wanted;
      apply();
    });
  });
  input.addEventListener("input", apply);
  document.getElementById("expand").addEventListener("click", function () {
    cards.forEach(function (card) { if (!card.hidden) { card.open = true; } });
  });
  document.getElementById("collapse").addEventListener("click", function () {
    cards.forEach(function (card) { card.open = false; });
  });
  document.addEventListener("keydown", function (event) {
    if (event.key === "/" && document.activeElement !== input) {
      event.preventDefault();
      input.focus();
    } else if (event.key === "Escape" && document.activeElement === input) {
      input.value = "";
      apply();
    }
  });
  bar.hidden = false;
  apply();
})();
