import { devices } from 'playwright';
import { captureOptionConflicts, CaptureOptionsInput, imagePixels } from './capture-options';

// The image size cap at submission (CONTRACT.md, "Capture options, second set"): width × height × scale².
const LIMITS = { maxImagePixels: 100_000_000 };
const MESSAGE = /more than the 100,000,000 allowed \(MAX_IMAGE_PIXELS\)$/;

describe('the image size cap at submission', () => {
  it('counts device pixels: width × height × scale²', () => {
    expect(imagePixels(16_384, 16_384, 1)).toBe(268_435_456);
    expect(imagePixels(1280, 800, 2)).toBe(4_096_000);
    expect(imagePixels(100, 100, 1.5)).toBe(22_500);
  });

  it('refuses a clip over the cap, naming clip, and accepts one at the cap', () => {
    expect(captureOptionConflicts({ clip: { x: 0, y: 0, width: 16_384, height: 16_384 } }, LIMITS)).toEqual([
      { field: 'clip', message: expect.stringMatching(MESSAGE) },
    ]);
    expect(captureOptionConflicts({ clip: { x: 0, y: 0, width: 10_000, height: 10_000 } }, LIMITS)).toEqual([]);
    expect(captureOptionConflicts({ clip: { x: 0, y: 0, width: 5_000, height: 5_001 }, scale: 2 }, LIMITS)).toEqual([
      { field: 'clip', message: expect.stringMatching(MESSAGE) },
    ]);
  });

  it('refuses a viewport over the cap at its scale, naming the field that was given', () => {
    expect(captureOptionConflicts({ width: 3840, height: 4320, scale: 3 }, LIMITS)).toEqual([
      { field: 'width', message: expect.stringMatching(/^asks for an image of 149,299,200 pixels/) },
    ]);
    expect(captureOptionConflicts({ height: 4320, scale: 3, width: 2000 }, LIMITS)).toEqual([]);
    expect(captureOptionConflicts({ scale: 3 }, { maxImagePixels: 9_000_000 })).toEqual([
      { field: 'scale', message: expect.stringMatching(/9,216,000 pixels/) },
    ]);
    expect(captureOptionConflicts({}, { maxImagePixels: 1_000_000 })).toEqual([{ field: 'width', message: expect.any(String) }]);
  });

  it("counts a device's viewport and scale, naming device when nothing else was given", () => {
    const phone = devices['iPhone 15'];
    const pixels = imagePixels(phone.viewport.width, phone.viewport.height, phone.deviceScaleFactor);
    expect(captureOptionConflicts({ device: 'iPhone 15' }, { maxImagePixels: pixels })).toEqual([]);
    expect(captureOptionConflicts({ device: 'iPhone 15' }, { maxImagePixels: pixels - 1 })).toEqual([
      { field: 'device', message: expect.any(String) },
    ]);
    expect(captureOptionConflicts({ device: 'iPhone 15', scale: 1 }, { maxImagePixels: pixels - 1 })).toEqual([]);
  });

  it('holds with format none too: the viewport is rendered at its scale even when no image is taken', () => {
    const phone = devices['iPhone 15'];
    const pixels = imagePixels(phone.viewport.width, phone.viewport.height, phone.deviceScaleFactor);
    const none: CaptureOptionsInput = { format: 'none', extract: ['markdown'] };
    expect(captureOptionConflicts({ ...none, device: 'iPhone 15' }, { maxImagePixels: pixels })).toEqual([]);
    expect(captureOptionConflicts({ ...none, device: 'iPhone 15' }, { maxImagePixels: pixels - 1 })).toEqual([
      { field: 'device', message: expect.stringMatching(/MAX_IMAGE_PIXELS\)$/) },
    ]);
    expect(captureOptionConflicts({ ...none, width: 3840, height: 4320 }, { maxImagePixels: 16_000_000 })).toEqual([
      { field: 'width', message: expect.stringMatching(/^asks for an image of 16,588,800 pixels/) },
    ]);
  });

  it('prefixes batch items and leaves a selector or full page to the page', () => {
    expect(captureOptionConflicts({ clip: { x: 0, y: 0, width: 2000, height: 2000 } }, { maxImagePixels: 2_000_000 }, 'items[3].')).toEqual(
      [{ field: 'items[3].clip', message: expect.any(String) }],
    );
    expect(captureOptionConflicts({ selector: '#huge', scale: 3 }, LIMITS)).toEqual([]);
    expect(captureOptionConflicts({ fullPage: true, scale: 3 }, LIMITS)).toEqual([]);
  });
});
