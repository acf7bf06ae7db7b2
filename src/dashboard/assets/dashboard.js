// Glimpse dashboard: progressive enhancement only (pages work without it). No inline script anywhere;
// CSP is script-src 'self'.
(function () {
  'use strict';

  // Copy buttons: <button data-copy="element-id">.
  document.addEventListener('click', function (event) {
    const button = event.target.closest && event.target.closest('button[data-copy]');
    if (!button) return;
    const source = document.getElementById(button.getAttribute('data-copy'));
    if (!source) return;
    const text = source.textContent.trim();
    const done = function () {
      button.textContent = 'Copied';
      setTimeout(function () {
        button.textContent = 'Copy';
      }, 2000);
    };
    if (navigator.clipboard && window.isSecureContext) {
      navigator.clipboard.writeText(text).then(done, function () {
        selectText(source);
      });
    } else {
      selectText(source);
      try {
        document.execCommand('copy');
        done();
      } catch {
        /* text stays selected */
      }
    }
  });

  // File inputs that fill a textarea: <input type="file" data-load-into="textarea-id"> (the Profiles page's state file).
  document.addEventListener('change', function (event) {
    const input = event.target;
    if (!input.matches || !input.matches('input[type=file][data-load-into]') || !input.files || !input.files[0]) return;
    const target = document.getElementById(input.getAttribute('data-load-into'));
    if (!target) return;
    input.files[0].text().then(function (text) {
      target.value = text;
    });
  });

  function selectText(element) {
    const range = document.createRange();
    range.selectNodeContents(element);
    const selection = window.getSelection();
    selection.removeAllRanges();
    selection.addRange(range);
  }

  const PALETTE = ['#2563eb', '#d97706', '#059669', '#7c3aed', '#db2777', '#0891b2', '#65a30d', '#dc2626'];

  /** Steps between grid lines on both axes of the usage chart. */
  const AXIS_STEPS = 5;

  /** The smallest round maximum of at least `value` (and at least AXIS_STEPS) whose AXIS_STEPS steps are whole numbers: 100 → 100, 102 → 125, 7 → 10. */
  function roundAxisMax(value) {
    const raw = Math.max(1, value / AXIS_STEPS);
    const power = Math.pow(10, Math.floor(Math.log10(raw)));
    const multiples = power >= 10 ? [1, 1.5, 2, 2.5, 3, 4, 5, 6, 7.5, 8, 10] : [1, 2, 3, 4, 5, 6, 8, 10];
    const step =
      multiples.find(function (m) {
        return m * power >= raw;
      }) * power;
    return step * AXIS_STEPS;
  }

  // Usage chart: bars per day per key (left axis), each key's month-to-date total as a line against
  // the 80% and 95% thresholds of the cap (right axis).
  function drawCharts(root) {
    if (!window.Chart) return;
    const canvases = (root || document).querySelectorAll('canvas[data-chart]');
    canvases.forEach(function (canvas) {
      if (canvas.dataset.drawn) return;
      canvas.dataset.drawn = '1';
      const data = JSON.parse(canvas.getAttribute('data-chart'));
      const labels = data.days.map(function (d) {
        return d.slice(5);
      });
      const datasets = [];
      data.series.forEach(function (s, i) {
        const color = PALETTE[i % PALETTE.length];
        datasets.push({
          type: 'bar',
          label: s.label + ' per day',
          data: s.daily,
          backgroundColor: color + 'cc',
          yAxisID: 'daily',
          order: 2,
        });
        let total = 0;
        datasets.push({
          type: 'line',
          label: s.label + ' month to date',
          borderColor: color,
          backgroundColor: color,
          pointRadius: 2,
          tension: 0.1,
          data: s.daily.map(function (n) {
            total += n;
            return total;
          }),
          yAxisID: 'total',
          order: 1,
        });
      });
      [
        ['80% of cap', data.thresholds[0], '#b45309'],
        ['95% of cap', data.thresholds[1], '#b91c1c'],
      ].forEach(function (t) {
        datasets.push({
          type: 'line',
          label: t[0] + ' (' + t[1].toLocaleString('en-US') + ')',
          data: labels.map(function () {
            return t[1];
          }),
          borderColor: t[2],
          borderDash: [6, 4],
          borderWidth: 1.5,
          pointRadius: 0,
          yAxisID: 'total',
          order: 0,
        });
      });
      const maxOf = function (axis) {
        return Math.max.apply(
          null,
          [0].concat(
            datasets
              .filter(function (d) {
                return d.yAxisID === axis;
              })
              .map(function (d) {
                return Math.max.apply(null, d.data.concat([0]));
              }),
          ),
        );
      };
      // Both axes get AXIS_STEPS equal steps from 0 to a round maximum, so the grid lines (drawn for
      // the daily axis) also fall on the month-to-date axis's ticks: a threshold line labelled 95 is read
      // against a 95 (or a round number near it), never against another axis's 90.
      const dailyMax = roundAxisMax(maxOf('daily'));
      const totalMax = roundAxisMax(Math.max(maxOf('total'), data.thresholds[1]) * 1.02);
      canvas.chart = new window.Chart(canvas, {
        data: { labels, datasets },
        options: {
          responsive: true,
          maintainAspectRatio: false,
          animation: false,
          interaction: { mode: 'index', intersect: false },
          plugins: { legend: { position: 'bottom', labels: { boxWidth: 12 } } },
          scales: {
            daily: {
              type: 'linear',
              position: 'left',
              min: 0,
              max: dailyMax,
              title: { display: true, text: 'Captures per day' },
              ticks: { precision: 0, count: AXIS_STEPS + 1 },
            },
            total: {
              type: 'linear',
              position: 'right',
              min: 0,
              max: totalMax,
              title: { display: true, text: 'Month to date' },
              grid: { drawOnChartArea: false },
              ticks: { precision: 0, count: AXIS_STEPS + 1 },
            },
          },
        },
      });
    });
  }

  // Monitor changes: outline each changed region over its image, placed in % of the image's own pixel size.
  function placeRegions(root) {
    root.querySelectorAll('img[data-region-host]').forEach(function (img) {
      const place = function () {
        if (!img.naturalWidth) return;
        img
          .closest('div')
          .querySelectorAll('[data-region]')
          .forEach(function (box) {
            box.style.left = (100 * box.dataset.x) / img.naturalWidth + '%';
            box.style.top = (100 * box.dataset.y) / img.naturalHeight + '%';
            box.style.width = (100 * box.dataset.w) / img.naturalWidth + '%';
            box.style.height = (100 * box.dataset.h) / img.naturalHeight + '%';
          });
      };
      if (img.complete) place();
      else img.addEventListener('load', place);
    });
  }

  document.addEventListener('DOMContentLoaded', function () {
    drawCharts(document);
    placeRegions(document);
  });
  document.addEventListener('htmx:afterSettle', function (event) {
    drawCharts(event.target);
    placeRegions(event.target);
  });
})();
