// modelgate console: progressive enhancements only. Every page works
// without this script; the CSP forbids inline scripts, so all behaviour is
// attached here through data attributes.
(function () {
  'use strict';

  var live = null;
  function announce(text) {
    if (!live) {
      live = document.createElement('div');
      live.className = 'sr-only';
      live.setAttribute('role', 'status');
      live.setAttribute('aria-live', 'polite');
      document.body.appendChild(live);
    }
    live.textContent = '';
    window.setTimeout(function () { live.textContent = text; }, 50);
  }

  // <form data-confirm="Revoke this key?">: ask before submitting.
  document.addEventListener('submit', function (e) {
    var form = e.target;
    var msg = form && form.getAttribute && form.getAttribute('data-confirm');
    if (msg && !window.confirm(msg)) {
      e.preventDefault();
    }
  });

  // <button data-copy="element-id">: copy that input's value to the clipboard.
  document.addEventListener('click', function (e) {
    var btn = e.target && e.target.closest ? e.target.closest('[data-copy]') : null;
    if (!btn) {
      return;
    }
    var el = document.getElementById(btn.getAttribute('data-copy'));
    if (!el) {
      return;
    }
    var text = 'value' in el ? el.value : el.textContent;
    if (!btn.hasAttribute('data-label')) {
      btn.setAttribute('data-label', btn.textContent);
    }
    var done = function (ok) {
      btn.textContent = ok ? 'Copied' : 'Press Ctrl+C';
      btn.classList.toggle('is-copied', ok);
      announce(ok ? 'Copied to the clipboard' : 'Select the text and press Ctrl+C to copy');
      window.clearTimeout(btn._mgTimer);
      btn._mgTimer = window.setTimeout(function () {
        btn.textContent = btn.getAttribute('data-label');
        btn.classList.remove('is-copied');
      }, 2000);
    };
    var fallback = function () {
      var ok = false;
      try {
        el.focus();
        if (el.select) {
          el.select();
        }
        ok = document.execCommand('copy');
      } catch (err) {
        ok = false;
      }
      done(ok);
    };
    try {
      if (navigator.clipboard && navigator.clipboard.writeText) {
        navigator.clipboard.writeText(text).then(function () { done(true); }, fallback);
      } else {
        fallback();
      }
    } catch (err) {
      fallback();
    }
  });

  // <form data-autosubmit>: a changed select submits the form (the
  // filters of the Models page); text fields still wait for Enter.
  document.addEventListener('change', function (e) {
    var el = e.target;
    if (el && el.tagName === 'SELECT' && el.form && el.form.hasAttribute('data-autosubmit')) {
      el.form.submit();
    }
  });

  // Secrets select themselves on focus, ready for a manual copy.
  var fields = document.querySelectorAll('input.secret, textarea.codes');
  for (var i = 0; i < fields.length; i++) {
    fields[i].addEventListener('focus', function (e) { e.target.select(); });
  }
})();

// Scrolling nav bars (narrow screens): bring the current item into view.
(function () {
  'use strict';
  var bars = document.querySelectorAll('.nav, .tabs');
  for (var i = 0; i < bars.length; i++) {
    var bar = bars[i];
    var cur = bar.querySelector('[aria-current="page"]');
    if (cur && bar.scrollWidth > bar.clientWidth) {
      var right = cur.offsetLeft + cur.offsetWidth - bar.offsetLeft;
      if (right > bar.clientWidth) {
        bar.scrollLeft = right - bar.clientWidth + 24;
      }
    }
  }
})();

// <select data-group-select>: highlight the chosen group's description
// (.group-info-item[data-group]) below the key form.
(function () {
  'use strict';
  var sel = document.querySelector('select[data-group-select]');
  if (!sel) {
    return;
  }
  var show = function () {
    var items = document.querySelectorAll('.group-info-item[data-group]');
    for (var i = 0; i < items.length; i++) {
      items[i].classList.toggle('is-selected', items[i].getAttribute('data-group') === sel.value);
    }
  };
  sel.addEventListener('change', show);
  show();
})();
