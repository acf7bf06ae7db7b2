import { parseAllDocuments } from 'yaml';

/**
 * The YAML skeleton of a Helm template: lines holding only a template action are dropped and inline
 * actions become a placeholder, so the structure around them must be valid YAML (asserted here).
 */
export function helmSkeleton(text: string): any[] {
  const stripped = text
    .split('\n')
    .filter((line) => !/^\s*\{\{-?.*-?\}\}\s*$/.test(line))
    .map((line) => line.replace(/\{\{-?.*?-?\}\}/g, 'TEMPLATE'))
    .join('\n');
  const docs = parseAllDocuments(stripped);
  for (const doc of docs) expect(doc.errors.map((e) => e.message)).toEqual([]);
  return docs.map((d) => d.toJS());
}
