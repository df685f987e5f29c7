/*! CleanAds t.js v1: first-party visit and lead tracking. */
(function (w, d) {
  'use strict';
  var s = d.currentScript || d.querySelector('script[data-site]');
  if (!s || w.cleanads && w.cleanads.v) return;
  var site = s.getAttribute('data-site'),
    api = new URL(s.src).origin + '/v1/',
    consent = null, // null: the page did not say
    visit = {},
    queued = w.cleanads, // calls made before we loaded: (window.cleanads = window.cleanads || []).push([name, arg])
    ready;

  function cookie(n) {
    var m = d.cookie.match('(?:^|; )' + n + '=([^;]*)');
    return m ? decodeURIComponent(m[1]) : '';
  }
  function uuid() {
    var c = w.crypto;
    if (c && c.randomUUID) return c.randomUUID();
    var b = new Uint8Array(16), i, h = '';
    if (c && c.getRandomValues) c.getRandomValues(b);
    else for (i = 0; i < 16; i++) b[i] = Math.random() * 256;
    b[6] = b[6] & 15 | 64;
    b[8] = b[8] & 63 | 128;
    for (i = 0; i < 16; i++) h += (i == 4 || i == 6 || i == 8 || i == 10 ? '-' : '') + (b[i] + 256).toString(16).slice(1);
    return h;
  }
  // text/plain keeps it a simple request (no preflight); keepalive lets it
  // finish while the page goes on to the next one.
  function post(path, body) {
    return fetch(api + path + '?site=' + encodeURIComponent(site), {
      method: 'POST', body: JSON.stringify(body), headers: { 'Content-Type': 'text/plain' },
      credentials: 'include', keepalive: true
    });
  }
  function allowed() { return consent !== false && visit.consent; }
  function pixel(name, id) {
    if (allowed() && typeof w.fbq == 'function') w.fbq('track', name, {}, { eventID: id });
  }
  function collect() {
    return ready = post('collect', { url: location.href, referrer: d.referrer, consent: consent, fbc: cookie('_fbc'), fbp: cookie('_fbp') })
      .then(function (r) { return r.ok ? r.json() : {}; })
      .then(function (v) { visit = v; if (v.event_id) pixel('PageView', v.event_id); return v; },
        function () { return visit; });
  }

  // The lead as t.js sends it: the page's fields plus the click identity,
  // timing and the form token.
  function extra(o) {
    o.event_id = o.event_id || uuid();
    o.page_url = location.href;
    o.referrer = d.referrer;
    o.fbc = o.fbc || cookie('_fbc') || visit.fbc || '';
    o.fbp = o.fbp || cookie('_fbp') || visit.fbp || '';
    if (visit.form_token) o.form_token = visit.form_token;
    if (consent !== null) o.consent = consent;
    return o;
  }
  function lead(o) {
    o = extra(o || {});
    post('leads', o);
    pixel(visit.lead_event || 'Lead', o.event_id);
    return o.event_id;
  }

  // The lead's own fields, found by the form's names (lower-cased, letters
  // only); every other field is kept in fields as it came.
  var map = [
    [/^(your)?e?mail|eposta/, 'email'],
    [/phone|^tel|gsm|mobile|telefon|^cep/, 'phone'],
    [/^first|^fname|^given|^ad$/, 'first_name'],
    [/^last|^lname|surname|^family|^soyad/, 'last_name'],
    [/^(your|full)?name$|^isim|^adsoyad|^adiniz/, 'name'],
    [/message|^msg|comment|mesaj|^note|question|inquiry|details|^text/, 'message'],
    [/^(externalid|fbclid|gclid)$/, '']
  ];
  function fieldsOf(f) {
    var o = { fields: {} }, i, e, n, k, j;
    for (i = 0; i < f.elements.length; i++) {
      e = f.elements[i];
      n = e.name;
      if (!n || e.disabled || n == 'hp' || n.charAt(0) == '_' || /^(submit|button|reset|file|password|image)$/.test(e.type) ||
        /^(checkbox|radio)$/.test(e.type) && !e.checked) continue;
      k = e.type == 'email' ? 'email' : e.type == 'tel' ? 'phone' : '';
      for (j = 0; !k && j < map.length; j++) {
        if (map[j][0].test(n.toLowerCase().replace(/[^a-z]/g, ''))) k = map[j][1] || n;
      }
      if (k && !o[k]) o[k] = e.value;
      else o.fields[n] = o.fields[n] ? o.fields[n] + ', ' + e.value : e.value;
    }
    return o;
  }
  function hidden(f, n, v) {
    var e = f.querySelector('input[name="' + n + '"]') || f.appendChild(d.createElement('input'));
    e.type = 'hidden'; e.name = n; e.value = v == null ? '' : v;
  }

  // form instruments a form: first-interaction time, a honeypot, and on
  // submit one event_id, the lead posted to us and the pixel's Lead event;
  // the form then goes on to wherever it was going.
  function form(f) {
    if (!f || f.cleanads) return;
    f.cleanads = 1;
    var t0 = 0, id = uuid(), box = d.createElement('div'), hp = d.createElement('input');
    box.setAttribute('aria-hidden', 'true');
    box.style.cssText = 'position:absolute!important;left:-10000px;top:auto;width:1px;height:1px;overflow:hidden';
    hp.type = 'text'; hp.name = 'hp'; hp.tabIndex = -1; hp.autocomplete = 'off'; hp.value = '';
    box.appendChild(hp);
    f.appendChild(box);
    function touch() { t0 = t0 || Date.now(); }
    ['focusin', 'keydown', 'input', 'pointerdown'].forEach(function (t) { f.addEventListener(t, touch, true); });
    f.addEventListener('submit', function () {
      var o = fieldsOf(f);
      o.event_id = id;
      o.hp = hp.value;
      o.fill_ms = t0 ? Date.now() - t0 : 0;
      extra(o);
      if ((f.getAttribute('action') && f.action || '').indexOf(api + 'leads') == 0) {
        // The form posts to us itself: it carries the extras, nothing is
        // sent twice.
        o.site = site;
        ['site', 'event_id', 'page_url', 'referrer', 'fbc', 'fbp', 'form_token', 'consent', 'fill_ms'].forEach(function (k) {
          if (o[k] != null) hidden(f, k, o[k]);
        });
        pixel(visit.lead_event || 'Lead', id);
      } else lead(o);
    });
  }
  function scan() { [].forEach.call(d.querySelectorAll('form[data-cleanads]'), form); }

  w.cleanads = {
    v: 1,
    form: form,
    lead: lead,
    // consent(true|false): the visitor's answer; cookies are set or removed
    // by the server.
    consent: function (yes) { consent = !!yes; return collect(); },
    // ready: a promise of the last visit's answer.
    get ready() { return ready; }
  };
  // A consent given before we loaded counts for the first visit already.
  queued = queued && queued.forEach ? queued : [];
  queued.forEach(function (c) { if (c[0] == 'consent') consent = !!c[1]; });
  collect();
  if (d.readyState == 'loading') d.addEventListener('DOMContentLoaded', scan); else scan();
  queued.forEach(function (c) { if (c[0] != 'consent') w.cleanads[c[0]](c[1]); });
})(window, document);
