// The review app's keyboard help. Pages that declare shortcuts (body data-shortcuts) get:
//   n  the next question still needing your numbers   j / k  the next / previous question
//   s  save the scores (Ctrl+Enter also saves, from inside a field too)
// One-key shortcuts fire only when nothing in particular has the focus (the page itself): never
// in a field, a link, a button, a radio group or a scrolled region. They can be turned off (the
// header's "Keyboard shortcuts" button; remembered in this browser). Inside a rating's radio group
// its digit or letter keys choose the rating (keys listed in the legend). The comment counts its
// characters and refuses to send more than the limit. What the server put in the status region is
// announced again once the page has loaded, so a screen reader hears "Saved".
(function () {
  "use strict";
  var STORE = "evalledger.shortcuts";

  function enabled() {
    try { return window.localStorage.getItem(STORE) !== "off"; } catch (e) { return true; }
  }

  function setEnabled(on) {
    try { window.localStorage.setItem(STORE, on ? "on" : "off"); } catch (e) { /* private mode: this page only */ }
    showToggle(on);
  }

  function showToggle(on) {
    var toggle = document.getElementById("shortcuts-toggle");
    if (!toggle) { return; }
    toggle.hidden = false;
    toggle.setAttribute("aria-pressed", on ? "true" : "false");
    toggle.textContent = "Keyboard shortcuts: " + (on ? "on" : "off");
    var help = document.querySelectorAll(".keys-help");
    for (var i = 0; i < help.length; i++) { help[i].hidden = !on; }
  }

  function onPageItself(target) {
    return !target || target === document.body || target === document.documentElement ||
      target.id === "main";
  }

  function follow(id) {
    var link = document.getElementById(id);
    if (link) { window.location.href = link.href; }
  }

  function save() {
    var form = document.getElementById("score");
    if (form && !form.querySelector("[disabled]")) {
      if (form.requestSubmit) { form.requestSubmit(); } else { form.submit(); }
    }
  }

  function chooseByKey(event) {
    var radio = event.target;
    if (!radio || radio.type !== "radio") { return false; }
    var group = radio.closest("fieldset[data-keys]");
    if (!group) { return false; }
    var pairs = group.getAttribute("data-keys").split(" ");
    for (var i = 0; i < pairs.length; i++) {
      var pair = pairs[i].split(":");
      if (pair[0] === event.key.toLowerCase() || (pair[0] === "5" && event.key === "." && pair[1] === "0.5")) {
        var chosen = group.querySelector("input[type=radio][value='" + pair[1] + "']");
        if (chosen && !chosen.disabled) {
          chosen.checked = true;
          chosen.focus();
          chosen.dispatchEvent(new Event("change", { bubbles: true }));
        }
        return true;
      }
    }
    return false;
  }

  document.addEventListener("keydown", function (event) {
    if (event.key === "Enter" && (event.ctrlKey || event.metaKey) && document.body.dataset.shortcuts === "question") {
      event.preventDefault();
      save();
      return;
    }
    if (event.ctrlKey || event.metaKey || event.altKey) { return; }
    if (chooseByKey(event)) { event.preventDefault(); return; }
    if (!document.body.dataset.shortcuts || !enabled() || !onPageItself(event.target)) { return; }
    if (event.key === "n") { event.preventDefault(); follow("next-needed"); }
    else if (event.key === "j") { event.preventDefault(); follow("next"); }
    else if (event.key === "k") { event.preventDefault(); follow("prev"); }
    else if (event.key === "s" && document.body.dataset.shortcuts === "question") { event.preventDefault(); save(); }
  });

  function countComment() {
    var form = document.getElementById("score");
    var comment = document.getElementById("reviewer_comments");
    var count = document.getElementById("comment-count");
    if (!form || !comment || !count) { return; }
    var limit = parseInt(form.getAttribute("data-comment-limit"), 10);
    function over() { return comment.value.length > limit; }
    function update() {
      count.textContent = String(comment.value.length);
      var note = document.getElementById("comment-over");
      if (over() && !note) {
        note = document.createElement("span");
        note.id = "comment-over";
        note.className = "problem";
        note.setAttribute("role", "alert");
        comment.insertAdjacentElement("afterend", note);
        comment.setAttribute("aria-invalid", "true");
      }
      if (note) {
        if (over()) {
          note.textContent = "Too long: " + (comment.value.length - limit) + " characters over the limit of " + limit + ".";
        } else {
          note.remove();
          comment.removeAttribute("aria-invalid");
        }
      }
    }
    comment.addEventListener("input", update);
    form.addEventListener("submit", function (event) {
      if (over()) { event.preventDefault(); update(); comment.focus(); }
    });
    update();
  }

  function announce() {
    var region = document.getElementById("status");
    if (region && region.firstElementChild) {
      var shown = region.innerHTML;
      region.innerHTML = "";
      window.setTimeout(function () { region.innerHTML = shown; }, 250);
    }
  }

  document.addEventListener("DOMContentLoaded", function () {
    if (document.body.dataset.shortcuts) {
      showToggle(enabled());
      document.getElementById("shortcuts-toggle").addEventListener("click", function () { setEnabled(!enabled()); });
    }
    countComment();
    announce();
  });
})();
