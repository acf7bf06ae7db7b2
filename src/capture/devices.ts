import type { devices } from 'playwright';
import descriptors from './device-descriptors.json';

/** A device descriptor as Playwright declares it: user agent, viewport and screen (CSS px), scale, mobile, touch. */
export type DeviceDescriptor = (typeof devices)[string];

/**
 * Playwright's device descriptors by name (`playwright.devices`), for the `device` capture option
 * (docs/capture-options.md). A copy written by `scripts/device-descriptors.js`, so that reading them
 * does not load Playwright: a process that only answers the API never does (docs/performance.md,
 * "Boot"). `devices.spec.ts` checks it against the installed Playwright.
 */
export const DEVICES: Readonly<Record<string, DeviceDescriptor>> = descriptors as Record<string, DeviceDescriptor>;
