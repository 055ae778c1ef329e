// Renders the charts of a headroom report.html to image files through headless Chromium: the same
// charts the page shows, one file per chart named after its view (memory.png, fragmentation.png, ...).
// Run by `headroom run|replay|report --png/--svg` (sim/report/chart_images.cpp):
//   node render_charts.mjs REPORT.html OUT_DIR png|svg
// Chromium: $HEADROOM_CHROMIUM, default /usr/bin/chromium (Debian's `chromium` package).
// Exit 0 with the written paths on stdout, 1 with a message on stderr.
import { randomBytes } from 'node:crypto';
import { renameSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { launchChromium } from './chromium.mjs';

const [, , reportPath, outDir, format] = process.argv;
if (!reportPath || !outDir || !['png', 'svg'].includes(format)) {
  console.error('usage: node render_charts.mjs REPORT.html OUT_DIR png|svg');
  process.exit(1);
}

let context = null, profile = null;
try {
  ({ context, profile } = await launchChromium({ viewport: { width: 1400, height: 900 } }));
  const page = await context.newPage();
  const problems = [];
  page.on('console', (m) => { if (m.type() === 'error') problems.push(m.text()); });
  page.on('pageerror', (e) => problems.push(String(e)));
  const url = pathToFileURL(path.resolve(reportPath)).href + (format === 'svg' ? '#svg' : '');
  await page.goto(url);
  await page.waitForFunction(() => window.headroom && (window.headroom.ready || window.headroom.error));
  const error = await page.evaluate(() => window.headroom.error);
  if (error || problems.length) throw new Error(`the report did not draw: ${error || problems.join('; ')}`);
  const charts = await page.evaluate((fmt) => window.headroom.views
    .filter((v) => window.headroom.chart(v.id))
    .map((v) => {
      const c = window.headroom.chart(v.id);
      return { id: v.id, data: fmt === 'svg' ? c.renderToSVGString()
                                               : c.getDataURL({ type: 'png', pixelRatio: 2, backgroundColor: '#ffffff' }) };
    }), format);
  for (const c of charts) {
    const file = path.join(outDir, `${c.id}.${format}`);
    const bytes = format === 'svg' ? Buffer.from(c.data, 'utf8')
                                   : Buffer.from(c.data.replace(/^data:image\/png;base64,/, ''), 'base64');
    // As headroom writes its own outputs (sim/core/atomic_file.hpp): a temporary created exclusively
    // ('wx': never through a link planted in the folder), renamed over the image when complete.
    const tmp = `${file}.tmp-${randomBytes(6).toString('hex')}`;
    try {
      writeFileSync(tmp, bytes, { flag: 'wx' });
      renameSync(tmp, file);
    } catch (e) {
      rmSync(tmp, { force: true });
      throw e;
    }
    console.log(file);
  }
} catch (e) {
  console.error(e.message);
  process.exitCode = 1;
} finally {
  if (context) await context.close();
  if (profile) rmSync(profile, { recursive: true, force: true });
}
