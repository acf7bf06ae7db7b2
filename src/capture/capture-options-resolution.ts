import { DEVICES } from './devices';
import type { FieldError } from '../common/api-error';
import { isAnimationFormat } from '../results/result-formats';
import { AnimationOptions, animationLengthMs, CAPTURE_LIMITS } from './capture-options-schemas';
import {
  CAPTURE_OPTION_NAMES,
  CAPTURE_OPTION_TABLE,
  CaptureOptionName,
  captureOptionSpec,
  ConfiguredOptionLimits,
  ImageSize,
  ResolveContext,
  SESSION_OPTION_NAMES,
} from './capture-options-table';
import type { CaptureOptions, CaptureOptionsInput, SessionOptions, SessionOptionsInput } from './capture-options-derived';

/**
 * Resolution of a request's capture options (CONTRACT.md, "Capture options"): the refused
 * combinations and the image-size cap, the defaults applied, the options echo and the time budget of
 * one capture.
 */

const L = CAPTURE_LIMITS;

/**
 * The combinations CONTRACT.md ("Capture options") refuses, as field errors (each naming the field
 * that may not be there, prefixed with `prefix`, e.g. `items[2].`); empty when the input is fine.
 * Derived from the entries' `notWith`, `formats`, `onlyWithTrue`, `onlyWith`, `valueNeeds` and `configured` (a value
 * the configuration refuses: an unknown `proxy` id), checked in that order, then
 * their `imagePixels` against `limits.maxImagePixels` (CONTRACT.md, "Capture options, second set":
 * image size cap), naming the option, or when it is not given the first given of its `imagePixelsFrom`.
 */
export function captureOptionConflicts(input: CaptureOptionsInput, limits: ConfiguredOptionLimits, prefix = ''): FieldError[] {
  const given = input as Record<string, unknown>;
  const isSet = (name: string) => given[name] != null;
  const isOn = (name: string) => isSet(name) && given[name] !== false;
  const format = input.format ?? DEFAULT_FORMAT;
  const errors: FieldError[] = [];
  const refuse = (field: string, message: string) => errors.push({ field: prefix + field, message });
  const specs = CAPTURE_OPTION_NAMES.map((name) => [name, captureOptionSpec(name)] as const).filter(([name]) => isSet(name));
  for (const [name, spec] of specs) for (const other of spec.notWith ?? []) if (isOn(other)) refuse(name, `is not allowed with ${other}`);
  for (const [name, spec] of specs) {
    // A boolean option given as false asks for nothing: `fullPage: false` goes with every format.
    if (!spec.formats || spec.formats.includes(format) || given[name] === false) continue;
    // pdf and the animations take few options: naming the format says more than listing the others.
    const few = format === 'pdf' || isAnimationFormat(format);
    refuse(name, few ? `is not allowed with format ${format}` : `is only allowed with format ${spec.formats.join(' or ')}`);
  }
  for (const [name, spec] of specs)
    if (spec.onlyWithTrue && given[spec.onlyWithTrue] !== true) refuse(name, `is only allowed with ${spec.onlyWithTrue} true`);
  for (const [name, spec] of specs) if (spec.onlyWith && !isSet(spec.onlyWith)) refuse(name, `is only allowed with ${spec.onlyWith}`);
  for (const [name, spec] of specs) {
    const needed = spec.valueNeeds?.[String(given[name])];
    if (needed && !isSet(needed)) refuse(name, `${String(given[name])} is only allowed with ${needed}`);
  }
  for (const [name, spec] of specs) {
    const problem = spec.configured?.(given[name], limits);
    if (problem) refuse(name, problem);
  }
  const size = resolveNamed(input, ['width', 'height', 'scale']) as unknown as ImageSize;
  for (const name of CAPTURE_OPTION_NAMES) {
    const spec = captureOptionSpec(name);
    const pixels = spec.imagePixels?.(given[name], size) ?? null;
    if (pixels === null || pixels <= limits.maxImagePixels) continue;
    const field = [name, ...(spec.imagePixelsFrom ?? [])].find(isSet) ?? name;
    refuse(field, imageTooLargeMessage(pixels, limits.maxImagePixels));
  }
  return errors;
}

