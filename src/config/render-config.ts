import { Transform } from 'class-transformer';
import { IsInt, Max, Min } from 'class-validator';
import { configSection, toInt } from './config-section';

/** The render links section's variables (CONTRACT.md, "Configuration (environment)"). */
class RenderVariables {
  @Transform(toInt) @IsInt() @Min(0) @Max(120000) RENDER_WAIT_MS = 25000;
}

/** Render links' part of `AppConfig`. */
export interface RenderConfig {
  /** How long a render link that missed the cache waits for its render before 503 `RENDER_PENDING`, ms (CONTRACT.md, "Render links"). */
  renderWaitMs: number;
}

/** The render links section (docs/configuration.md). */
export const renderSection = configSection({
  variables: RenderVariables,
  read: (raw): RenderConfig => ({ renderWaitMs: raw.RENDER_WAIT_MS }),
});
