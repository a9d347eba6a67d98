import { chromium, type Browser } from 'playwright-core';

/** Debian's Chromium (`apt-get install chromium`): no browser download, works without internet. */
const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

/** Headless, and nothing that reaches out to the network on its own. */
const FLAGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--no-first-run'];

/** Launches the browser the console tests drive; fails naming the path when Chromium is missing. */
async function launchChromium(): Promise<Browser> {
  try {
    return await chromium.launch({ executablePath: CHROMIUM, args: FLAGS, headless: true });
  } catch (error) {
    throw new Error(
      `could not start Chromium at ${CHROMIUM} (install it with apt-get install -y chromium, or set CHROMIUM_PATH): ${(error as Error).message}`,
      { cause: error },
    );
  }
}

export { launchChromium };
