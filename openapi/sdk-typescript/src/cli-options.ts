/**
 * The CLI's flag for every request field, one table per request body, generated from the OpenAPI
 * document (`./generated/cli-flags`, written by `npm run sdk`) and checked against the generated types.
 * Flags are the field names in kebab case (`fullPage` → `--full-page`); the help is the field's
 * description (its first sentence).
 */
import { GENERATED_CAPTURE_FLAGS, GENERATED_RUN_FLAGS } from './generated/cli-flags';
import type { CreateRunRequest, CreateScreenshotRequest } from './types';

/** How a flag's text becomes the field's value: JSON kinds also accept `@file` (a JSON file). */
export type FlagKind = 'boolean' | 'integer' | 'number' | 'string' | 'json' | 'list';

export interface FlagSpec {
  kind: FlagKind;
  description: string;
}

/** Every field of `POST /v1/screenshot` except `url` (the positional argument). */
export const CAPTURE_FLAGS = GENERATED_CAPTURE_FLAGS satisfies Record<Exclude<keyof CreateScreenshotRequest, 'url'>, FlagSpec>;

/** Every field of `POST /v1/runs` except `url` (positional) and `steps` (`--steps <file>`). */
export const RUN_FLAGS = GENERATED_RUN_FLAGS satisfies Record<Exclude<keyof CreateRunRequest, 'url' | 'steps'>, FlagSpec>;

/** `fullPage` → `full-page`. */
export function kebab(field: string): string {
  return field.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`);
}
