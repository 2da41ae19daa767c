// Drives a real VS Code workbench (code-server) in Debian's Chromium with playwright-core, the way a
// user would: open app.py, type a line without saving, run "K1412: Run task" from the command palette,
// then the delegate code action on a selection, then Cancel on a slow run. Writes what it saw as JSON.
// Usage: node drive.mjs URL OUT.json SHOT.png   (env PLAYWRIGHT_CORE: path of the playwright-core package)
import { createRequire } from 'node:module';
import { writeFileSync } from 'node:fs';

const require = createRequire(import.meta.url);
const { chromium } = require(process.env.PLAYWRIGHT_CORE);
const [url, outPath, shotPath] = process.argv.slice(2);
const TASK = process.env.K1412_E2E_TASK;
const out = { steps: [] };
const step = (name) => { out.steps.push(name); };

async function texts(page, selector) {
  return page.locator(selector).evaluateAll((nodes) => nodes.map((n) => n.textContent.replace(/\u00a0/g, ' ')));
}

async function editorText(page) {
  // Monaco renders each line in .view-line, ordered by their top offset.
  return page.evaluate(() => {
    const lines = [...document.querySelectorAll('.editor-instance .monaco-editor .view-lines .view-line')];
    lines.sort((a, b) => parseFloat(a.style.top) - parseFloat(b.style.top));
    return lines.map((l) => l.textContent.replace(/\u00a0/g, ' ')).join('\n');
  });
}

async function palette(page, command) {
  await page.keyboard.press('F1');
  const input = page.locator('.quick-input-widget input');
  await input.waitFor({ state: 'visible' });
  await input.fill(`>${command}`);
  await page.locator('.quick-input-list .monaco-list-row', { hasText: command }).first().waitFor();
  await page.keyboard.press('Enter');
}

async function answerInput(page, text) {
  const input = page.locator('.quick-input-widget input');
  await input.waitFor({ state: 'visible' });
  await input.fill(text);
  await page.keyboard.press('Enter');
}

async function notification(page, pattern, timeout = 90000) {
  const item = page.locator('.notification-list-item-message', { hasText: pattern }).first();
  await item.waitFor({ timeout });
  return (await item.textContent()).replace(/\u00a0/g, ' ');
}

async function clearNotifications(page) {
  await palette(page, 'Notifications: Clear All Notifications');
}

// A server command that cannot start: one error, with a button that opens the server's log.
async function failedStart(page) {
  const error = await notification(page, 'could not start its server', 120000);
  out.startError = error;
  await page.waitForTimeout(3000);  // anything else the client would show arrives meanwhile
  out.notifications = await texts(page, '.notification-list-item-message');
  out.statusbar = await texts(page, '.statusbar-item');
  const item = page.locator('.notification-list-item', { hasText: 'could not start its server' }).first();
  out.buttons = await texts(page, '.notification-list-item .monaco-button');
  await item.locator('.monaco-button', { hasText: 'Show server log' }).click();
  await page.locator('.part.panel').waitFor();
  await page.waitForTimeout(500);
  out.panel = (await page.locator('.part.panel').first().textContent()).replace(/\u00a0/g, ' ');
  step('failed-start');
}

