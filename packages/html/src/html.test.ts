import { Html, escapeHtml, html, htmlDocument, raw } from './index.js';

describe('html', () => {
  it('escapes the five characters that matter in text and attributes', () => {
    expect(escapeHtml(`<a href="x">'&'</a>`)).toBe('&lt;a href=&quot;x&quot;&gt;&#39;&amp;&#39;&lt;/a&gt;');
  });

  it('escapes interpolated strings and keeps Html, raw and arrays of Html as they are', () => {
    const name = '<script>alert(1)</script>';
    const out = html`<p title="${name}">${html`<b>${name}</b>`}${raw('<hr>')}${['a', html`<i>b</i>`]}</p>`;
    expect(out).toBeInstanceOf(Html);
    expect(out.value).toBe(
      '<p title="&lt;script&gt;alert(1)&lt;/script&gt;"><b>&lt;script&gt;alert(1)&lt;/script&gt;</b><hr>a<i>b</i></p>',
    );
  });

  it('writes numbers and nothing for null, undefined and booleans', () => {
    expect(html`${3}|${0}|${null}|${undefined}|${true}|${false}`.value).toBe('3|0||||');
  });

  it('wraps a body in the document shell with an escaped title', () => {
    const page = htmlDocument({ title: 'A & B', referrer: 'no-referrer', head: raw('<style></style>'), body: html`<main></main>` });
    expect(page).toBe(`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>A &amp; B</title>
<style></style>
</head>
<body>
<main></main>
</body>
</html>
`);
  });
});
