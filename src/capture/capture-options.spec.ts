import 'reflect-metadata';

import { plainToInstance } from 'class-transformer';
import { validateSync } from 'class-validator';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { devices } from 'playwright';
import { CAPTURE_FLAGS, RUN_FLAGS } from '../../openapi/sdk-typescript/src/cli-options';
import { toFieldErrors } from '../common/validation';
import { RUN_BROWSER_SESSION_INPUT_SCHEMA, TAKE_SCREENSHOT_INPUT_SCHEMA } from '../mcp/tool-inputs';
import { CreateRunDto } from '../runs/dto/create-run.dto';
import { CreateScreenshotDto } from '../screenshots/dto/create-screenshot.dto';
import { UploadScreenshotDto } from '../screenshots/dto/upload-screenshot.dto';
import {
  CAPTURE_OPTION_FIELDS,
  CAPTURE_OPTION_NAMES,
  captureOptionConflicts,
  captureOptionJsonSchema,
  CaptureOptionName,
  CaptureOptionsInput,
  captureOptionSpec,
  DEFAULT_CAPTURE_OPTIONS,
  resolveCaptureOptions,
  resolveSessionOptions,
  SESSION_OPTION_NAMES,
} from './capture-options';
import { RESULT_FORMATS } from './image-format';

/** The OpenAPI document as committed (`npm run openapi:check` keeps it equal to the code's). */
const document = JSON.parse(readFileSync(join(__dirname, '../../openapi/openapi.json'), 'utf8')) as {
  components: { schemas: Record<string, { properties: Record<string, Record<string, unknown>> }> };
};

const NON_SESSION = CAPTURE_OPTION_NAMES.filter((name) => !SESSION_OPTION_NAMES.includes(name as never));

/** A value of the wrong JSON type for `name`. */
function wrongTypeFor(name: CaptureOptionName): unknown {
  return captureOptionJsonSchema(name).type === 'string' ? 12345 : 'not a valid value';
}

function fieldErrors<T extends object>(type: new () => T, body: object) {
  return toFieldErrors(validateSync(plainToInstance(type, body), { whitelist: true, forbidNonWhitelisted: true }));
}

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
      for (const other of [...(spec.notWith ?? []), ...(spec.onlyWithTrue ? [spec.onlyWithTrue] : [])]) {
        expect(CAPTURE_OPTION_NAMES).toContain(other);
        expect(`${name}: ${spec.doc}`).toContain(other);
      }
      for (const format of spec.formats ?? []) expect(RESULT_FORMATS).toContain(format);
    }
  });
});

