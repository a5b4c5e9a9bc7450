(function () {
  'use strict';
  var scenarios = Array.prototype.slice.call(document.querySelectorAll('details.scenario'));
  var texts = scenarios.map(function (s) { return s.textContent.toLowerCase(); });
  var filters = [
    ['filter-tier', 'tier', false],
    ['filter-type', 'type', false],
    ['filter-outcome', 'outcome', false],
    ['filter-tool', 'tools', true],
    ['filter-check', 'checks', true]
  ];
  var search = document.getElementById('search');
  var count = document.getElementById('shown-count');

  function apply() {
    var wanted = filters.map(function (f) {
      var select = document.getElementById(f[0]);
      return { key: f[1], list: f[2], value: select ? select.value : '' };
    });
    var query = search ? search.value.trim().toLowerCase() : '';
    var shown = 0;
    scenarios.forEach(function (scenario, i) {
      var keep = wanted.every(function (w) {
        if (!w.value) { return true; }
        var have = scenario.getAttribute('data-' + w.key) || '';
        return w.list ? have.split(' ').indexOf(w.value) >= 0 : have === w.value;
      }) && (!query || texts[i].indexOf(query) >= 0);
      scenario.hidden = !keep;
      if (keep) { shown += 1; }
    });
    if (count) { count.textContent = String(shown); }
  }

  function clearFilters() {
    filters.forEach(function (f) {
      var select = document.getElementById(f[0]);
      if (select) { select.value = ''; }
    });
    if (search) { search.value = ''; }
    apply();
  }

  function reveal() {
    var id = location.hash.slice(1);
    if (!id) { return; }
    try { id = decodeURIComponent(id); } catch (e) { return; }
    var target = document.getElementById(id);
    if (!target) { return; }
    var holder = target.closest('details');
    if (holder) {
      if (holder.hidden) { clearFilters(); }
      holder.open = true;
    }
    target.scrollIntoView();
  }

  filters.forEach(function (f) {
    var select = document.getElementById(f[0]);
    if (select) { select.addEventListener('change', apply); }
  });
  if (search) { search.addEventListener('input', apply); }
  window.addEventListener('hashchange', reveal);
  apply();
  reveal();
})();
