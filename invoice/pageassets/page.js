// Payment page: polls the status, counts down, copies. The page works
// without it; this only keeps it current.
(function () {
  'use strict';
  var root = document.getElementById('invoice');
  if (!root) { return; }
  var statusURL = root.getAttribute('data-status-url');
  var pollMs = parseInt(root.getAttribute('data-poll-ms'), 10) || 2000;
  var deadlines = {}; // countdown field -> epoch ms
  var last = null;
  var timer = null;

  function fmt(s) {
    s = Math.max(0, Math.ceil(s));
    var h = Math.floor(s / 3600), m = Math.floor((s % 3600) / 60), x = s % 60;
    var pad = function (n) { return (n < 10 ? '0' : '') + n; };
    return h > 0 ? h + ':' + pad(m) + ':' + pad(x) : m + ':' + pad(x);
  }

  function each(sel, fn) { Array.prototype.forEach.call(root.querySelectorAll(sel), fn); }

  function apply(v) {
    last = v;
    root.setAttribute('data-status', v.status);
    root.setAttribute('data-exception', v.exception);
    root.setAttribute('data-version', String(v.version));
    each('[data-field]', function (el) {
      var k = el.getAttribute('data-field');
      if (!(k in v) || el.hasAttribute('data-countdown')) { return; }
      var t = String(v[k]);
      if (el.textContent !== t) { el.textContent = t; }
      if (k === 'detail') { el.hidden = t === ''; }
    });
    each('[data-show]', function (el) { el.hidden = !v[el.getAttribute('data-show')]; });
    // A link the status does not carry now is removed, never kept: it
    // would ask for an amount of before.
    each('[data-href]', function (el) {
      var u = v[el.getAttribute('data-href')];
      if (u) { el.setAttribute('href', u); } else { el.removeAttribute('href'); }
    });
    each('[data-src]', function (el) {
      var u = v[el.getAttribute('data-src')];
      if (u && el.getAttribute('src') !== u) { el.setAttribute('src', u); }
      el.setAttribute('alt', v[el.getAttribute('data-alt')] || '');
    });
    each('[data-value]', function (el) { el.value = v[el.getAttribute('data-value')]; el.textContent = v[el.getAttribute('data-value')] + '%'; });
    var now = Date.now();
    each('[data-countdown]', function (el) {
      var k = el.getAttribute('data-countdown');
      deadlines[k] = v[k] >= 0 ? now + v[k] * 1000 : null;
    });
    tick();
  }

  function tick() {
    var now = Date.now(), due = false;
    each('[data-countdown]', function (el) {
      var end = deadlines[el.getAttribute('data-countdown')];
      if (end === null || end === undefined) { return; }
      var s = (end - now) / 1000;
      var t = fmt(s);
      if (el.textContent !== t) { el.textContent = t; }
      if (s <= 0) { due = true; }
    });
    // A deadline passed: ask now rather than at the next poll.
    if (due && last && !last.final) { schedule(0); }
  }

  function poll() {
    timer = null;
    var xhr = new XMLHttpRequest();
    xhr.open('GET', statusURL);
    xhr.setRequestHeader('Accept', 'application/json');
    xhr.onload = function () {
      if (xhr.status === 200) {
        try { apply(JSON.parse(xhr.responseText)); } catch (e) { /* keep the page as it is */ }
      }
      schedule(last && last.final ? pollMs * 5 : pollMs);
    };
    xhr.onerror = function () { schedule(pollMs * 2); };
    xhr.send();
  }

  function schedule(ms) {
    if (timer !== null) {
      if (ms > 0) { return; }
      clearTimeout(timer);
    }
    timer = setTimeout(poll, ms);
  }

  function copy(button) {
    var el = document.getElementById(button.getAttribute('data-copy'));
    if (!el) { return; }
    var text = el.textContent.trim();
    var label = button.textContent;
    var done = function () {
      button.textContent = root.getAttribute('data-copied') || 'Copied';
      setTimeout(function () { button.textContent = label; }, 2000);
    };
    if (navigator.clipboard && navigator.clipboard.writeText) {
      navigator.clipboard.writeText(text).then(done, function () { select(el); });
    } else {
      select(el);
    }
  }

  function select(el) {
    var r = document.createRange();
    r.selectNodeContents(el);
    var s = window.getSelection();
    s.removeAllRanges();
    s.addRange(r);
  }

  each('button[data-copy]', function (b) {
    b.hidden = false;
    b.addEventListener('click', function () { copy(b); });
  });
  setInterval(tick, 1000);
  poll();
}());
