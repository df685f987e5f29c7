/*! CleanAds t.js v2; what it does: docs/tracker.md */
(function (w, d) {
  'use strict';
  var s = d.currentScript || d.querySelector('script[data-site]');
  if (!s || w.cleanads && w.cleanads.v) return;
  var site = s.getAttribute('data-site') || new URL(s.src).searchParams.get('site'),
    inc = s.getAttribute('data-include'),
    exc = s.getAttribute('data-exclude'),
    api = new URL(s.src).origin + '/v1/',
    consent = null,
    visit = {},
    queued = w.cleanads,
    forms = [],
    taken, looked, early, jq, ready;

  function cookie(n) {
    var m = d.cookie.match('(?:^|; )' + n + '=([^;]*)');
    return m ? decodeURIComponent(m[1]) : '';
  }
  function uuid() {
    var b = crypto.getRandomValues(new Uint8Array(16)), i, h = '';
    b[6] = b[6] & 15 | 64;
    b[8] = b[8] & 63 | 128;
    for (i = 0; i < 16; i++) h += (i == 4 || i == 6 || i == 8 || i == 10 ? '-' : '') + (b[i] + 256).toString(16).slice(1);
    return h;
  }
  function each(l, fn) { [].forEach.call(l, fn); }
  function within(e, sel) { try { return sel && e.closest(sel); } catch (x) { } }
  function post(path, body) {
    return fetch(api + path + '?site=' + encodeURIComponent(site), {
      method: 'POST', body: JSON.stringify(body), headers: { 'Content-Type': 'text/plain' },
      credentials: 'include', keepalive: true
    });
  }
  function allowed() { return consent !== false && visit.consent; }
  function pixel(name, id) {
    var t = w.ttq, p = visit.pixels;
    if (!allowed()) return;
    if (typeof w.fbq == 'function') w.fbq('track', name || visit.lead_event || 'Lead', {}, { eventID: id });
    if (!name && t && p && p.tiktok) t.track(p.tiktok, {}, { event_id: id });
  }
  // pair takes the site pixel's PageView to send with our event_id;
  // early: it was sent before we looked.
  function pair() {
    var f = w.fbq, q = f && f.queue, i;
    if (!f) return;
    if (f.callMethod && !looked) early = 1;
    looked = 1;
    for (i = 0; q && i < q.length; i++) {
      if (q[i][0] == 'track' && q[i][1] == 'PageView' && !q[i][3]) taken = q[i], q.splice(i--, 1);
    }
  }
  function collect() {
    pair();
    return ready = post('collect', { url: location.href, referrer: d.referrer, consent: consent, fbc: cookie('_fbc'), fbp: cookie('_fbp'), lf: forms.length })
      .then(function (r) { return r.ok ? r.json() : {}; })
      .then(function (v) { visit = v; return v; }, function () { return visit; })
      .then(function (v) {
        pair();
        if (v.event_id && allowed() && !(early && !taken)) pixel('PageView', v.event_id);
        else if (taken) w.fbq.apply(w, taken);
        taken = 0;
        return v;
      });
  }

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
    if (o.confirmed !== false) o.confirmed = true;
    post('leads', o);
    pixel(0, o.event_id);
    return o.event_id;
  }

  var map = [
    [/^(your)?e?mail|eposta/, 'email'],
    [/phone|^tel|gsm|mobile|telefon|^cep/, 'phone'],
    [/^first|^fname|^given|^ad$/, 'first_name'],
    [/^last|^lname|surname|^family|^soyad/, 'last_name'],
    [/^(your|full)?name$|^isim|^adsoyad|^adiniz/, 'name'],
    [/message|^msg|comment|mesaj|^note|question|inquiry|details|^text/, 'message'],
    [/^(externalid|fbclid|gclid)$/, '']
  ];
  function key(e) {
    var n = e.name || '', k = e.type == 'email' ? 'email' : e.type == 'tel' ? 'phone' : '', j,
      m = (n.match(/[a-z][^[\]]*(?=\]?$)/i) || [''])[0].toLowerCase().replace(/[^a-z]/g, '');
    for (j = 0; !k && m && j < map.length; j++) {
      if (map[j][0].test(m)) k = map[j][1] || n;
    }
    return k;
  }
  function fieldsOf(f) {
    var o = { fields: {} }, i, e, n, k;
    for (i = 0; i < f.elements.length; i++) {
      e = f.elements[i];
      n = e.name;
      if (!n || e.disabled || /^_|captcha|turnstile/.test(n) || /^(submit|button|reset|file|password|image)$/.test(e.type) ||
        /^(checkbox|radio)$/.test(e.type) && !e.checked) continue;
      k = key(e) || e.type == 'textarea' && 'message';
      if (k && !o[k]) o[k] = e.value;
      else o.fields[n] = o.fields[n] ? o.fields[n] + ', ' + e.value : e.value;
    }
    return o;
  }
  function isLead(f) {
    var a = f.closest('[data-cleanads]'), i, e, y = 0;
    if (a) return a.getAttribute('data-cleanads') != 'off';
    if (within(f, exc)) return false;
    if (within(f, inc)) return true;
    if (f.id == 'commentform') return false;
    for (i = 0; i < f.elements.length; i++) {
      e = f.elements[i];
      if (e.type == 'password') return false;
      if (e.type != 'hidden' && /^(email|phone|(first_|last_)?name)$/.test(key(e))) y = 1;
    }
    return y;
  }

  function form(f) {
    if (!f || f.$ca) return;
    var box = d.createElement('div'), hp = d.createElement('input'),
      k = 'cleanads' + location.pathname + [].indexOf.call(d.forms, f), v = [];
    // A form drawn again by its server keeps its lead.
    try { v = sessionStorage.getItem(k).split(' '); } catch (x) { }
    f.$ca = v[1] > Date.now() ? { id: v[0], t0: +v[2], px: +v[3] } : { id: uuid(), t0: 0 };
    f.$ca.hp = hp;
    f.$ca.k = k;
    box.setAttribute('aria-hidden', 'true');
    box.style.cssText = 'position:absolute;left:-9999px;width:1px;height:1px;overflow:hidden';
    hp.type = 'text'; hp.name = 'website_url'; hp.tabIndex = -1; hp.autocomplete = 'off';
    hp.setAttribute('form', 'cleanads-none'); // owned by no form: in no post
    box.appendChild(hp);
    f.appendChild(box);
    forms.push(f);
  }
  function touch(e) {
    var t = e.target, f = t.form || t.closest && t.closest('form');
    if (f && f.$ca) f.$ca.t0 = f.$ca.t0 || Date.now();
  }
  function plugin(f) {
    return /\b(wpcf7-form|wpforms-ajax-form|elementor-form|hs-form)\b/.test(f.getAttribute('class')) ||
      /^gform_ajax/.test(f.getAttribute('target')) || f.closest('.w-form');
  }
  function submitted(e) {
    var f = e.target, c, o, h;
    if (!f.$ca && isLead(f)) form(f);
    if (!(c = f.$ca)) return;
    o = fieldsOf(f);
    o.event_id = c.id;
    o.hp = c.hp.value;
    o.fill_ms = c.t0 ? Date.now() - c.t0 : 0;
    if ((f.getAttribute('action') && f.action || '').indexOf(api + 'leads') == 0) {
      extra(o);
      o.site = site;
      ['site', 'event_id', 'page_url', 'referrer', 'fbc', 'fbp', 'form_token', 'consent', 'fill_ms', 'hp'].forEach(function (k) {
        if (o[k] != null) {
          h = f.querySelector('input[name="' + k + '"]') || f.appendChild(d.createElement('input'));
          h.type = 'hidden'; h.name = k; h.value = o[k];
        }
      });
      if (!o.hp && o.fill_ms >= 2000) pixel(0, c.id);
      return;
    }
    c.o = o;
    if (!plugin(f)) return send(f);
    clearTimeout(c.tm);
    // No word in 15 s, or the page goes: sent unless drawn again.
    c.tm = setTimeout(function () { f.isConnected && send(f); }, 15000);
    hook();
    if (f.closest('.w-form')) webflow(f, 0);
  }
  // ok: the site took it. No pixel lead for known junk; one per lead.
  function send(f, ok) {
    var c = f && f.$ca, o = c && c.o;
    if (!o) return;
    clearTimeout(c.tm);
    c.o = 0;
    if (ok) o.confirmed = true;
    post('leads', extra(o));
    if (!c.px && !o.hp && o.fill_ms >= 2000) c.px = 1, pixel(0, o.event_id);
    if (ok) c.id = uuid(), c.t0 = c.px = 0;
    try {
      allowed() && !ok ? sessionStorage.setItem(c.k, [c.id, Date.now() + 3e5, c.t0, c.px | 0].join(' ')) : sessionStorage.removeItem(c.k);
    } catch (x) { }
  }
  function refused(f) {
    if (f && f.$ca) clearTimeout(f.$ca.tm), f.$ca.o = 0;
  }
  function hook() {
    var $ = w.jQuery;
    if (jq || !$) return;
    jq = 1;
    $(d).on('wpformsAjaxSubmitSuccess submit_success', function (e) { send(e.target, 1); })
      .on('wpformsAjaxSubmitFailed error', function (e) { refused(e.target); })
      .on('gform_confirmation_loaded', function (e, id) {
        each(forms, function (f) { if (f.getAttribute('id') == 'gform_' + id) send(f, 1); });
      });
  }
  function webflow(f, n) {
    var p = f.closest('.w-form'), ok = p.querySelector('.w-form-done'), no = p.querySelector('.w-form-fail');
    if (ok && ok.offsetHeight) send(f, 1);
    else if (no && no.offsetHeight) refused(f);
    else if (n < 50) setTimeout(function () { webflow(f, n + 1); }, 300);
  }

  function scan(doc) {
    each(doc.querySelectorAll('form'), function (f) {
      if (!f.$ca && f.$cn !== f.elements.length && isLead(f, f.$cn = f.elements.length)) form(f);
    });
    each(doc.querySelectorAll('iframe'), function (i) {
      function go() { try { watch(i.contentDocument); } catch (x) { } }
      if (!i.$ca) i.$ca = 1, i.addEventListener('load', go);
      go();
    });
  }
  function watch(doc) {
    if (!doc || doc.$ca) return;
    doc.$ca = 1;
    ['focusin', 'keydown', 'input', 'pointerdown'].forEach(function (t) { doc.addEventListener(t, touch, true); });
    doc.addEventListener('submit', submitted, true);
    // Contact Form 7: a failed mail is still a lead.
    'mailsent mailfailed invalid unaccepted spam aborted'.split(' ').forEach(function (n, i) {
      doc.addEventListener('wpcf7' + n, function (e) { i > 1 ? refused(e.target) : send(e.target, !i); });
    });
    new MutationObserver(function () { scan(doc); }).observe(doc, { childList: true, subtree: true });
    scan(doc);
  }

  w.cleanads = {
    v: 2,
    form: form,
    lead: lead,
    consent: function (yes) { consent = !!yes; return collect(); },
    get ready() { return ready; }
  };
  queued = queued && queued.forEach ? queued : [];
  queued.forEach(function (c) { if (c[0] == 'consent') consent = !!c[1]; });
  pair();
  watch(d);
  w.addEventListener('pagehide', function () { each(forms, function (f) { f.isConnected && send(f); }); });
  w.addEventListener('message', function (e) {
    var m = e.data;
    if (m && m.type == 'hsFormCallback' && m.eventName == 'onFormSubmitted') {
      each(forms, function (f) { if (/\bhs-form\b/.test(f.getAttribute('class'))) send(f, 1); });
    }
  });
  function start() {
    scan(d);
    collect();
    queued.forEach(function (c) { if (c[0] != 'consent') w.cleanads[c[0]](c[1]); });
  }
  if (d.readyState == 'loading') d.addEventListener('DOMContentLoaded', start); else start();
})(window, document);
