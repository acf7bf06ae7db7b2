import { devices } from 'playwright';
import { DEVICES } from './devices';

describe('DEVICES', () => {
  it("is the installed Playwright's device descriptors (after an upgrade: node scripts/device-descriptors.js)", () => {
    expect(DEVICES).toEqual(devices);
  });
});
