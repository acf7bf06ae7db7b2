import 'reflect-metadata';
import { plainToInstance } from 'class-transformer';
import { validateSync } from 'class-validator';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { CAPTURE_FLAGS, RUN_FLAGS } from '../../openapi/sdk-typescript/src/cli-options';
import {
  CAPTURE_OPTION_NAMES,
  UPLOAD_OPTION_NAMES,
  captureOptionJsonSchema,
  CaptureOptionName,
  captureOptionSpec,
  SESSION_OPTION_NAMES,
} from '../capture/capture-options';
import { toFieldErrors } from '../common/validation';
import { canonicalizeDocument, toOpenApi31Schemas } from './canonical-document';
import { RUN_BROWSER_SESSION_INPUT_SCHEMA, TAKE_SCREENSHOT_INPUT_SCHEMA } from '../mcp/tool-inputs';
import { CreateRunDto } from '../runs/dto/create-run.dto';
import { CreateScreenshotDto } from '../screenshots/dto/create-screenshot.dto';
import { UploadScreenshotDto } from '../screenshots/dto/upload-screenshot.dto';

/*
 * Everything derived from the options table (docs/capture-options.md) takes every option as declared:
 * the request DTOs and their validation, the committed OpenAPI document, the MCP tools' input
 * schemas and the SDK CLI's flags. The table's own rules are tested in src/capture/capture-options.spec.ts.
 */

/** The OpenAPI document as committed (`npm run openapi:check` keeps it equal to the code's). */
const documentText = readFileSync(join(__dirname, '../../openapi/openapi.json'), 'utf8');
const document = JSON.parse(documentText) as {
  components: {
    schemas: Record<string, { allOf?: unknown[]; properties: Record<string, Record<string, unknown> & { allOf?: unknown[] }> }>;
  };
};

const NON_SESSION = CAPTURE_OPTION_NAMES.filter((name) => !SESSION_OPTION_NAMES.includes(name as never));

/** A value of the wrong JSON type for `name`. */
function wrongTypeFor(name: CaptureOptionName): unknown {
  return captureOptionJsonSchema(name).type === 'string' ? 12345 : 'not a valid value';
}

function fieldErrors<T extends object>(type: new () => T, body: object) {
  return toFieldErrors(validateSync(plainToInstance(type, body), { whitelist: true, forbidNonWhitelisted: true }));
}

describe('derived from the table', () => {
  it('every option is a validated, documented property of the screenshot body, batch item and upload form; the run body has exactly the session options', () => {
    const documented = (type: object) =>
      (Reflect.getMetadata('swagger/apiModelPropertiesArray', (type as { prototype: object }).prototype) as string[]).map((p) =>
        p.slice(1),
      );
    expect(documented(CreateScreenshotDto)).toEqual(expect.arrayContaining(CAPTURE_OPTION_NAMES));
    expect(documented(UploadScreenshotDto)).toEqual(expect.arrayContaining(UPLOAD_OPTION_NAMES));
    expect(documented(UploadScreenshotDto)).not.toContain('profile');
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
    for (const name of UPLOAD_OPTION_NAMES) {
      const example = captureOptionSpec(name).example;
      form[name] = typeof example === 'string' ? example : JSON.stringify(example);
    }
    const dto = plainToInstance(UploadScreenshotDto, form) as Record<string, unknown>;
    for (const name of UPLOAD_OPTION_NAMES) expect(dto[name]).toEqual(captureOptionSpec(name).example);
  });

  it('the OpenAPI document states every option once, with its doc, default and example: CaptureOptions, its session part SessionOptions', () => {
    const { CaptureOptions: capture, SessionOptions: session } = document.components.schemas;
    expect(capture.allOf).toEqual([{ $ref: '#/components/schemas/SessionOptions' }]);
    for (const name of CAPTURE_OPTION_NAMES) {
      const spec = captureOptionSpec(name);
      const stated = (spec.session ? session : capture).properties[name];
      expect(stated).toEqual(canonicalizeDocument(toOpenApi31Schemas(captureOptionJsonSchema(name))));
      expect(stated).toMatchObject({
        description: spec.doc,
        example: spec.example,
        ...(spec.default !== undefined ? { default: spec.default } : {}),
      });
      expect((spec.session ? capture : session).properties[name]).toBeUndefined();
      // Once in the whole document: no body repeats it inline.
      expect(documentText.split(JSON.stringify(spec.doc)).length - 1).toBe(1);
    }
  });

  it('every body that takes the options refers to them: the screenshot body (and so batch items), the upload form, monitors, the job echo, runs', () => {
    const schemas = document.components.schemas;
    const refersTo = (schema: { allOf?: unknown[] }, name: string) =>
      expect(schema.allOf).toEqual([{ $ref: `#/components/schemas/${name}` }]);
    for (const name of ['CreateScreenshotDto', 'UploadScreenshotFormDto', 'CreateMonitorDto', 'UpdateMonitorDto'])
      refersTo(schemas[name], 'CaptureOptions');
    refersTo(schemas.ScreenshotJobDto.properties.options, 'CaptureOptions');
    expect(schemas.ScreenshotJobDto.properties.options).toMatchObject({ unevaluatedProperties: false });
    expect(schemas.CreateScreenshotBatchDto.properties.items).toMatchObject({
      items: { $ref: '#/components/schemas/CreateScreenshotDto' },
    });
    refersTo(schemas.CreateRunDto, 'SessionOptions');
    // What a body does not take is refused there: a monitor takes no pdf, cache or extract.
    for (const name of ['pdf', 'cache', 'cacheTtl', 'extract', 'markdownMode', 'storage', 'upload'])
      expect(schemas.CreateMonitorDto.properties[name]).toBe(false);
    // An upload takes no profile (CONTRACT.md, "Browser profiles": uploads excepted).
    for (const name of ['profile', 'profileCheck']) expect(schemas.UploadScreenshotFormDto.properties[name]).toBe(false);
    expect(Object.keys(schemas.CreateScreenshotDto.properties)).toEqual(['url']);
    expect(Object.keys(schemas.CreateRunDto.properties).sort()).toEqual(['saveProfile', 'steps', 'timeoutMs', 'url', 'video']);
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
});
