import { devices } from 'playwright';
import { RESULT_FORMATS } from '../results/result-formats';
import {
  captureCacheKey,
  CAPTURE_OPTION_FIELDS,
  CAPTURE_OPTION_NAMES,
  captureOptionConflicts,
  CaptureOptionName,
  CaptureOptionsInput,
  captureOptionSpec,
  DEFAULT_CAPTURE_OPTIONS,
  freshCaptureSince,
  isFreshCapture,
  resolveCaptureOptions,
  resolveSessionOptions,
  SESSION_OPTION_NAMES,
} from './capture-options';

/** The configured limits of these tests: the contract's default image size cap, and the upstream proxy the proxy option's example names. */
const LIMITS = { maxImagePixels: 100_000_000, egressProxies: { 'de-residential': {} } };

// The DTOs, OpenAPI, MCP and CLI derived from the table are checked in src/openapi/capture-options-derived.spec.ts.

describe('the options table', () => {
  it.each(CAPTURE_OPTION_NAMES)('%s: its example and its default are valid values of its schema', (name) => {
    const spec = captureOptionSpec(name);
    expect(spec.doc.length).toBeGreaterThan(0);
    expect(spec.schema.safeParse(spec.example).success).toBe(true);
    if (spec.default !== undefined) expect(spec.schema.safeParse(spec.default).success).toBe(true);
  });

  it('names the options it conflicts with in its doc, and only options of the table', () => {
    for (const name of CAPTURE_OPTION_NAMES) {
      const spec = captureOptionSpec(name);
      for (const other of [...(spec.notWith ?? []), ...[spec.onlyWithTrue, spec.onlyWith].filter((o) => o !== undefined)]) {
        expect(CAPTURE_OPTION_NAMES).toContain(other);
        expect(`${name}: ${spec.doc}`).toContain(other);
      }
      for (const format of spec.formats ?? []) expect(RESULT_FORMATS).toContain(format);
      for (const [value, needed] of Object.entries(spec.valueNeeds ?? {})) {
        expect(spec.schema.safeParse(value).success).toBe(true);
        expect(CAPTURE_OPTION_NAMES).toContain(needed);
        expect(`${name}: ${spec.doc}`).toContain(value);
        expect(`${name}: ${spec.doc}`).toContain(needed);
      }
    }
  });
});

describe('resolution', () => {
  it('a run resolves its session options exactly as a capture resolves them', () => {
    const input: CaptureOptionsInput = { device: 'iPhone 15', width: 500, locale: 'de-de', headers: {}, blockAds: true };
    const session = resolveSessionOptions(input) as unknown as Record<string, unknown>;
    const capture = resolveCaptureOptions(input) as unknown as Record<string, unknown>;
    const sessionKeys = SESSION_OPTION_NAMES.map((name) => captureOptionSpec(name).resolvedAs ?? name);
    expect(Object.keys(session).sort()).toEqual([...sessionKeys, 'isMobile', 'hasTouch'].sort());
    for (const key of Object.keys(session)) expect(session[key]).toEqual(capture[key]);
    expect(session).toMatchObject({
      width: 500,
      height: devices['iPhone 15'].viewport.height,
      isMobile: true,
      hasTouch: true,
      locale: 'de-DE',
      headers: null,
      blockAds: true,
    });
  });

  it('resolves defaults under their resolved names', () => {
    expect(DEFAULT_CAPTURE_OPTIONS).toMatchObject({
      width: 1280,
      height: 800,
      format: 'png',
      delayMs: 0,
      cacheTtlS: 14_400,
      quality: null,
      pdf: null,
      locale: 'en-US',
      selector: null,
    });
    expect(resolveCaptureOptions({ format: 'jpeg' }).quality).toBe(85);
    expect(resolveCaptureOptions({ format: 'pdf' }).pdf).toEqual({ paper: 'A4', landscape: false, printBackground: true });
    expect(resolveCaptureOptions({ delay: 250, cache: true, cacheTtl: 60 })).toMatchObject({ delayMs: 250, cacheTtlS: 60 });
    for (const name of CAPTURE_OPTION_NAMES) expect(CAPTURE_OPTION_FIELDS[name]).toBeDefined();
  });
});

