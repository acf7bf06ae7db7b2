/** Types of `parse-prometheus-text-format` (the package ships none): metric families of a scrape. */
declare module 'parse-prometheus-text-format' {
  export default function parsePrometheusTextFormat(text: string): Array<{
    name: string;
    help: string;
    type: string;
    metrics: Array<{ value?: string; labels?: Record<string, string>; count?: string; sum?: string; buckets?: Record<string, string> }>;
  }>;
}
