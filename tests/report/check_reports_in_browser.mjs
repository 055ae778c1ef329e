// The HTML reports as a reader opens them: headless Chromium (Debian's `chromium`, driven by
// playwright-core from web/node_modules) loads each kind of report.html and the test fails on any
// console error, page error or network request (the page must be self-contained), on a view that was
// not drawn or drew no data points, and on a user string that became markup. It saves a screenshot of
// every report (the quickstart's is the README's: HEADROOM_UPDATE_SCREENSHOTS=1 copies it to
// docs/images/quickstart-report.png).
//
// Reports: the quickstart (`headroom run`), the project's own sample snapshot (`headroom replay -o`
// with what-ifs), `headroom compare` on the sampler-spike incident, `headroom tune` on the quickstart,
// a scenario and a snapshot whose names hold <script>/<img onerror> markup, and, from
// $HEADROOM_DATA when present, a real PyTorch snapshot and a one-hour trace (file size bound). Also:
// `headroom report DIR` rebuilds the same bytes, and --png/--svg write one image per chart.
//
// Run by ctest: node check_reports_in_browser.mjs HEADROOM_BINARY SOURCE_DIR WORK_DIR DEFAULT_DATA_DIR
// Exit 0 pass, 1 fail, 77 skipped (no Chromium; a failure under CI=true).
import { execFileSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

const [, , headroom, sourceDir, workDir, defaultData] = process.argv;
const dataDir = process.env.HEADROOM_DATA || defaultData;
const ci = process.env.CI === 'true';
const { chromiumPath, launchChromium } = await import(pathToFileURL(path.join(sourceDir, 'web', 'chromium.mjs')).href);

if (!existsSync(chromiumPath)) {
  console.log(`${chromiumPath} is missing (make test installs Debian's chromium)`);
  process.exit(ci ? 1 : 77);
}

let failures = 0;
function check(ok, what) {
  if (ok) {
    console.log(`  ok    ${what}`);
  } else {
    console.log(`  FAIL  ${what}`);
    failures++;
  }
}

function run(args) {
  return execFileSync(headroom, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
}

rmSync(workDir, { recursive: true, force: true });
mkdirSync(workDir, { recursive: true });

// A quick variant of the quickstart for the hostile-name case: same engine and GPU, 200 requests.
const quickstart = readFileSync(path.join(sourceDir, 'scenarios', 'quickstart.yaml'), 'utf8');
const hostileName = '<script>window.__injected = 1</script><img src=x onerror="window.__injected = 2">';
const hostileScenario = path.join(workDir, 'hostile.yaml');
writeFileSync(hostileScenario, quickstart.replace(/^name: .*$/m, `name: '${hostileName}'`)
                                        .replace(/requests: 3000/, 'requests: 200'));

// The project's own snapshot, under a file name that is markup.
const sample = path.join(workDir, 'sample.pickle');
run(['sample-snapshot', '-o', sample]);
const hostileSnapshotDir = path.join(workDir, '<img src=x onerror="window.__injected = 3">');
mkdirSync(hostileSnapshotDir);
const hostileSnapshot = path.join(hostileSnapshotDir, 'sample.pickle');
copyFileSync(sample, hostileSnapshot);

const reports = [];
const quickDir = path.join(workDir, 'quickstart');
run(['run', path.join(sourceDir, 'scenarios', 'quickstart.yaml'), '-o', quickDir, '--no-progress']);
const summaryOf = (dir) => JSON.parse(readFileSync(path.join(dir, 'summary.json'), 'utf8'));
reports.push({ name: 'quickstart', dir: quickDir, summary: summaryOf(quickDir),
               views: ['headroom', 'memory', 'kv', 'fragmentation', 'load', 'ttft', 'tpot', 'e2e'] });
const hostileDir = path.join(workDir, 'hostile-run');
run(['run', hostileScenario, '-o', hostileDir, '--no-progress']);
reports.push({ name: 'run with markup in its name', dir: hostileDir, hostile: hostileName,
               views: ['headroom', 'memory', 'kv', 'fragmentation', 'load', 'ttft', 'tpot', 'e2e'] });
// OOM events on the memory chart (tests/cli: LightLLM's start-up check never samples a 600-sequence
// decode; with on_oom: continue every would-be OOM is listed). At mem_fraction 0.95 two steps fail
// and 272 requests still finish, so the latency charts have data (at 0.955 every request is dropped).
const oomScenario = path.join(workDir, 'oom.yaml');
writeFileSync(oomScenario, 'name: oom\ngpu: {profile: h100-sxm-80gb}\nmodel: {name: Llama-3.1-8B}\n' +
  'engine: {kind: lightllm, mem_fraction: 0.95}\non_oom: continue\nworkload:\n  synthetic:\n    requests: 1500\n' +
  '    arrivals: {process: poisson, rate: 400}\n    input: {dist: fixed, value: 200}\n' +
  '    output: {dist: fixed, value: 600}\n');
const oomDir = path.join(workDir, 'oom-run');
run(['run', oomScenario, '-o', oomDir, '--no-progress']);
const ooms = summaryOf(oomDir).ooms;
reports.push({ name: 'run with OOM events', dir: oomDir, ooms, summary: summaryOf(oomDir),
               views: ['headroom', 'memory', 'kv', 'fragmentation', 'load', 'ttft', 'tpot', 'e2e'] });
const sampleDir = path.join(workDir, 'replay-sample');
run(['replay', sample, '-o', sampleDir, '--what-if', 'expandable_segments:True', '--what-if', 'max_split_size_mb:20',
     '--capacity', '4GiB']);
reports.push({ name: 'replay of the sample snapshot', dir: sampleDir,
               views: ['memory', 'fragmentation', 'segments-peak', 'segments-final', 'what-if', 'what-if-table',
                       'what-if-reserved'] });
const hostileReplayDir = path.join(workDir, 'replay-hostile');
run(['replay', hostileSnapshot, '-o', hostileReplayDir]);
reports.push({ name: 'replay with markup in its path', dir: hostileReplayDir, hostile: hostileSnapshot,
               views: ['memory', 'fragmentation', 'segments-peak', 'segments-final'] });

// headroom compare on the sampler-spike incident (rows with and without an OOM, memory overlaid) and
// headroom tune on the quickstart (values that pass and values that fail, the best one marked).
const compareDir = path.join(workDir, 'compare');
run(['compare', path.join(sourceDir, 'scenarios', 'incident-sampler-spike.yaml'), '-o', compareDir]);
const comparison = JSON.parse(readFileSync(path.join(compareDir, 'comparison.json'), 'utf8'));
reports.push({ name: 'compare of incident-sampler-spike', dir: compareDir, comparison,
               views: ['policies', 'kv-tokens', 'latency', 'memory'], tables: ['policies'] });
const tuneDir = path.join(workDir, 'tune');
run(['tune', path.join(sourceDir, 'scenarios', 'quickstart.yaml'), '--knob', 'gpu_memory_utilization',
     '--range', '0.98:0.99', '--points', '11', '--stress', 'none', '-o', tuneDir]);
const tune = JSON.parse(readFileSync(path.join(tuneDir, 'tune.json'), 'utf8'));
reports.push({ name: 'tune of the quickstart', dir: tuneDir, tune, views: ['frontier', 'frontier-table'],
               tables: ['frontier-table'] });

const realSnapshot = path.join(dataDir, 'torch_snapshots', 'cs336_magma27_train_step.pickle');
const hourTrace = path.join(sourceDir, 'scenarios', 'vllm-azure-conv.yaml');
const haveData = existsSync(realSnapshot) && existsSync(path.join(dataDir, 'azure2023_conv.csv'));
if (haveData) {
  const realDir = path.join(workDir, 'replay-real');
  run(['replay', realSnapshot, '-o', realDir, '--what-if', 'expandable_segments:True']);
  reports.push({ name: 'replay of cs336_magma27_train_step.pickle', dir: realDir,
                 views: ['memory', 'fragmentation', 'segments-peak', 'segments-final', 'what-if', 'what-if-table',
                         'what-if-reserved'] });
  // The Azure conversation trace spans 3,504 s: the report of a one-hour trace stays small.
  const hourDir = path.join(workDir, 'azure-conv');
  execFileSync(headroom, ['run', hourTrace, '-o', hourDir, '--no-progress'],
               { stdio: 'ignore', env: { ...process.env, HEADROOM_DATA: dataDir } });
  const mb = statSync(path.join(hourDir, 'report.html')).size / 1e6;
  check(mb < 3, `the one-hour trace's report.html is ${mb.toFixed(2)} MB (< 3 MB)`);
  reports.push({ name: 'run of the one-hour Azure conversation trace', dir: hourDir,
                 views: ['headroom', 'memory', 'kv', 'fragmentation', 'load', 'ttft', 'tpot', 'e2e'] });
} else {
  console.log(`  (no ${realSnapshot} or azure2023_conv.csv: the real-data reports are not checked)`);
  if (ci) failures++;
}

// report.html is rebuilt byte for byte from the saved outputs; --png/--svg write one file per chart.
for (const r of reports.filter((x) => [quickDir, sampleDir, compareDir, tuneDir].includes(x.dir))) {
  const written = readFileSync(path.join(r.dir, 'report.html'));
  run(['report', r.dir, '--png', '--svg']);
  check(Buffer.compare(written, readFileSync(path.join(r.dir, 'report.html'))) === 0,
        `${r.name}: headroom report rebuilds the same report.html`);
  const charts = r.views.filter((v) => !(r.tables || ['what-if-table']).includes(v));
  for (const id of charts) {
    const png = path.join(r.dir, `${id}.png`), svg = path.join(r.dir, `${id}.svg`);
    const pngOk = existsSync(png) && readFileSync(png).subarray(0, 8).equals(Buffer.from([137, 80, 78, 71, 13, 10, 26, 10]))
                  && statSync(png).size > 5000;
    const svgOk = existsSync(svg) && readFileSync(svg, 'utf8').startsWith('<svg') && statSync(svg).size > 2000;
    check(pngOk && svgOk, `${r.name}: ${id}.png and ${id}.svg written`);
  }
}

const { context, profile } = await launchChromium({ viewport: { width: 1400, height: 900 } });
try {
  for (const r of reports) {
    console.log(`${r.name} (${r.dir})`);
    const file = path.join(r.dir, 'report.html');
    const html = readFileSync(file, 'utf8');
    check(html.length < 3e6, `report.html is ${(html.length / 1e6).toFixed(2)} MB`);
    const page = await context.newPage();
    const problems = [], requests = [];
    const url = pathToFileURL(file).href;
    page.on('console', (m) => { if (m.type() === 'error') problems.push(`console error: ${m.text()}`); });
    page.on('pageerror', (e) => problems.push(`page error: ${e}`));
    page.on('dialog', (d) => { problems.push(`dialog: ${d.message()}`); d.dismiss(); });
    await page.route('**/*', (route) => {
      const u = route.request().url();
      if (u === url) return route.continue();
      requests.push(u);
      return route.abort();
    });
    await page.goto(url);
    await page.waitForFunction(() => window.headroom && (window.headroom.ready || window.headroom.error), null,
                               { timeout: 30000 });
    const state = await page.evaluate(() => ({
      error: window.headroom.error,
      injected: window.__injected,
      title: document.title,
      h1: document.querySelector('h1').textContent,
      facts: [...document.querySelectorAll('dl.facts dd')].map((d) => d.textContent),
      headroom: document.querySelector('p.headroom') ? document.querySelector('p.headroom').textContent : null,
      scripts: document.scripts.length,
      images: document.images.length,
      views: window.headroom.views.map((v) => {
        const c = window.headroom.chart(v.id);
        // What the chart drew: data items in its series, and graphic elements on its canvas.
        const series = c ? c.getOption().series : [];
        return { id: v.id, type: v.type, points: v.points,
                 items: series.reduce((k, s) => k + (s.data ? s.data.length : 0), 0),
                 drawn: c ? c.getZr().storage.getDisplayList().length : null };
      }),
    }));
    check(state.error === null, `drawn without error${state.error ? ': ' + state.error : ''}`);
    check(problems.length === 0, `no console or page errors${problems.length ? ': ' + problems.join(' | ') : ''}`);
    check(requests.length === 0, `no network requests${requests.length ? ': ' + requests.join(', ') : ''}`);
    const ids = state.views.map((v) => v.id);
    check(JSON.stringify(ids) === JSON.stringify(r.views), `views ${ids.join(', ')}`);
    for (const v of state.views) {
      if (v.type === 'table') {
        check(v.points > 0, `${v.id}: ${v.points} table rows`);
      } else {
        check(v.points > 0 && v.items > 0 && v.drawn > 10,
              `${v.id}: ${v.items} data items, ${v.drawn} elements drawn`);
      }
    }
    if (r.ooms) {
      // Hovering the memory chart where the first OOM happened shows its message.
      const shown = await page.evaluate((t) => {
        const c = window.headroom.chart('memory');
        const xs = c.getOption().series[0].data.map((p) => p[0]);
        let i = 0;
        while (i + 1 < xs.length && xs[i + 1] <= t) i++;
        c.dispatchAction({ type: 'showTip', seriesIndex: 0, dataIndex: i });
        return document.querySelector('#view-memory').textContent;
      }, r.ooms[0].time_s);
      check(r.ooms.length > 0 && shown.includes(r.ooms[0].message),
            `the memory chart shows the first of ${r.ooms.length} OOMs' message on hover`);
    }
    if (r.summary) {
      // The headroom line on top; free memory on an axis zoomed to where it moves (not from 0), the
      // closest call marked where summary.json puts it, its figures on hover.
      const h = r.summary.headroom;
      check(state.headroom !== null && state.headroom.startsWith('headroom: ') &&
            state.headroom.includes(' free on the device at the lowest'), `headroom line: ${state.headroom}`);
      const shown = await page.evaluate(() => {
        const c = window.headroom.chart('headroom');
        const series = c.getOption().series;
        const mark = series.findIndex((s) => s.name === 'closest call');
        const free = series[0].data.map((p) => p[1]);
        const all = series.filter((s) => s.type === 'line').flatMap((s) => s.data.map((p) => p[1]));
        const out = { axisMin: c.getModel().getComponent('yAxis', 0).axis.scale.getExtent()[0],
                      lowest: Math.min(...free), span: Math.max(...all) - Math.min(...all),
                      mark: mark >= 0 ? series[mark].data : [], text: '' };
        if (mark >= 0) {
          c.dispatchAction({ type: 'showTip', seriesIndex: mark, dataIndex: 0 });
          out.text = document.querySelector('#view-headroom').textContent;
        }
        return out;
      });
      // Lines further above 0 than their span (the quickstart's: 7.5 GiB free, moving by 4 GiB) start
      // the axis above 0.
      check(shown.axisMin <= shown.lowest && shown.lowest >= h.min_free_bytes &&
            (shown.axisMin > 0 || shown.lowest <= shown.span),
            `headroom: y axis from ${shown.axisMin} B (free at least ${shown.lowest} B, the lines span ${shown.span} B; ` +
            `closest call ${h.min_free_bytes} B)`);
      if (h.step === null) {
        check(shown.mark.length === 0, 'headroom: no step took memory from the device, nothing marked');
      } else {
        check(shown.mark.length === 1 && shown.mark[0][0] === h.at_s && shown.mark[0][1] === h.min_free_bytes &&
              shown.text.includes(`step ${h.step}, allocating ${h.allocation}`),
              `headroom: the closest call marked at ${h.at_s} s, its step and allocation on hover`);
      }
    }
    if (r.comparison) {
      // Every policy that started has its line; each first OOM while serving is a marker on it whose
      // PyTorch message shows on hover.
      const rows = r.comparison.policies;
      const started = rows.filter((p) => p.started).length;
      const oomRows = rows.filter((p) => p.started && p.first_oom);
      const shown = await page.evaluate(() => {
        const c = window.headroom.chart('memory');
        const series = c.getOption().series;
        const ooms = series.findIndex((s) => s.name === 'OOM' && s.type === 'scatter');
        const lines = series.filter((s) => s.type === 'line' && s.name !== 'capacity').length;
        if (ooms >= 0) c.dispatchAction({ type: 'showTip', seriesIndex: ooms, dataIndex: 0 });
        return { lines, markers: ooms >= 0 ? series[ooms].data.length : 0,
                 text: document.querySelector('#view-memory').textContent,
                 kvBars: window.headroom.chart('kv-tokens').getOption().series.map((s) => s.data.filter((v) => v !== null).length) };
      });
      check(shown.lines === started, `memory: ${shown.lines} policies' reserved memory lines (${started} started)`);
      check(oomRows.length > 0 && shown.markers === oomRows.length && shown.text.includes(oomRows[0].first_oom.message),
            `memory: ${shown.markers} OOM markers, the first one's message on hover`);
      const clean = rows.filter((p) => p.started && !p.first_oom).length;
      check(shown.kvBars[0] === clean && shown.kvBars[1] === rows.length - clean && clean > 0 && clean < rows.length,
            `kv-tokens: ${shown.kvBars[0]} bars without an OOM, ${shown.kvBars[1]} with one`);
    }
    if (r.tune) {
      // The failing values are shaded, the best value is marked, TTFT p99 is on the second axis.
      const f = await page.evaluate(() => {
        const o = window.headroom.chart('frontier').getOption();
        const kv = o.series[0], best = o.series.find((s) => s.name === 'best');
        return { regions: kv.markArea ? kv.markArea.data.length : 0,
                 best: best ? best.markLine.data[0][0].coord[0] : null,
                 bestAt: best ? window.headroom.chart('frontier').getZr().storage.getDisplayList()
                   .filter((e) => e.shape && e.shape.x1 !== undefined && e.shape.x1 === e.shape.x2 && e.shape.y1 > e.shape.y2)
                   .map((e) => e.shape.x1) : [],
                 bestPx: best ? window.headroom.chart('frontier').convertToPixel({ xAxisIndex: 0 }, best.markLine.data[0][0].coord[0]) : null,
                 fails: o.series.find((s) => s.name === 'fails').data.length,
                 ttftGaps: o.series.find((s) => s.name === 'TTFT p99').data.filter((p) => p[1] === null).length,
                 ttftConnects: o.series.find((s) => s.name === 'TTFT p99').connectNulls === true,
                 ttftAxis: o.series.find((s) => s.name === 'TTFT p99').yAxisIndex };
      });
      const failing = r.tune.frontier.filter((p) => p.oom).length;
      check(f.regions >= 1 && f.fails === failing && failing > 0 && failing < r.tune.frontier.length,
            `frontier: ${f.fails} failing values marked in ${f.regions} shaded stretch(es)`);
      // A failing value has no latency (null in tune.json): a gap in the TTFT line, not a 0.
      const noLatency = r.tune.frontier.filter((p) => p.ttft_p99_s === null).length;
      check(f.ttftGaps === noLatency && noLatency >= failing && !f.ttftConnects,
            `frontier: TTFT p99 has ${f.ttftGaps} gaps (${noLatency} values without a latency)`);
      // The best value's line is drawn where the x axis puts that value (not at the axis' start).
      check(f.best === r.tune.best && f.bestAt.some((x) => Math.abs(x - f.bestPx) < 1.5) && f.ttftAxis === 1,
            `frontier: best value ${f.best} marked at x = ${f.bestPx} px, TTFT p99 on axis 2`);
    }
    if (r.hostile) {
      check(state.injected === undefined, 'the markup in the name ran nothing');
      check(state.scripts === 3 && state.images === 0, 'the page holds only its own 3 scripts and no image');
      check(state.h1.includes(r.hostile) && state.facts.includes(r.hostile), 'the name shows as text, verbatim');
      check(!html.includes('<img src=x') && !html.includes('<script>window.__injected'),
            'report.html holds the name only escaped');
    }
    const shot = path.join(workDir, `${path.basename(r.dir)}.png`);
    await page.screenshot({ path: shot, fullPage: true });
    console.log(`  screenshot ${shot}`);
    if (r === reports[0] && process.env.HEADROOM_UPDATE_SCREENSHOTS === '1') {
      const dest = path.join(sourceDir, 'docs', 'images', 'quickstart-report.png');
      mkdirSync(path.dirname(dest), { recursive: true });
      await page.screenshot({ path: dest, fullPage: true });
      console.log(`  README screenshot ${dest}`);
    }
    await page.close();
  }
} finally {
  await context.close();
  rmSync(profile, { recursive: true, force: true });
}
console.log(failures ? `${failures} check(s) failed` : 'all checks passed');
process.exit(failures ? 1 : 0);
