import { plainToInstance } from 'class-transformer';
import { getMetadataStorage, validateSync } from 'class-validator';

/**
 * One section of the configuration (docs/configuration.md): the environment variables it owns, as a
 * class-validator class whose property defaults are the documented defaults, and how its validated
 * values become its part of `AppConfig` (cross-variable checks included). `loadConfig` composes the
 * sections into the one `AppConfig` read at boot.
 */
export interface ConfigSection<E extends object, C> {
  /** The section's variables: a class whose properties are the variable names, with their defaults. */
  variables: new () => E;
  /**
   * The section's typed part of `AppConfig` from its validated variables. A problem a single
   * variable's validation cannot see (two variables that go together, a list's entries) is one line
   * appended to `context.problems`; the result is then discarded.
   */
  read(raw: E, context: SectionContext): C;
}

/** What a section's {@link ConfigSection.read} may look at besides its own variables. */
export interface SectionContext {
  /** The environment as given (for echoing a value in a problem line). */
  env: Readonly<Record<string, string | undefined>>;
  /** Problems found so far (every variable's validation first, then the sections' checks in order). */
  problems: string[];
  /** `NODE_ENV=production`: stricter start-up checks. */
  production: boolean;
  /** Whether stdout is a terminal (picks the default `LOG_FORMAT`). */
  stdoutIsTerminal: boolean;
}

/** Declares a section, typing `read` against its variables. */
export function configSection<E extends object, C>(section: ConfigSection<E, C>): ConfigSection<E, C> {
  return section;
}

/** class-transformer: an integer given as text becomes a number (anything else is left for the validator to refuse). */
export const toInt = ({ value }: { value: unknown }) => (typeof value === 'string' && /^-?\d+$/.test(value.trim()) ? Number(value) : value);

/** class-transformer: `true`/`1` and `false`/`0`/empty become booleans (anything else is left for the validator to refuse). */
export const toBool = ({ value }: { value: unknown }) => {
  if (value === 'true' || value === '1') return true;
  if (value === 'false' || value === '0' || value === '') return false;
  return value;
};

/**
 * The section's variables from `present` (set, non-empty values) with its defaults, validated: one
 * problem line per invalid variable (`NAME="value": message`; secrets are named, never echoed; a URL is
 * shown without its password).
 */
export function validateSection<E extends object>(variables: new () => E, present: Record<string, string>): { raw: E; problems: string[] } {
  const raw = plainToInstance(variables, present, { exposeDefaultValues: true, excludeExtraneousValues: false });
  const errors = validateSync(raw, { whitelist: false });
  return {
    raw,
    problems: errors.map(
      (e) =>
        `${e.property}${/SECRET|TOKEN/.test(e.property) ? '' : `=${JSON.stringify(shownValue(e.property, present[e.property]))}`}: ${Object.values(e.constraints ?? {}).join('; ')}`,
    ),
  };
}

/** The variable names a section owns (its validated properties). */
export function sectionVariableNames(variables: new () => object): string[] {
  return [
    ...new Set(
      getMetadataStorage()
        .getTargetValidationMetadatas(variables, '', true, false)
        .map((m) => m.propertyName),
    ),
  ];
}

/** A configuration value as shown in a problem line: URLs without their password. */
function shownValue(name: string, value: string | undefined): string | undefined {
  return name.endsWith('_URL') && value ? value.replace(/^([a-z]+:\/\/[^:@/]*):[^@/]*@/i, '$1:***@') : value;
}
