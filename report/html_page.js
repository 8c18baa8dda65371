(function () {
  'use strict';
  function $(id) { return document.getElementById(id); }
  function all(sel, root) { return Array.prototype.slice.call((root || document).querySelectorAll(sel)); }

  // The compliance matrix's filter: text, family and status.
  function filterRules() {
    var q = $('rule-q').value.trim().toLowerCase();
    var fam = $('rule-family').value, st = $('rule-status').value;
    var rows = all('#rules tr.rule'), shown = 0;
    rows.forEach(function (tr) {
      var ok = (!q || tr.getAttribute('data-q').toLowerCase().indexOf(q) >= 0) &&
        (!fam || tr.getAttribute('data-family') === fam) &&
        (!st || tr.getAttribute('data-status') === st);
      tr.classList.toggle('hidden', !ok);
      if (ok) shown++;
    });
    $('rule-shown').textContent = shown + ' of ' + rows.length + ' rules';
  }
  ['rule-q', 'rule-family', 'rule-status'].forEach(function (id) {
    $(id).addEventListener('input', filterRules);
    $(id).addEventListener('change', filterRules);
  });
  all('button.cell').forEach(function (b) {
    b.addEventListener('click', function () {
      $('rule-q').value = '';
      $('rule-family').value = b.getAttribute('data-family');
      $('rule-status').value = b.getAttribute('data-status');
      filterRules();
      $('rule-filter').scrollIntoView({ block: 'start' });
    });
  });

  // The specs' filter: text and statuses.
  function filterSpecs() {
    var q = $('spec-q').value.trim().toLowerCase();
    var on = {};
    all('input.spec-status').forEach(function (c) { on[c.value] = c.checked; });
    var specs = all('div.spec'), shown = 0;
    specs.forEach(function (d) {
      var st = d.getAttribute('data-status');
      var ok = (on[st] !== false) && (!q || d.getAttribute('data-q').indexOf(q) >= 0);
      d.classList.toggle('hidden', !ok);
      if (ok) shown++;
    });
    $('spec-shown').textContent = shown + ' of ' + specs.length + ' specs';
  }
  $('spec-q').addEventListener('input', filterSpecs);
  all('input.spec-status').forEach(function (c) { c.addEventListener('change', filterSpecs); });
  $('spec-open').addEventListener('click', function () {
    all('div.spec:not(.hidden) > details').forEach(function (d) { d.open = true; });
  });
  $('spec-close').addEventListener('click', function () {
    all('div.spec > details').forEach(function (d) { d.open = false; });
  });

  // Timelines zoom along their columns: x positions scale, heights and
  // glyphs keep their size.
  function zoomTo(tl, z, anchorX) {
    var svg = tl.querySelector('svg.tlsvg'), scroll = tl.querySelector('.tlscroll');
    var w = +svg.getAttribute('data-w'), old = +(tl.getAttribute('data-zoom') || 1);
    z = Math.max(0.02, Math.min(z, 12));
    if (anchorX === undefined) anchorX = scroll.clientWidth / 2;
    var at = (scroll.scrollLeft + anchorX) / old;
    tl.setAttribute('data-zoom', z);
    svg.setAttribute('width', Math.max(1, Math.round(w * z)));
    all('[data-x]', svg).forEach(function (el) {
      var x = +el.getAttribute('data-x') * z;
      if (el.tagName.toLowerCase() === 'g') {
        el.setAttribute('transform', 'translate(' + x + ' ' + el.getAttribute('data-y') + ')');
        return;
      }
      el.setAttribute('x', x);
      var dw = el.getAttribute('data-w');
      if (dw !== null) el.setAttribute('width', Math.max(0.5, +dw * z));
    });
    scroll.scrollLeft = Math.max(0, at * z - anchorX);
  }
  function fit(tl) {
    var svg = tl.querySelector('svg.tlsvg'), scroll = tl.querySelector('.tlscroll');
    var w = +svg.getAttribute('data-w');
    if (w > 0 && scroll.clientWidth > 0) zoomTo(tl, scroll.clientWidth / w, 0);
  }
  // A short picture is widened to the space it has (at most 3 times), once
  // it is first shown.
  function autofit(tl) {
    if (tl.getAttribute('data-zoom')) return;
    var svg = tl.querySelector('svg.tlsvg'), scroll = tl.querySelector('.tlscroll');
    var w = +svg.getAttribute('data-w'), room = scroll.clientWidth;
    if (room === 0) return; // hidden: fitted when its spec opens
    zoomTo(tl, w > 0 && w < room ? Math.min(3, room / w) : 1, 0);
  }
  all('div.spec > details').forEach(function (d) {
    d.addEventListener('toggle', function () {
      if (d.open) all('div.tl', d).forEach(autofit);
    });
  });
  all('div.tl').forEach(function (tl) {
    var scroll = tl.querySelector('.tlscroll');
    tl.querySelector('.zin').addEventListener('click', function () { zoomTo(tl, +(tl.getAttribute('data-zoom') || 1) * 1.5); });
    tl.querySelector('.zout').addEventListener('click', function () { zoomTo(tl, +(tl.getAttribute('data-zoom') || 1) / 1.5); });
    tl.querySelector('.zfit').addEventListener('click', function () { fit(tl); });
    scroll.addEventListener('wheel', function (ev) {
      if (!ev.ctrlKey) return;
      ev.preventDefault();
      var r = scroll.getBoundingClientRect();
      var z = +(tl.getAttribute('data-zoom') || 1) * (ev.deltaY < 0 ? 1.25 : 0.8);
      zoomTo(tl, z, ev.clientX - r.left);
    }, { passive: false });
  });

  // A cited event's link opens its spec, brings its mark into view and
  // flashes it.
  function reveal(id) {
    var el = $(id);
    if (!el) return false;
    for (var p = el.parentNode; p; p = p.parentNode) {
      if (p.tagName && p.tagName.toLowerCase() === 'details') p.open = true;
    }
    el.scrollIntoView({ block: 'center', inline: 'center' });
    all('.flash').forEach(function (f) { f.classList.remove('flash'); });
    el.classList.add('flash');
    return true;
  }
  all('a.cite').forEach(function (a) {
    a.addEventListener('click', function (ev) {
      if (reveal(a.getAttribute('data-target'))) ev.preventDefault();
    });
  });
  if (location.hash.length > 1) reveal(decodeURIComponent(location.hash.slice(1)));

  filterRules();
  filterSpecs();
  all('div.tl').forEach(autofit);
  document.documentElement.setAttribute('data-ready', '1');
})();
