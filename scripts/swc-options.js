// SWC's settings for this code, one place for jest (jest.config.js) and `npm run build:js`
// (scripts/build-js.js): the settings of tsconfig.json that change the emitted code (ES2022 with define
// semantics for class fields, legacy decorators with their metadata, CommonJS). SWC only transpiles:
// the types are checked once, by `npm run typecheck`.
/** @param {boolean | 'inline'} sourceMaps */
module.exports = (sourceMaps) => ({
  jsc: {
    parser: { syntax: 'typescript', decorators: true },
    target: 'es2022',
    transform: { legacyDecorator: true, decoratorMetadata: true, useDefineForClassFields: true },
    keepClassNames: true,
  },
  module: { type: 'commonjs' },
  sourceMaps,
});
