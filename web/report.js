// headroom report.html: draws a report's views with ECharts from the JSON data in the page
// (the application/json script element with id headroom-data, schema in sim/report/html_report.hpp).
// Embedded into the binary by sim/report/web.cmake; runs offline.
//
// Every string from the data (scenario names, paths, configurations, messages) reaches the DOM through
// textContent or ECharts' canvas/SVG text, never as HTML: tooltips are built as DOM nodes.
//
// A view is {"type": ..., "id": ..., "title": ..., "width": "half" | "third" (optional), ...}; the
// drawers below are keyed by type. Views with the same "group" share their zoom (echarts.connect).
// A new view type is one more entry in `drawers` (see README "HTML reports"). Types: stacked_area,
// lines, xy_lines, cdf, bars, segment_map, frontier (headroom tune) and table.
//
// window.headroom, for the browser test and the --png/--svg renderer:
//   ready: true once every view is drawn; error: a message if drawing failed;
//   views: [{id, type, points}] (points: data items given to the chart or rows of a table);
//   chart(id): the ECharts instance of a view.
(function () {
  'use strict';

  const state = { ready: false, error: null, views: [] };
  const instances = {};
  state.chart = (id) => instances[id];
  window.headroom = state;

  // The renderer: canvas, or SVG when the page is opened as report.html#svg (for --svg).
  const renderer = window.location.hash === '#svg' ? 'svg' : 'canvas';

  function el(tag, cls, text) {
    const e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined && text !== null) e.textContent = String(text);
    return e;
  }

  // Binary units as headroom's text output writes them (sim/core/units.cpp format_bytes).
  function formatBytes(v) {
    if (v === null || v === undefined || Number.isNaN(v)) return '—';
    const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
    let x = Math.abs(v), i = 0;
    while (x >= 1024 && i < units.length - 1) { x /= 1024; i++; }
    return (v < 0 ? '-' : '') + (i === 0 ? String(Math.round(x)) : x.toFixed(2)) + ' ' + units[i];
  }

  function formatValue(v, unit) {
    if (v === null || v === undefined || Number.isNaN(v)) return '—';
    switch (unit) {
      case 'bytes': return formatBytes(v);
      case 'count': return Number.isInteger(v) ? v.toLocaleString('en-US') : v.toFixed(2);
      case 'percent': return (100 * v).toFixed(1) + ' %';
      default: return (Math.abs(v) >= 100 ? v.toFixed(1) : v.toPrecision(4)) + (unit ? ' ' + unit : '');
    }
  }

  function axisLabel(unit) {
    return { formatter: (v) => formatValue(v, unit), hideOverlap: true };
  }

  // A y axis for `unit` up to `top` (from 0, or from a round value at or below `bottom` when given,
  // which may be negative):
  // bytes get ticks at round binary sizes (0, 20, 40 ... GiB rather than ECharts' decimal 18.63 GiB
  // steps).
  function valueAxis(unit, top, extra, bottom) {
    const axis = Object.assign({ type: 'value', axisLabel: axisLabel(unit) }, extra || {});
    if (unit !== 'bytes' || !(top > 0)) return axis;
    const lo = typeof bottom === 'number' && bottom !== 0 && bottom < top ? bottom : 0, span = top - lo;
    let scale = 1;
    while (span / scale >= 1024) scale *= 1024;
    let step = scale;
    for (const m of [1, 2, 5, 10, 20, 50, 100, 200, 500]) {
      step = m * scale;
      if (span / step <= 8) break;
    }
    return Object.assign(axis, { min: Math.floor(lo / step) * step, max: Math.ceil(top / step) * step, interval: step });
  }

  function maxOf(arrays) {
    let m = 0;
    for (const a of arrays) for (const v of a) if (v !== null && v > m) m = v;
    return m;
  }

  function minOf(arrays) {
    let m = Infinity;
    for (const a of arrays) for (const v of a) if (v !== null && v < m) m = v;
    return m === Infinity ? 0 : m;
  }

  // An x axis over [lo, hi] whose end labels are short numbers, not the raw first and last times.
  function xAxis(name, lo, hi) {
    return {
      type: 'value', name, nameLocation: 'middle', nameGap: 26, min: lo >= 0 ? 0 : lo, max: hi,
      axisLabel: { formatter: (v) => String(Number(v.toPrecision(6))), showMaxLabel: false, hideOverlap: true },
    };
  }

  // A tooltip as DOM nodes: a title, then [label, value] lines, then an optional message.
  function tip(title, lines, message) {
    const d = el('div', 'tip');
    if (title !== undefined && title !== null) d.appendChild(el('div', 't', title));
    for (const [label, value, color] of lines) {
      const row = el('div');
      if (color) {
        const dot = el('span', null, '● ');
        dot.style.color = color;
        row.appendChild(dot);
      }
      row.appendChild(document.createTextNode(label + ': ' + value));
      d.appendChild(row);
    }
    if (message) d.appendChild(el('div', 'm', message));
    return d;
  }

  function seriesValues(s, n) {
    return s.values !== undefined ? s.values : new Array(n).fill(s.constant);
  }

  // Zoom on x down to single points (a step of a run, an entry of a trace): wheel and drag inside the
  // chart, or the slider below it. Charts of one group zoom together.
  function zoom() {
    return [{ type: 'inside', xAxisIndex: 0, filterMode: 'none' },
            { type: 'slider', xAxisIndex: 0, filterMode: 'none', height: 18, bottom: 6 }];
  }

  const base = {
    animation: false,
    grid: { left: 72, right: 72, top: 48, bottom: 64 },
    legend: { type: 'scroll', top: 0 },
  };

  // An axis tooltip listing every series at the hovered x, plus the events (OOMs) between it and the
  // next point.
  function axisTooltip(xName, unitOf, events, xs) {
    return {
      trigger: 'axis',
      axisPointer: { type: 'line' },
      formatter: (params) => {
        if (!params.length) return '';
        const x = params[0].value[0];
        const lines = params.map((p) => [p.seriesName, formatValue(p.value[1], unitOf(p.seriesIndex)), p.color]);
        let message = null;
        if (events && events.length) {
          const i = xs.indexOf(x);
          const next = i >= 0 && i + 1 < xs.length ? xs[i + 1] : Infinity;
          const hit = events.filter((e) => e.x >= x && e.x < next);
          if (hit.length) message = hit.map((e) => e.label + ' at ' + e.x.toFixed(3) + ' — ' + e.message).join('\n');
        }
        return tip(xName + ' ' + formatValue(x, ''), lines, message);
      },
    };
  }

  function pairs(xs, ys) {
    const out = new Array(xs.length);
    for (let i = 0; i < xs.length; i++) out[i] = [xs[i], ys[i]];
    return out;
  }

  function constantLine(line, xmin, xmax, color) {
    return {
      type: 'line', name: line.name, data: [[xmin, line.constant], [xmax, line.constant]], symbol: 'none',
      lineStyle: { type: 'dashed', width: 2, color: color }, itemStyle: { color: color }, z: 5,
    };
  }

  const lineColors = ['#c0392b', '#8e44ad', '#2c3e50'];

  const drawers = {
    // Memory stacked by category, with constant lines (capacity, budget) and events (OOMs).
    stacked_area(v, div) {
      const xs = v.x, n = xs.length, xmin = xs[0], xmax = xs[n - 1];
      const columns = v.areas.map((a) => seriesValues(a, n));
      const total = new Array(n).fill(0);
      for (const c of columns) for (let i = 0; i < n; i++) total[i] += c[i] || 0;
      const top = maxOf([total, v.lines.map((l) => l.constant)]);
      const series = v.areas.map((a, k) => ({
        type: 'line', name: a.name, stack: 'total', areaStyle: { opacity: 0.85 }, symbol: 'none',
        lineStyle: { width: 0.5 }, emphasis: { focus: 'series' }, data: pairs(xs, columns[k]),
      }));
      v.lines.forEach((l, i) => series.push(constantLine(l, xmin, xmax, lineColors[i % lineColors.length])));
      if (v.events.length) {
        series.push({
          type: 'line', name: 'OOM', data: [], symbol: 'none', itemStyle: { color: '#d62728' },
          markLine: {
            symbol: 'none', silent: true, lineStyle: { color: '#d62728', width: 1.5 },
            label: { formatter: 'OOM', color: '#d62728' }, data: v.events.map((e) => ({ xAxis: e.x })),
          },
        });
      }
      const points = series.reduce((k, s) => k + s.data.length, 0);
      return {
        points,
        option: Object.assign({}, base, {
          grid: Object.assign({}, base.grid, { top: v.areas.length + v.lines.length > 8 ? 72 : 48 }),
          legend: { top: 0 },
          tooltip: axisTooltip(v.x_name, () => v.unit, v.events, xs),
          xAxis: xAxis(v.x_name, xmin, xmax),
          yAxis: valueAxis(v.unit, top),
          // x as every time chart; y too, to look into the thin dynamic layers on top of the fixed ones.
          dataZoom: zoom().concat([{ type: 'slider', yAxisIndex: 0, filterMode: 'none', width: 12, right: 8 }]),
          series,
        }),
      };
    },

    // Lines over a shared x, on one or two y axes (each with its unit); a series with "reference": true
    // (a capacity, a budget) is dashed. Optional: "y_from_data" (the first axis spans its lines' values,
    // not from 0: what moves on top of a large fixed amount) and "marks" ([{x, y, label, message}], e.g.
    // the closest call) drawn as red points whose message shows on hover.
    lines(v, div) {
      const xs = v.x, n = xs.length;
      const marks = v.marks || [];
      const series = v.series.map((s, k) => ({
        type: 'line', name: s.name, yAxisIndex: s.axis || 0, symbol: 'none',
        lineStyle: s.reference ? { width: 2, type: 'dashed', color: lineColors[k % lineColors.length] } : { width: 1.2 },
        itemStyle: s.reference ? { color: lineColors[k % lineColors.length] } : undefined,
        data: pairs(xs, seriesValues(s, n)),
      }));
      const marked = series.length;
      if (marks.length) {
        series.push({
          type: 'scatter', name: marks[0].label, symbol: 'circle', symbolSize: 11, z: 10,
          itemStyle: { color: '#d62728', borderColor: '#ffffff', borderWidth: 1.5 }, data: marks.map((m) => [m.x, m.y]),
          label: { show: true, position: 'top', formatter: (p) => marks[p.dataIndex].label, color: '#d62728' },
        });
      }
      const unitOf = (i) => (i >= marked ? v.axes[0].unit : v.axes[v.series[i] && v.series[i].axis ? v.series[i].axis : 0].unit);
      const valuesOn = (i) => v.series.filter((s) => (s.axis || 0) === i).map((s) => seriesValues(s, 1))
        .concat(i === 0 ? [marks.map((m) => m.y)] : []);
      const axisFor = (a, i) => {
        const extra = { name: a.name, splitLine: { show: i === 0 } };
        if (!(v.y_from_data && i === 0)) return valueAxis(a.unit, maxOf(valuesOn(i)), extra);
        // A tenth of the span below and above the lines (one 64th of the top when they are flat).
        const all = v.series.filter((s) => (s.axis || 0) === 0).map((s) => seriesValues(s, n)).concat([marks.map((m) => m.y)]);
        // Not below 0 unless a line is (free memory never is; the distance to a budget may be).
        const lo = minOf(all), hi = maxOf(all), pad = Math.max((hi - lo) / 10, Math.abs(hi) / 64);
        return valueAxis(a.unit, hi + pad, extra, lo >= 0 ? Math.max(lo - pad, 0) : lo - pad);
      };
      return {
        points: series.reduce((k, s) => k + s.data.length, 0),
        option: Object.assign({}, base, {
          tooltip: axisTooltip(v.x_name, unitOf, marks, xs),
          xAxis: xAxis(v.x_name, xs[0], xs[n - 1]),
          yAxis: v.axes.map(axisFor),
          dataZoom: zoom().concat(v.y_from_data ? [{ type: 'slider', yAxisIndex: 0, filterMode: 'none', width: 12, right: 8 }] : []),
          series,
        }),
      };
    },

    // Lines given as [x, y] points each (their own x values), with constant lines and optional events
    // ([{x, y, label, message}], e.g. each policy's first OOM on its line) drawn as red markers whose
    // message shows on hover. "y_from_data": the y axis starts at a round value below the lowest point.
    xy_lines(v, div) {
      let xmin = Infinity, xmax = -Infinity;
      for (const s of v.series) for (const p of s.points) { xmin = Math.min(xmin, p[0]); xmax = Math.max(xmax, p[0]); }
      const events = v.events || [];
      const series = v.series.map((s) => ({
        type: 'line', name: s.name, symbol: 'none', lineStyle: { width: 1.2 }, data: s.points,
      }));
      v.lines.forEach((l, i) => series.push(constantLine(l, xmin, xmax, lineColors[i % lineColors.length])));
      const eventSeries = series.length;
      if (events.length) {
        series.push({
          type: 'scatter', name: 'OOM', symbol: 'triangle', symbolSize: 13, z: 10,
          itemStyle: { color: '#d62728', borderColor: '#ffffff', borderWidth: 1 },
          data: events.map((e) => [e.x, e.y]),
        });
      }
      return {
        points: v.series.reduce((k, s) => k + s.points.length, 0) + events.length,
        option: Object.assign({}, base, {
          tooltip: {
            trigger: 'item',
            formatter: (p) => {
              if (p.seriesIndex === eventSeries && events.length) {
                const e = events[p.dataIndex];
                return tip(e.label, [[v.x_name, formatValue(e.x, '')], ['', formatValue(e.y, v.unit)]], e.message);
              }
              return tip(p.seriesName, [[v.x_name, formatValue(p.value[0], '')], ['', formatValue(p.value[1], v.unit)]]);
            },
          },
          xAxis: xAxis(v.x_name, xmin, xmax),
          yAxis: valueAxis(v.unit, maxOf(v.series.map((s) => s.points.map((p) => p[1])).concat([v.lines.map((l) => l.constant)])),
                           null, v.y_from_data ? minOf(v.series.map((s) => s.points.map((p) => p[1]))) : 0),
          dataZoom: zoom().concat([{ type: 'slider', yAxisIndex: 0, filterMode: 'none', width: 12, right: 8 }]),
          series,
        }),
      };
    },

    // headroom tune's frontier: KV tokens by knob value (failing values as red points, their stretches
    // shaded), TTFT p99 on a second axis, and the best value as a vertical line.
    frontier(v, div) {
      const xs = v.x, n = xs.length;
      // The KV axis starts at a round value below the values that started (their differences are a
      // fraction of a percent); a value that did not start has no KV cache and is drawn at the bottom.
      const started = v.kv_tokens.filter((k) => k !== null);
      let bottom = 0, top = 1;
      if (started.length) {
        const lo = Math.min(...started), hi = Math.max(...started);
        const below = Math.max(0, lo - Math.max((hi - lo) * 0.5, hi * 0.005));
        const step = Math.pow(10, Math.floor(Math.log10(Math.max(hi - below, 1))));
        bottom = Math.floor(below / step) * step;
        top = Math.ceil((hi + (hi - below) * 0.05) / step) * step;
      }
      const ok = [], bad = [];
      for (let i = 0; i < n; i++) (v.failed[i] ? bad : ok).push([xs[i], v.kv_tokens[i] === null ? bottom : v.kv_tokens[i]]);
      const series = [
        { type: 'line', name: 'KV tokens', data: pairs(xs, v.kv_tokens), symbol: 'none', connectNulls: false,
          lineStyle: { width: 2, color: '#3b6fb6' }, itemStyle: { color: '#3b6fb6' },
          markArea: {
            silent: true, itemStyle: { color: 'rgba(214, 39, 40, 0.12)' },
            label: { show: true, position: 'insideTop', color: '#d62728', formatter: 'runs out of memory' },
            data: v.regions.map((r) => [{ xAxis: r[0] }, { xAxis: r[1] }]),
          } },
        { type: 'scatter', name: 'passes', data: ok, symbolSize: 8, itemStyle: { color: '#3b6fb6' } },
        { type: 'scatter', name: 'fails', data: bad, symbol: 'diamond', symbolSize: 11, itemStyle: { color: '#d62728' } },
        { type: 'line', name: 'TTFT p99', yAxisIndex: 1, data: pairs(xs, v.ttft_p99_s), symbol: 'circle', symbolSize: 5,
          lineStyle: { width: 1.2, type: 'dashed', color: '#f0a202' }, itemStyle: { color: '#f0a202' } },
      ];
      if (v.best !== null && v.best !== undefined) {
        series.push({
          type: 'line', name: 'best', data: [], symbol: 'none', itemStyle: { color: '#2e8b57' },
          markLine: {
            symbol: 'none', silent: true, lineStyle: { color: '#2e8b57', width: 2, type: 'solid' },
            // From the axis' bottom to its top as two coordinates: the single {xAxis} form lands on the
            // axis' start on this two-axis chart (ECharts 6.1).
            label: { formatter: 'best ' + String(Number(v.best.toPrecision(6))), color: '#2e8b57' },
            data: [[{ coord: [v.best, bottom] }, { coord: [v.best, top] }]],
          },
        });
      }
      const at = (i) => tip(v.x_name + ' ' + formatValue(xs[i], ''), [
        ['KV tokens', v.kv_tokens[i] === null ? 'did not start' : formatValue(v.kv_tokens[i], 'count')],
        ['TTFT p99', formatValue(v.ttft_p99_s[i], 's')],
      ], v.failed[i] ? v.failures[i] : null);
      return {
        points: n,
        option: Object.assign({}, base, {
          tooltip: {
            trigger: 'axis', axisPointer: { type: 'line' },
            formatter: (params) => (params.length ? at(xs.indexOf(params[0].value[0])) : ''),
          },
          xAxis: Object.assign(xAxis(v.x_name, xs[0], xs[n - 1]), { min: xs[0] }),  // the range, not from 0
          yAxis: [valueAxis('count', maxOf([v.kv_tokens]), { name: 'KV tokens', min: bottom, max: top }),
                  valueAxis('s', maxOf([v.ttft_p99_s]), { name: 'TTFT p99', splitLine: { show: false } })],
          dataZoom: zoom(),
          series,
        }),
      };
    },

    // Empirical CDFs: x the value, y the share of requests at or below it.
    cdf(v, div) {
      const series = v.series.map((s) => ({
        type: 'line', name: s.name, symbol: 'none', step: 'end', data: pairs(s.x, s.p),
      }));
      return {
        points: series.reduce((k, s) => k + s.data.length, 0),
        option: Object.assign({}, base, {
          grid: { left: 56, right: 24, top: 40, bottom: 64 },
          tooltip: {
            trigger: 'axis',
            formatter: (params) => tip(null, params.map((p) => [
              p.seriesName, formatValue(p.value[0], v.unit) + ' at ' + formatValue(p.value[1], 'percent'), p.color])),
          },
          xAxis: { type: 'value', name: v.unit, nameLocation: 'middle', nameGap: 26, min: 0, axisLabel: axisLabel(v.unit) },
          yAxis: { type: 'value', min: 0, max: 1, axisLabel: axisLabel('percent') },
          dataZoom: zoom(),
          series,
        }),
      };
    },

    // Grouped bars by category (e.g. one group per what-if configuration or policy). Optional: "stack"
    // (the series stacked: one bar per category, coloured by the series holding its value), a series'
    // "color", and "axes" ([{name, unit}], a series' "axis" its index) for two units side by side.
    bars(v, div) {
      const n = v.categories.length;
      const axes = v.axes || [{ name: '', unit: v.unit }];
      const series = v.series.map((s) => Object.assign({
        type: 'bar', name: s.name, yAxisIndex: s.axis || 0, data: seriesValues(s, n),
      }, v.stack ? { stack: 'total' } : {}, s.color ? { itemStyle: { color: s.color } } : {}));
      const unitOf = (i) => axes[v.series[i] && v.series[i].axis ? v.series[i].axis : 0].unit;
      // Labels that would run into each other (policy names with their parameters) are slanted.
      const long = v.categories.reduce((k, c) => k + String(c).length, 0) * 7 > 80 * n;
      return {
        points: series.reduce((k, s) => k + s.data.length, 0),
        option: Object.assign({}, base, {
          tooltip: {
            trigger: 'axis', axisPointer: { type: 'shadow' },
            formatter: (params) => tip(params.length ? params[0].name : '',
              params.filter((p) => p.value !== null && p.value !== undefined)
                    .map((p) => [p.seriesName, formatValue(p.value, unitOf(p.seriesIndex)), p.color])),
          },
          grid: Object.assign({}, base.grid, long ? { bottom: 120 } : {}),
          xAxis: { type: 'category', data: v.categories,
                   axisLabel: { interval: 0, width: long ? 140 : 180, overflow: 'truncate', rotate: long ? 30 : 0 } },
          yAxis: axes.map((a, i) => valueAxis(a.unit,
            maxOf(v.series.filter((s) => (s.axis || 0) === i).map((s) => seriesValues(s, n))),
            { name: a.name, splitLine: { show: i === 0 } })),
          series,
        }),
      };
    },

    // One row per segment (address order); each block spans its share of the segment, coloured by state.
    segment_map(v, div) {
      const stateNames = ['allocated', 'freed, pending stream events', 'free (cached)'];
      const stateColors = ['#3b6fb6', '#f0a202', '#d5dbe3'];
      const labels = v.segments.map((s) => formatBytes(s.size));
      const byState = [[], [], []];
      v.segments.forEach((s, row) => {
        for (const b of s.blocks) {
          const [offset, size, requested, st, merged] = b;
          byState[st].push([row, offset / s.size, (offset + size) / s.size, size, requested, merged, offset]);
        }
      });
      const series = byState.map((data, st) => ({
        type: 'custom', name: stateNames[st], itemStyle: { color: stateColors[st] }, data,
        encode: { x: [1, 2], y: 0 }, progressive: 0,
        renderItem: (params, api) => {
          const row = api.value(0);
          const a = api.coord([api.value(1), row]), b = api.coord([api.value(2), row]);
          const h = api.size([0, 1])[1] * 0.8;
          const shape = echarts.graphic.clipRectByRect(
            { x: a[0], y: a[1] - h / 2, width: Math.max(b[0] - a[0], 1), height: h },
            { x: params.coordSys.x, y: params.coordSys.y, width: params.coordSys.width, height: params.coordSys.height });
          return shape && { type: 'rect', shape, style: { fill: stateColors[st], stroke: '#ffffff', lineWidth: 0.3 } };
        },
      }));
      const rows = v.segments.length, shown = Math.min(rows, 40);
      div.style.height = Math.max(220, 90 + shown * 14) + 'px';
      return {
        points: byState.reduce((k, d) => k + d.length, 0),
        option: Object.assign({}, base, {
          grid: { left: 84, right: 40, top: 40, bottom: 40 },
          tooltip: {
            trigger: 'item',
            formatter: (p) => {
              const s = v.segments[p.value[0]];
              const [, , , size, requested, merged, offset] = p.value;
              return tip(p.seriesName, [
                ['segment', '0x' + s.address.toString(16) + ', ' + formatBytes(s.size) + ', ' + s.pool + ' pool, stream ' + s.stream],
                ['block', (merged > 1 ? merged + ' neighbouring blocks, ' : '') + formatBytes(size) + ' at +' + formatBytes(offset)],
                ['requested', formatBytes(requested)],
              ]);
            },
          },
          xAxis: { type: 'value', min: 0, max: 1, axisLabel: axisLabel('percent'), name: 'share of the segment',
                   nameLocation: 'middle', nameGap: 24 },
          yAxis: { type: 'category', data: labels, inverse: true, axisLabel: { fontSize: 10 } },
          dataZoom: rows > shown ? [{ type: 'slider', yAxisIndex: 0, startValue: 0, endValue: shown - 1, width: 14, right: 8 },
                                    { type: 'inside', yAxisIndex: 0, zoomOnMouseWheel: false, moveOnMouseWheel: true }] : [],
          series,
        }),
        note: rows + ' segments' + (rows > shown ? ' (scroll for more)' : '') + ' at trace entry ' + v.event_index +
              (v.merged ? '; neighbouring blocks of one state drawn merged' : ''),
      };
    },
  };

  // Views that are not charts.
  const builders = {
    table(v, section) {
      const table = el('table');
      const head = el('tr');
      for (const c of v.columns) head.appendChild(el('th', null, c));
      table.appendChild(head);
      for (const r of v.rows) {
        const tr = el('tr');
        for (const c of r) tr.appendChild(el('td', null, c));
        table.appendChild(tr);
      }
      section.appendChild(table);
      return v.rows.length;
    },
  };

  function header(data, root) {
    document.title = data.title;
    root.appendChild(el('h1', null, data.title));
    const h = data.header || {};
    if (h.verdict) root.appendChild(el('p', 'verdict', h.verdict));
    if (h.headroom) {
      const p = el('p', 'headroom');
      p.appendChild(el('strong', null, 'headroom: '));
      p.appendChild(document.createTextNode(h.headroom));
      root.appendChild(p);
    }
    if (h.facts && h.facts.length) {
      const dl = el('dl', 'facts');
      for (const [k, val] of h.facts) { dl.appendChild(el('dt', null, k)); dl.appendChild(el('dd', null, val)); }
      root.appendChild(dl);
    }
    for (const d of h.details || []) {
      const det = el('details');
      det.appendChild(el('summary', null, d.label));
      det.appendChild(el('pre', null, d.text));
      root.appendChild(det);
    }
  }

  function draw() {
    const data = JSON.parse(document.getElementById('headroom-data').textContent);
    const root = document.getElementById('report');
    header(data, root);
    const views = el('div', 'views');
    root.appendChild(views);
    const groups = new Set();
    for (const v of data.views) {
      const section = el('section', 'view' + (v.width ? ' ' + v.width : ''));
      section.id = 'view-' + v.id;
      section.appendChild(el('h2', null, v.title));
      views.appendChild(section);
      if (builders[v.type]) {
        state.views.push({ id: v.id, type: v.type, points: builders[v.type](v, section) });
        continue;
      }
      const drawer = drawers[v.type];
      if (!drawer) throw new Error('unknown view type ' + v.type);
      const div = el('div', 'chart');
      section.appendChild(div);
      const made = drawer(v, div);
      const chart = echarts.init(div, null, { renderer });
      chart.setOption(made.option);
      if (v.group) { chart.group = v.group; groups.add(v.group); }
      if (made.note) section.appendChild(el('p', 'note', made.note));
      instances[v.id] = chart;
      state.views.push({ id: v.id, type: v.type, points: made.points });
    }
    for (const g of groups) echarts.connect(g);
    window.addEventListener('resize', () => { for (const id in instances) instances[id].resize(); });
  }

  try {
    draw();
    state.ready = true;
  } catch (e) {
    state.error = String(e && e.stack ? e.stack : e);
    console.error('headroom report: ' + state.error);
  }
})();
