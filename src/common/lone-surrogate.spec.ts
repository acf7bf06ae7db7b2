import { findBodyProblem } from './request-body-rules';

describe('findBodyProblem: lone surrogates', () => {
  it('refuses a lone high or low surrogate in a string or a key, naming the field', () => {
    expect(findBodyProblem(JSON.parse('{"url":"http://a.test/\\ud800"}'))).toMatchObject({ kind: 'field', field: 'url' });
    expect(findBodyProblem(JSON.parse('{"items":[{"url":"x\\udc00y"}]}'))).toMatchObject({ kind: 'field', field: 'items[0].url' });
    expect(findBodyProblem(JSON.parse('{"a\\ud800":1}'))).toMatchObject({ kind: 'field' });
  });

  it('accepts paired surrogates (emoji) and ordinary text', () => {
    expect(findBodyProblem(JSON.parse('{"description":"\\ud83d\\ude00 ok","url":"http://a.test/é"}'))).toBeNull();
  });
});