// The user's session: a run on unsaved typing, the log, the delegate action, a cancelled run.
async function userSession(page) {
  // The extension is active once its status item shows.
  await page.locator('.statusbar-item', { hasText: 'K1412' }).first().waitFor({ timeout: 120000 });
  step('extension');

  await page.keyboard.press('Control+P');
  await page.locator('.quick-input-widget input').fill('app.py');
  await page.locator('.quick-input-list .monaco-list-row', { hasText: 'app.py' }).first().waitFor();
  await page.keyboard.press('Enter');
  await page.locator('.tab.active', { hasText: 'app.py' }).waitFor();
  await page.locator('.editor-instance .monaco-editor .view-lines').click();
  await page.keyboard.press('Control+End');
  await page.keyboard.type('# typed, not saved\n');
  out.dirtyBefore = await page.locator('.tab.active.dirty').waitFor({ timeout: 5000 }).then(() => true, () => false);
  out.tabClassBefore = await page.locator('.tab.active').first().getAttribute('class');
  step('typed');

  await palette(page, 'K1412: Run task');
  await answerInput(page, TASK);
  // While the run goes on: the notification shows the run's progress; nothing else shows a second one.
  const progressTexts = new Set();
  const windowProgress = new Set();
  const verdict = page.locator('.notification-list-item-message', { hasText: 'K1412 completed' });
  for (let i = 0; i < 900 && (await verdict.count()) === 0; i += 1) {
    for (const t of await texts(page, '.notification-list-item-message')) progressTexts.add(t);
    for (const t of await texts(page, '.statusbar-item')) {
      if (t.includes(TASK.slice(0, 20))) windowProgress.add(t);
    }
    await page.waitForTimeout(100);
  }
  out.progressTexts = [...progressTexts];
  out.windowProgress = [...windowProgress];
  out.verdict = await notification(page, 'K1412 completed');
  await page.waitForTimeout(1000);
  out.buffer = await editorText(page);
  out.dirtyAfter = await page.locator('.tab.active.dirty').count() > 0;
  out.tabClassAfter = await page.locator('.tab.active').first().getAttribute('class');
  out.statusbar = await texts(page, '.statusbar-item');
  await page.screenshot({ path: shotPath });
  step('run');

  await palette(page, 'K1412: Show run log');
  await page.locator('.output-view, .part.panel .monaco-editor').first().waitFor();
  await page.waitForTimeout(500);
  out.log = (await page.locator('.part.panel .monaco-editor .view-lines').first().evaluate(
    (node) => [...node.querySelectorAll('.view-line')].map((l) => l.textContent).join('\n'))).replace(/\u00a0/g, ' ');
  step('log');
  await clearNotifications(page);

  // The delegate code action on a selection: an empty instruction runs a read-only review.
  await page.locator('.editor-instance .monaco-editor .view-lines').click();
  await page.keyboard.press('Control+Home');
  await page.keyboard.press('Shift+End');
  await page.keyboard.press('Control+.');
  await page.getByText('K1412: delegate to sub-agent').first().click({ timeout: 15000 });
  await answerInput(page, '');
  out.delegateVerdict = await notification(page, /K1412 (completed|unverified)/);
  step('delegate');
  await clearNotifications(page);

  // Cancel: the notification's own Cancel button stops a slow command.
  await palette(page, 'K1412: Run task');
  await answerInput(page, process.env.K1412_E2E_SLOW_TASK);
  await page.locator('.notification-list-item-message', { hasText: 'run_command' }).first().waitFor({ timeout: 60000 });
  const started = Date.now();
  await page.locator('.notification-list-item .monaco-button, .notification-list-item .action-label',
    { hasText: 'Cancel' }).first().click();
  out.cancelVerdict = await notification(page, 'cancelled', 60000);
  out.cancelMs = Date.now() - started;
  step('cancel');
}

const browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: ['--no-sandbox'] });
try {
  const page = await browser.newPage({ viewport: { width: 1400, height: 860 } });
  await page.goto(url);
  await page.locator('.monaco-workbench').waitFor({ timeout: 120000 });
  step('workbench');
  await (process.env.K1412_E2E_MODE === 'failed-start' ? failedStart(page) : userSession(page));
} catch (err) {
  out.error = String(err && err.stack || err);
  try {
    const [page] = browser.contexts()[0]?.pages() ?? [];
    if (page) await page.screenshot({ path: `${shotPath}.failed.png` });
  } catch { /* best effort */ }
} finally {
  writeFileSync(outPath, JSON.stringify(out, null, 2));
  await browser.close();
}
