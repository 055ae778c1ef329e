// Starts Debian's headless Chromium through playwright-core (no browser download): the flags keep it
// from reaching the network on its own (updates, sync, QUIC probes) and a fresh profile per run.
// Shared by render_charts.mjs and the browser test (tests/report/check_reports_in_browser.mjs).
import { existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { chromium } from 'playwright-core';

export const chromiumPath = process.env.HEADROOM_CHROMIUM || '/usr/bin/chromium';

// Returns {context, profile}: a persistent context on the fresh profile (Playwright takes the profile
// folder this way rather than as --user-data-dir); close the context, then remove the profile.
export async function launchChromium(options = {}) {
  if (!existsSync(chromiumPath))
    throw new Error(`${chromiumPath} not found: install Debian's chromium (apt-get install chromium) ` +
                    'or point HEADROOM_CHROMIUM at a Chromium binary');
  const profile = mkdtempSync(path.join(tmpdir(), 'headroom-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    ...options,
    executablePath: chromiumPath,
    headless: true,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
           '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
  return { context, profile };
}
