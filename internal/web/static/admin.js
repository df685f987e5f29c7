// CleanAds admin: small progressive enhancements. Every page works without
// this file; it only adds copy buttons and submits a select on change.
"use strict";
document.addEventListener("DOMContentLoaded", function () {
  document.documentElement.classList.add("js");

  // Copy buttons: data-copy names the element whose text is copied.
  document.querySelectorAll("[data-copy]").forEach(function (btn) {
    btn.addEventListener("click", function () {
      var el = document.getElementById(btn.getAttribute("data-copy"));
      if (!el) return;
      var text = el.textContent;
      var status = document.querySelector("[data-copy-status]");
      var done = function () {
        var label = btn.getAttribute("data-copied") || "Copied";
        btn.textContent = label;
        if (status) status.textContent = label;
      };
      if (navigator.clipboard && window.isSecureContext) {
        navigator.clipboard.writeText(text).then(done, function () { select(el); });
      } else {
        select(el);
        try { if (document.execCommand("copy")) done(); } catch (e) { /* the text stays selected */ }
      }
    });
  });

  function select(el) {
    var range = document.createRange();
    range.selectNodeContents(el);
    var sel = window.getSelection();
    sel.removeAllRanges();
    sel.addRange(range);
  }

  // A select marked data-autosubmit submits its form when changed.
  document.querySelectorAll("select[data-autosubmit]").forEach(function (sel) {
    sel.addEventListener("change", function () { sel.form.submit(); });
  });

  // The language form returns to the page it was sent from.
  document.querySelectorAll("input[data-back]").forEach(function (inp) {
    inp.value = location.pathname + location.search;
  });
});