describe('captureOptionConflicts', () => {
  it('refuses every declared conflict, naming the option, and accepts the option alone', () => {
    for (const name of CAPTURE_OPTION_NAMES) {
      const spec = captureOptionSpec(name);
      const alone: Record<string, unknown> = { [name]: spec.example };
      if (spec.formats) alone.format = spec.formats[0];
      if (spec.onlyWithTrue) alone[spec.onlyWithTrue] = true;
      if (spec.onlyWith) alone[spec.onlyWith] = captureOptionSpec(spec.onlyWith as CaptureOptionName).example;
      expect(captureOptionConflicts(alone as CaptureOptionsInput, LIMITS)).toEqual([]);
      for (const other of spec.notWith ?? []) {
        const both = { ...alone, [other]: captureOptionSpec(other as CaptureOptionName).example };
        expect(captureOptionConflicts(both as CaptureOptionsInput, LIMITS)).toContainEqual({
          field: name,
          message: `is not allowed with ${other}`,
        });
      }
      for (const format of RESULT_FORMATS.filter((f) => spec.formats && !spec.formats.includes(f))) {
        expect(captureOptionConflicts({ ...alone, format } as CaptureOptionsInput, LIMITS).map((e) => e.field)).toContain(name);
      }
      if (spec.onlyWith) {
        const { [spec.onlyWith]: _needed, ...without } = alone;
        expect(captureOptionConflicts(without as CaptureOptionsInput, LIMITS)).toEqual([
          { field: name, message: `is only allowed with ${spec.onlyWith}` },
        ]);
      }
      if (spec.onlyWithTrue) {
        expect(captureOptionConflicts({ ...alone, [spec.onlyWithTrue]: false } as CaptureOptionsInput, LIMITS)).toEqual([
          { field: name, message: `is only allowed with ${spec.onlyWithTrue} true` },
        ]);
      }
    }
  });

  it('refuses a value that needs another option without it, naming the option and the value, and accepts it with it', () => {
    const declared = CAPTURE_OPTION_NAMES.flatMap((name) =>
      Object.entries(captureOptionSpec(name).valueNeeds ?? {}).map(([value, needed]) => ({ name, value, needed })),
    );
    expect(declared).toContainEqual({ name: 'format', value: 'none', needed: 'extract' });
    for (const { name, value, needed } of declared) {
      const alone = { [name]: value } as CaptureOptionsInput;
      expect(captureOptionConflicts(alone, LIMITS)).toEqual([{ field: name, message: `${value} is only allowed with ${needed}` }]);
      expect(captureOptionConflicts(alone, LIMITS, 'items[2].')).toEqual([
        { field: `items[2].${name}`, message: `${value} is only allowed with ${needed}` },
      ]);
      const withNeeded = { ...alone, [needed]: captureOptionSpec(needed as CaptureOptionName).example } as CaptureOptionsInput;
      expect(captureOptionConflicts(withNeeded, LIMITS)).toEqual([]);
      // A null is not given: it does not satisfy the need.
      expect(captureOptionConflicts({ ...alone, [needed]: null } as CaptureOptionsInput, LIMITS)).toHaveLength(1);
    }
    // The other values of the option need nothing.
    for (const format of RESULT_FORMATS) expect(captureOptionConflicts({ format }, LIMITS)).toEqual([]);
  });

  it('checks format none like any other format: the image options are refused with it, after the other rules', () => {
    expect(captureOptionConflicts({ format: 'none', quality: 50, omitBackground: true, selector: '#a', fullPage: true }, LIMITS)).toEqual([
      { field: 'selector', message: 'is not allowed with fullPage' },
      { field: 'selector', message: 'is only allowed with format png or jpeg or webp' },
      { field: 'quality', message: 'is only allowed with format jpeg or webp' },
      { field: 'omitBackground', message: 'is only allowed with format png or webp' },
      { field: 'format', message: 'none is only allowed with extract' },
    ]);
    expect(
      captureOptionConflicts({ format: 'none', extract: ['markdown'], markdownMode: 'full', fullPage: true, delay: 100 }, LIMITS),
    ).toEqual([]);
  });

  it("keeps the messages and order of CONTRACT.md's rules", () => {
    expect(
      captureOptionConflicts(
        { format: 'pdf', selector: '#a', clip: { x: 0, y: 0, width: 1, height: 1 }, fullPage: true, scale: 2, quality: 50 },
        LIMITS,
        'items[1].',
      ),
    ).toEqual([
      { field: 'items[1].selector', message: 'is not allowed with fullPage' },
      { field: 'items[1].clip', message: 'is not allowed with fullPage' },
      { field: 'items[1].clip', message: 'is not allowed with selector' },
      { field: 'items[1].selector', message: 'is not allowed with format pdf' },
      { field: 'items[1].clip', message: 'is not allowed with format pdf' },
      { field: 'items[1].scale', message: 'is not allowed with format pdf' },
      { field: 'items[1].quality', message: 'is not allowed with format pdf' },
    ]);
    expect(captureOptionConflicts({ quality: 50, pdf: {} }, LIMITS)).toEqual([
      { field: 'quality', message: 'is only allowed with format jpeg or webp' },
      { field: 'pdf', message: 'is only allowed with format pdf' },
    ]);
    expect(captureOptionConflicts({ fullPage: false, selector: '#a', cache: true, cacheTtl: 60 }, LIMITS)).toEqual([]);
  });
});

