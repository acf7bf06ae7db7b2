import { ApiError, ErrorCode } from './api-error';

/**
 * Deepest nesting of objects and arrays accepted in a request body (CONTRACT.md, "Rate limits and
 * back-pressure": deeper than 32 is 400 `INVALID_JSON`). The deepest legitimate body (a run's steps
 * with a step's options) nests about 5 levels.
 */
export const MAX_BODY_DEPTH = 32;

/**
 * Keys refused anywhere in a body, JSON or form (CONTRACT.md, "Rate limits and back-pressure"):
 * they would reach object prototypes in code that copies bodies, and no field of the API has these names.
 */
export const RESERVED_KEYS: ReadonlySet<string> = new Set(['__proto__', 'constructor', 'prototype']);

/** A UTF-16 surrogate without its pair: not a character, so not valid Unicode text. */
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;
const LONE_SURROGATE_MESSAGE = 'must be valid Unicode text (a lone surrogate such as \\ud800 is not a character)';

/** What is wrong with a body: too deep (`INVALID_JSON`), or one field (`VALIDATION_FAILED`). */
export type BodyProblem = { kind: 'tooDeep' } | { kind: 'field'; field: string; message: string };

/**
 * Walks a parsed body (JSON value, or the object the multipart parser built from form fields) and
 * returns its first problem, or null:
 * - nesting deeper than {@link MAX_BODY_DEPTH} (the walk stops there, so a body nested 10,000 deep
 *   costs 33 steps and no stack);
 * - a key in {@link RESERVED_KEYS};
 * - a key or string containing U+0000, which PostgreSQL cannot store in text and no field needs;
 * - a key or string with a lone UTF-16 surrogate (`"\ud800"` in JSON), which is no character and
 *   would be stored as U+FFFD.
 * Fields are named with dots and brackets (`items[3].url`), as `details.fields` names them.
 */
export function findBodyProblem(value: unknown, maxDepth = MAX_BODY_DEPTH): BodyProblem | null {
  const walk = (node: unknown, path: string, depth: number): BodyProblem | null => {
    if (typeof node === 'string') {
      if (node.includes('\u0000')) return { kind: 'field', field: path || 'body', message: 'must not contain the NUL character (U+0000)' };
      return LONE_SURROGATE.test(node) ? { kind: 'field', field: path || 'body', message: LONE_SURROGATE_MESSAGE } : null;
    }
    if (node === null || typeof node !== 'object' || ArrayBuffer.isView(node)) return null;
    if (depth >= maxDepth) return { kind: 'tooDeep' };
    if (Array.isArray(node)) {
      // Object.keys skips the holes of a sparse array (a form field named `a[4294967294]`).
      for (const index of Object.keys(node)) {
        const problem = walk(node[Number(index)], `${path}[${index}]`, depth + 1);
        if (problem) return problem;
      }
      return null;
    }
    for (const key of Object.keys(node)) {
      const field = path ? `${path}.${key}` : key;
      if (RESERVED_KEYS.has(key)) return { kind: 'field', field, message: 'is a reserved name and not a field of this request' };
      if (key.includes('\u0000'))
        return { kind: 'field', field: field.replace(/\u0000/g, '\\u0000'), message: 'must not contain the NUL character (U+0000)' };
      if (LONE_SURROGATE.test(key))
        return { kind: 'field', field: field.replace(/[\ud800-\udfff]/g, '\ufffd'), message: LONE_SURROGATE_MESSAGE };
      const problem = walk((node as Record<string, unknown>)[key], field, depth + 1);
      if (problem) return problem;
    }
    return null;
  };
  return walk(value, '', 0);
}

/** The error of a {@link BodyProblem}: 400 `INVALID_JSON` for nesting, 400 `VALIDATION_FAILED` naming the field. */
export function bodyProblemError(problem: BodyProblem): ApiError {
  if (problem.kind === 'tooDeep') {
    return new ApiError(ErrorCode.INVALID_JSON, 400, `Request body nests deeper than ${MAX_BODY_DEPTH} levels`);
  }
  return ApiError.validation([{ field: problem.field, message: problem.message }]);
}

/** Throws the error of {@link findBodyProblem}'s first problem, if any. */
export function assertAcceptableBody(value: unknown): void {
  const problem = findBodyProblem(value);
  if (problem) throw bodyProblemError(problem);
}