describe('derived from the table', () => {
  it('every option is a validated, documented property of the screenshot body, batch item and upload form; the run body has exactly the session options', () => {
    const documented = (type: object) =>
      (Reflect.getMetadata('swagger/apiModelPropertiesArray', (type as { prototype: object }).prototype) as string[]).map((p) =>
        p.slice(1),
      );
    expect(documented(CreateScreenshotDto)).toEqual(expect.arrayContaining(CAPTURE_OPTION_NAMES));
    expect(documented(UploadScreenshotDto)).toEqual(expect.arrayContaining(CAPTURE_OPTION_NAMES));
    expect(
      documented(CreateRunDto)
        .filter((p) => CAPTURE_OPTION_NAMES.includes(p as CaptureOptionName))
        .sort(),
    ).toEqual([...SESSION_OPTION_NAMES].sort());

    for (const name of CAPTURE_OPTION_NAMES) {
      const spec = captureOptionSpec(name);
      expect(fieldErrors(CreateScreenshotDto, { url: 'https://example.com', [name]: spec.example })).toEqual([]);
      expect(fieldErrors(CreateScreenshotDto, { url: 'https://example.com', [name]: wrongTypeFor(name) }).map((e) => e.field)).toEqual([
        name,
      ]);
      const run = fieldErrors(CreateRunDto, { url: 'https://example.com', [name]: spec.example });
      expect(run.map((e) => e.field)).toEqual(spec.session ? [] : [name]);
    }
  });

  it('upload form fields arrive as text and become the option values', () => {
    const form: Record<string, string> = {};
    for (const name of CAPTURE_OPTION_NAMES) {
      const example = captureOptionSpec(name).example;
      form[name] = typeof example === 'string' ? example : JSON.stringify(example);
    }
    const dto = plainToInstance(UploadScreenshotDto, form) as Record<string, unknown>;
    for (const name of CAPTURE_OPTION_NAMES) expect(dto[name]).toEqual(captureOptionSpec(name).example);
  });

  it('the OpenAPI document shows every option with its doc, default and example; the run body the session options only', () => {
    const screenshot = document.components.schemas.CreateScreenshotDto.properties;
    const uploadForm = document.components.schemas.UploadScreenshotFormDto.properties;
    const run = document.components.schemas.CreateRunDto.properties;
    for (const name of CAPTURE_OPTION_NAMES) {
      const spec = captureOptionSpec(name);
      expect(screenshot[name]).toMatchObject({
        description: spec.doc,
        example: spec.example,
        ...(spec.default !== undefined ? { default: spec.default } : {}),
      });
      expect(uploadForm[name]).toEqual(screenshot[name]);
      if (spec.session) expect(run[name]).toEqual(screenshot[name]);
      else expect(run[name]).toBeUndefined();
    }
  });

  it('the MCP tools take every option (take_screenshot) and the session options (run_browser_session) with the same JSON Schema', () => {
    for (const name of CAPTURE_OPTION_NAMES) {
      expect(TAKE_SCREENSHOT_INPUT_SCHEMA.shape[name]?.meta()).toEqual(captureOptionJsonSchema(name));
    }
    for (const name of SESSION_OPTION_NAMES)
      expect(RUN_BROWSER_SESSION_INPUT_SCHEMA.shape[name]?.meta()).toEqual(captureOptionJsonSchema(name));
    for (const name of NON_SESSION) expect(RUN_BROWSER_SESSION_INPUT_SCHEMA.shape[name]).toBeUndefined();
  });

  it('the SDK CLI has a flag for every option, and the run command for every session option only', () => {
    for (const name of CAPTURE_OPTION_NAMES) expect(Object.keys(CAPTURE_FLAGS)).toContain(name);
    for (const name of SESSION_OPTION_NAMES) expect(Object.keys(RUN_FLAGS)).toContain(name);
    for (const name of NON_SESSION) expect(Object.keys(RUN_FLAGS)).not.toContain(name);
    expect(CAPTURE_FLAGS.hideSelectors.kind).toBe('list');
    expect(CAPTURE_FLAGS.clip.kind).toBe('json');
    expect(CAPTURE_FLAGS.scale.kind).toBe('number');
  });

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
      expect(captureOptionConflicts(alone as CaptureOptionsInput)).toEqual([]);
      for (const other of spec.notWith ?? []) {
        const both = { ...alone, [other]: captureOptionSpec(other as CaptureOptionName).example };
        expect(captureOptionConflicts(both as CaptureOptionsInput)).toContainEqual({
          field: name,
          message: `is not allowed with ${other}`,
        });
      }
      for (const format of RESULT_FORMATS.filter((f) => spec.formats && !spec.formats.includes(f))) {
        expect(captureOptionConflicts({ ...alone, format } as CaptureOptionsInput).map((e) => e.field)).toContain(name);
      }
      if (spec.onlyWithTrue) {
        expect(captureOptionConflicts({ ...alone, [spec.onlyWithTrue]: false } as CaptureOptionsInput)).toEqual([
          { field: name, message: `is only allowed with ${spec.onlyWithTrue} true` },
        ]);
      }
    }
  });

  it("keeps the messages and order of CONTRACT.md's rules", () => {
    expect(
      captureOptionConflicts(
        { format: 'pdf', selector: '#a', clip: { x: 0, y: 0, width: 1, height: 1 }, fullPage: true, scale: 2, quality: 50 },
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
    expect(captureOptionConflicts({ quality: 50, pdf: {} })).toEqual([
      { field: 'quality', message: 'is only allowed with format jpeg or webp' },
      { field: 'pdf', message: 'is only allowed with format pdf' },
    ]);
    expect(captureOptionConflicts({ fullPage: false, selector: '#a', cache: true, cacheTtl: 60 })).toEqual([]);
  });
});