/** The validation message of an image over the cap (pixels are device pixels). */
function imageTooLargeMessage(pixels: number, maxImagePixels: number): string {
  const n = (x: number) => x.toLocaleString('en-US');
  return `asks for an image of ${n(pixels)} pixels (width × height × scale²), more than the ${n(maxImagePixels)} allowed (MAX_IMAGE_PIXELS)`;
}

const DEFAULT_FORMAT = CAPTURE_OPTION_TABLE.format.default;

/**
 * Applies the defaults to validated input: each option's `resolve`, else its value, else its default,
 * else null; a `device` supplies viewport, scale, user agent, mobile and touch, and explicit `width`,
 * `height`, `scale` and `userAgent` win over it (CONTRACT.md). Call {@link captureOptionConflicts} first.
 */
export function resolveCaptureOptions(input: CaptureOptionsInput): CaptureOptions {
  return resolveNamed(input, CAPTURE_OPTION_NAMES) as unknown as CaptureOptions;
}

/** The session options of `input` resolved as a capture's (same defaults; a `device` fills viewport, scale and user agent). */
export function resolveSessionOptions(input: SessionOptionsInput): SessionOptions {
  return resolveNamed(input, SESSION_OPTION_NAMES) as unknown as SessionOptions;
}

function resolveNamed(input: CaptureOptionsInput, names: readonly CaptureOptionName[]): Record<string, unknown> {
  const device = input.device ? DEVICES[input.device] : undefined;
  const context: ResolveContext = { device, format: input.format ?? DEFAULT_FORMAT };
  const resolved: Record<string, unknown> = {};
  for (const name of names) {
    const spec = captureOptionSpec(name);
    const value = input[name];
    resolved[spec.resolvedAs ?? name] = spec.resolve ? spec.resolve(value, context) : (value ?? spec.default ?? null);
  }
  resolved.isMobile = device?.isMobile ?? false;
  resolved.hasTouch = device?.hasTouch ?? false;
  return resolved;
}

/** Every default of {@link CaptureOptions}. */
export const DEFAULT_CAPTURE_OPTIONS: Readonly<CaptureOptions> = Object.freeze(resolveCaptureOptions({}));

/** The options as given, public names only, `undefined`s dropped: the job's `options` echo (CONTRACT.md). */
export function givenCaptureOptions(input: CaptureOptionsInput): CaptureOptionsInput {
  const given: Record<string, unknown> = {};
  for (const name of CAPTURE_OPTION_NAMES) {
    if (input[name] != null) given[name] = input[name];
  }
  return given as CaptureOptionsInput;
}

/**
 * The longest one capture with `options` may take, ms (docs/capture-engine.md#time-budget): navigation
 * (`CAPTURE_TIMEOUT_MS`), then one `CAPTURE_TIMEOUT_MS` for each of `waitForSelector` (which
 * `profileCheck` shares), `javascript` and `selector` that is set, `delay`, and the screenshot or PDF
 * (`CAPTURE_TIMEOUT_MS` again); an animation adds its length and one more `CAPTURE_TIMEOUT_MS` for its
 * encoding (CONTRACT.md, "Animated captures": the budget covers page load plus recording). Without
 * `options`, the budget of the slowest options allowed (for shutdown waits and the stuck-job sweep).
 */
export function captureBudgetMs(
  captureTimeoutMs: number,
  options?: Pick<CaptureOptions, 'delayMs' | 'waitForSelector' | 'profileCheck' | 'javascript' | 'selector' | 'animation'>,
): number {
  const waits = options
    ? [options.waitForSelector ?? options.profileCheck, options.javascript, options.selector].filter((o) => o !== null && o !== undefined)
        .length
    : 3;
  const animation = options ? options.animation : LONGEST_ANIMATION;
  const recording = animation ? animationLengthMs(animation) + captureTimeoutMs : 0;
  return captureTimeoutMs * (2 + waits) + (options?.delayMs ?? L.delayMs.max) + recording;
}

/** The longest animation the options allow (the budget of the slowest capture). */
const LONGEST_ANIMATION: AnimationOptions = {
  scrollTo: 'bottom',
  durationMs: L.animation.durationMs.max,
  fps: L.animation.fps.max,
  easing: 'linear',
  startDelayMs: L.animation.startDelayMs.max,
  pauseAtEndMs: L.animation.pauseAtEndMs.max,
  scrollBack: true,
};
