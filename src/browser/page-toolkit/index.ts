/**
 * The browser toolkit (ARCHITECTURE.md, "One way to do a thing": browser work, one toolkit): the page
 * helpers captures, runs, extraction and monitors share on top of the browser pool. Navigation with
 * time budgets, the Playwright error vocabulary and its customer-safe messages, screenshots, styles
 * and masks, and the egress proxy's reasons for what it refused.
 */
export * from './animations';
export * from './egress-failures';
export * from './full-page-sections';
export * from './masks';
export * from './navigation';
export * from './playwright-errors';
export * from './screenshot';
export * from './scroll-animation';
export * from './time-budget';
