import { Injectable } from '@nestjs/common';
import { Eta } from 'eta';
import type { Response } from 'express';
import { join } from 'node:path';
import { EVENT_TYPES } from '../events/event-types';

/** Directory of the Eta templates; `npm run build` copies it next to the compiled module. */
export const VIEWS_DIR = join(__dirname, 'views');

/**
 * Renders the dashboard's Eta templates (`src/dashboard/views`). `<%= %>` escapes HTML (the default
 * everywhere); only layouts and partials are inserted raw with `<%~ %>`.
 */
@Injectable()
export class DashboardViews {
  private readonly eta = new Eta({ views: VIEWS_DIR, autoEscape: true, cache: true, autoTrim: [false, 'nl'] });

  /** The HTML of a template with its data; helpers (`fmt`, `eventTypes`) are added for every view. */
  render(template: string, data: Record<string, unknown>): string {
    return this.eta.render(template, { ...data, fmt, eventTypes: EVENT_TYPES });
  }

  /** Sends a page: HTML, `Cache-Control: no-store` (pages may carry a secret shown once). */
  send(res: Response, status: number, template: string, data: Record<string, unknown>): void {
    res.status(status).setHeader('Cache-Control', 'no-store');
    res.type('html').send(this.render(template, data));
  }
}

/** Formatting helpers for templates. */
export const fmt = {
  /** `2026-11-23 14:05 UTC`, or an em dash for null. */
  time(value: Date | string | null | undefined): string {
    if (!value) return '—';
    const d = new Date(value);
    return `${d.toISOString().slice(0, 10)} ${d.toISOString().slice(11, 16)} UTC`;
  },
  /** `2026-11-23` */
  day(value: Date | string | null | undefined): string {
    return value ? new Date(value).toISOString().slice(0, 10) : '—';
  },
  /** A span between two instants: `850 ms`, `3.7 s`, `2 min 05 s`; an em dash while either is missing. */
  duration(from: Date | string | null | undefined, to: Date | string | null | undefined): string {
    if (!from || !to) return '—';
    return fmt.ms(new Date(to).getTime() - new Date(from).getTime());
  },
  /** Milliseconds as {@link fmt.duration} shows them. */
  ms(value: number): string {
    if (value < 1000) return `${Math.max(0, Math.round(value))} ms`;
    if (value < 60_000) return `${(value / 1000).toFixed(1)} s`;
    const s = Math.round(value / 1000);
    return `${Math.floor(s / 60)} min ${String(s % 60).padStart(2, '0')} s`;
  },
  /** `12,345` */
  number(value: number): string {
    return value.toLocaleString('en-US');
  },
};
