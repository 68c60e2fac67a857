// Payment page: keeps the page current without a reload, counts down and
// copies. The page works without it. It asks the status whether anything
// shown changed (ETag, 304 Not Modified while not); when something did, it
// fetches the page again and puts the server's new parts in place of the
// old ones. It never builds a link, an amount or a code of its own.
(function () {
  'use strict';
  var doc = document;
  var root = doc.getElementById('invoice');
  if (!root || !window.fetch || !window.DOMParser) { return; }
  doc.documentElement.classList.add('js');
  var d = root.dataset;
  var pollMs = parseInt(d.pollMs, 10) || 2000;
  var etag = d.etag;
  var timer = null;
  var busy = false; // a poll is under way
  var again = false; // and another was asked for meanwhile
  var failures = 0;
  var deadlines = {};
  var fired = {};

  function all(sel, el) { return Array.prototype.slice.call((el || root).querySelectorAll(sel)); }

  function pad(n) { return (n < 10 ? '0' : '') + n; }

  function clock(s) {
    s = Math.max(0, Math.ceil(s));
    var h = Math.floor(s / 3600), m = Math.floor((s % 3600) / 60), x = s % 60;
    return h > 0 ? h + ':' + pad(m) + ':' + pad(x) : m + ':' + pad(x);
  }

  // start reads the countdowns and the times of what the server rendered.
  function start() {
    var now = Date.now();
    deadlines = {};
    fired = {};
    all('[data-countdown]').forEach(function (el) {
      var s = parseFloat(el.getAttribute('data-seconds'));
      if (s >= 0) { deadlines[el.getAttribute('data-countdown')] = now + s * 1000; }
    });
    all('time[data-local]').forEach(function (el) {
      var t = new Date(el.getAttribute('datetime'));
      if (isNaN(t.getTime())) { return; }
      try {
        el.textContent = new Intl.DateTimeFormat(d.lang, { dateStyle: 'medium', timeStyle: 'short' }).format(t);
      } catch (e) { /* keep the server's UTC time */ }
    });
    tick();
  }

  function tick() {
    var now = Date.now();
    all('[data-countdown]').forEach(function (el) {
      var k = el.getAttribute('data-countdown'), end = deadlines[k];
      if (end === undefined) { return; }
      var s = (end - now) / 1000, t = clock(s);
      if (el.textContent !== t) { el.textContent = t; }
      if (s <= 0 && !fired[k]) {
        // A deadline passed: ask now rather than at the next poll.
        fired[k] = true;
        schedule(0);
      }
    });
    all('progress[data-countdown-bar]').forEach(function (el) {
      var end = deadlines[el.getAttribute('data-countdown-bar')];
      if (end !== undefined) { el.value = Math.max(0, (end - now) / 1000); }
    });
  }

  function schedule(ms) {
    if (timer !== null) {
      if (ms > 0) { return; }
      clearTimeout(timer);
    }
    timer = setTimeout(poll, ms);
  }

  // later waits for the next poll: longer on a final page, in a
  // background tab and after failures.
  function later() {
    var ms = d.final === 'true' ? pollMs * 5 : pollMs;
    if (doc.hidden) { ms = Math.max(ms, 30000); }
    if (failures > 0) { ms = Math.min(pollMs * Math.pow(2, failures), 60000); }
    timer = null;
    schedule(ms);
  }

  function offline(on) {
    var el = root.querySelector('[data-offline]');
    if (el && el.hidden === on) { el.hidden = !on; }
  }

  function get(url, accept) {
    var h = { Accept: accept };
    if (accept === 'application/json' && etag) { h['If-None-Match'] = etag; }
    return fetch(url, { headers: h, cache: 'no-store', credentials: 'same-origin', redirect: 'error' });
  }

  function poll() {
    timer = null;
    if (busy) {
      again = true;
      return;
    }
    busy = true;
    get(d.statusUrl, 'application/json').then(function (r) {
      if (r.status === 304) { return null; }
      if (r.status !== 200) { throw new Error('status ' + r.status); }
      if (r.headers.get('ETag') === etag) { return null; }
      return get(d.pageUrl, 'text/html').then(function (p) {
        if (p.status !== 200) { throw new Error('page ' + p.status); }
        return p.text();
      });
    }).then(function (html) {
      if (html !== null) { swap(new DOMParser().parseFromString(html, 'text/html')); }
      failures = 0;
      offline(false);
      done();
    }, function () {
      failures++;
      if (failures >= 3) { offline(true); }
      done();
    });
  }

  function done() {
    busy = false;
    if (again && failures === 0) {
      again = false;
      schedule(0);
      return;
    }
    again = false;
    later();
  }

  // swap puts the new page's parts in place of the old ones. The status
  // text (a live region, so that screen readers announce it) keeps its
  // element and takes the new text; the switch keeps its position, and
  // the focus stays on the control it was on.
  function swap(fresh) {
    var next = fresh.getElementById('invoice');
    if (!next) { throw new Error('no page'); }
    ['status', 'exception', 'phase', 'version', 'final', 'etag'].forEach(function (k) {
      root.setAttribute('data-' + k, next.getAttribute('data-' + k) || '');
    });
    etag = d.etag;
    all('[data-live] [id]', next).forEach(function (n) {
      var el = doc.getElementById(n.id);
      if (!el) { return; }
      if (el.textContent !== n.textContent) { el.textContent = n.textContent; }
      el.hidden = n.hidden;
    });
    var active = doc.activeElement;
    var focusKey = active && root.contains(active) ? active.getAttribute('data-copy-value') || active.id : null;
    var checked = {};
    all('input[type=checkbox][id]').forEach(function (c) { checked[c.id] = c.checked; });
    all('[data-region]', next).forEach(function (n) {
      var old = root.querySelector('[data-region="' + n.getAttribute('data-region') + '"]');
      if (old) { old.replaceWith(doc.importNode(n, true)); }
    });
    all('input[type=checkbox][id]').forEach(function (c) {
      if (c.id in checked) { c.checked = checked[c.id]; }
    });
    if (focusKey && !root.contains(doc.activeElement)) {
      var target = all('[data-copy-value], [id]').filter(function (el) {
        return el.getAttribute('data-copy-value') === focusKey || el.id === focusKey;
      })[0];
      if (target) { target.focus(); }
    }
    start();
  }

  function say(text) {
    var el = doc.getElementById('announce');
    if (!el) { return; }
    el.textContent = '';
    setTimeout(function () { el.textContent = text; }, 50);
  }

  function copyText(text) {
    if (navigator.clipboard && navigator.clipboard.writeText) {
      return navigator.clipboard.writeText(text).catch(function () { return fallback(text); });
    }
    return fallback(text);
  }

  function fallback(text) {
    var t = doc.createElement('textarea');
    t.value = text;
    t.setAttribute('readonly', '');
    t.className = 'sr-only';
    doc.body.appendChild(t);
    t.select();
    var ok = false;
    try { ok = doc.execCommand('copy'); } catch (e) { ok = false; }
    t.remove();
    return ok ? Promise.resolve() : Promise.reject(new Error('copy'));
  }

  root.addEventListener('click', function (e) {
    var b = e.target.closest && e.target.closest('button');
    if (!b || !root.contains(b)) { return; }
    if (b.hasAttribute('data-print')) { window.print(); return; }
    var text = b.getAttribute('data-copy-value');
    if (text === null) { return; }
    var label = b.getAttribute('data-label') || b.textContent;
    b.setAttribute('data-label', label);
    copyText(text).then(function () {
      b.textContent = d.copied;
      b.classList.add('done');
      say(d.copied);
      setTimeout(function () {
        b.textContent = label;
        b.classList.remove('done');
      }, 2000);
    }, function () { /* nothing copied: the text stays selectable */ });
  });

  // A choice is sent once: a second tap while the page loads does nothing.
  root.addEventListener('submit', function (e) {
    var f = e.target;
    if (!f.hasAttribute('data-choose')) { return; }
    if (f.hasAttribute('data-busy')) { e.preventDefault(); return; }
    f.setAttribute('data-busy', '');
    f.setAttribute('aria-busy', 'true');
  });

  doc.addEventListener('visibilitychange', function () {
    if (!doc.hidden) { schedule(0); }
  });
  setInterval(tick, 1000);
  start();
  later();
}());
