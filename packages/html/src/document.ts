import { escapeHtml, type Html } from './html.js';

export interface DocumentParts {
  /** Escaped here. */
  title: string;
  referrer: 'same-origin' | 'no-referrer';
  /** What the head holds besides the charset, viewport, referrer and title (styles, icons). */
  head: Html;
  body: Html;
}

/** A whole HTML page: the doctype, the head every page has, then the body. */
export function htmlDocument(p: DocumentParts): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="${p.referrer}">
<title>${escapeHtml(p.title)}</title>
${p.head.value}
</head>
<body>
${p.body.value}
</body>
</html>
`;
}