describe('the fresh cached capture rule', () => {
  it('is fresh up to and including cacheTtl seconds of age, and the SQL bound is the same instant', () => {
    const now = Date.UTC(2026, 0, 1, 12);
    expect(isFreshCapture(now - 3_600_000, 3600, now)).toBe(true);
    expect(isFreshCapture(now - 3_600_001, 3600, now)).toBe(false);
    expect(isFreshCapture(now, 60, now)).toBe(true);
    expect(freshCaptureSince(now, 3600).getTime()).toBe(now - 3_600_000);
  });
});

describe('the parts of the entry', () => {
  it('each part is a module of its own, re-exported by the public entry', async () => {
    const entry = await import('./capture-options');
    const table = await import('./capture-options-table');
    const resolution = await import('./capture-options-resolution');
    const derived = await import('./capture-options-derived');
    const schemas = await import('./capture-options-schemas');
    expect(entry.CAPTURE_OPTION_TABLE).toBe(table.CAPTURE_OPTION_TABLE);
    expect(entry.resolveCaptureOptions).toBe(resolution.resolveCaptureOptions);
    expect(entry.CAPTURE_OPTION_FIELDS).toBe(derived.CAPTURE_OPTION_FIELDS);
    expect(entry.CAPTURE_LIMITS).toBe(schemas.CAPTURE_LIMITS);
  });
});

describe('captureCacheKey', () => {
  it('keeps the keys of stored jobs: the same hex SHA-256 for the same target and resolved options', () => {
    const input = {
      width: 500,
      device: 'iPhone 15',
      cookies: [{ name: 'a', value: 'b' }],
      headers: { X: '1' },
      clip: { x: 1, y: 2, width: 3, height: 4 },
      blockUrls: ['*a*'],
      thumbnail: { width: 100 },
    } as CaptureOptionsInput;
    expect(captureCacheKey('https://example.com/a?b', resolveCaptureOptions(input))).toBe(
      '7adfae2d1df3b6a6c2a9951e0b735388cbbe28cd62775935069a72f5c4da1669',
    );
    expect(captureCacheKey('https://example.com/a?b', resolveCaptureOptions({ ...input, cache: true, cacheTtl: 60 }))).toBe(
      '7adfae2d1df3b6a6c2a9951e0b735388cbbe28cd62775935069a72f5c4da1669',
    );
  });
});
