/**
 * Server-side HTML: a tagged template that escapes every interpolated value unless it is
 * already Html (or an array of Html). Pages never build markup by string concatenation.
 */
export function escapeHtml(value: string): string {
  return value.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c] as string);
}

/** A string already safe as HTML. */
export class Html {
  constructor(readonly value: string) {}
  toString(): string {
    return this.value;
  }
}

/** Marks markup written by the caller (never user input) as safe. */
export function raw(markup: string): Html {
  return new Html(markup);
}

/** Strings are escaped, numbers written, Html kept, arrays joined; anything else (null, booleans) writes nothing. */
export function html(strings: TemplateStringsArray, ...values: unknown[]): Html {
  let out = strings[0] ?? '';
  values.forEach((v, i) => {
    out += render(v) + (strings[i + 1] ?? '');
  });
  return new Html(out);
}

function render(v: unknown): string {
  if (v instanceof Html) return v.value;
  if (Array.isArray(v)) return v.map(render).join('');
  if (typeof v === 'string') return escapeHtml(v);
  if (typeof v === 'number') return String(v);
  return '';
}
