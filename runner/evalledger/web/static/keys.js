// Keyboard shortcuts of the question page: j / ArrowRight next question, k / ArrowLeft previous,
// s or Ctrl+Enter save the scores (Ctrl+Enter works inside a field too).
(function () {
  "use strict";
  function typing(el) {
    return el && (el.tagName === "INPUT" || el.tagName === "TEXTAREA" || el.tagName === "SELECT" || el.isContentEditable);
  }
  function follow(id) {
    var link = document.getElementById(id);
    if (link) { window.location.href = link.href; }
  }
  function save() {
    var form = document.getElementById("score");
    if (form) { form.requestSubmit ? form.requestSubmit() : form.submit(); }
  }
  document.addEventListener("keydown", function (event) {
    if (event.key === "Enter" && (event.ctrlKey || event.metaKey)) {
      event.preventDefault();
      save();
      return;
    }
    if (typing(event.target) || event.ctrlKey || event.metaKey || event.altKey) { return; }
    if (event.key === "j" || event.key === "ArrowRight") { event.preventDefault(); follow("next"); }
    else if (event.key === "k" || event.key === "ArrowLeft") { event.preventDefault(); follow("prev"); }
    else if (event.key === "s") { event.preventDefault(); save(); }
  });
})();
