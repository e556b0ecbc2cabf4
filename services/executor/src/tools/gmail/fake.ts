import type { Reply } from '../../test-support/fake-provider.js';

/** What the fake Google server (test-support/fake-google.ts) knows of an inbox message. */
interface InboxMessage {
  id: string;
  threadId: string;
  snippet: string;
  date: string;
}

type Header = { name: string; value: string };

/**
 * The bodies of the fake inbox's messages as Gmail holds them: m1 is multipart/mixed (text and a
 * PDF attachment), m2 multipart/alternative (text and HTML), m3 HTML only.
 */
const BODIES: Record<string, { text?: string; html?: string; attachment?: { filename: string; data: string } }> = {
  m1: {
    text: 'Hi,\nPlease find the invoice for March attached.\nAlice',
    attachment: { filename: 'invoice-march.pdf', data: '%PDF-1.4 fake invoice' },
  },
  m2: { text: 'Noon at the usual place?', html: '<p>Noon at the <b>usual</b> place?</p>' },
  m3: { html: '<div>Build <b>#42</b> passed</div><div>All green &amp; shipped</div>' },
};

const b64url = (s: string) => Buffer.from(s, 'utf8').toString('base64url');
const b64 = (s: string) => Buffer.from(s, 'utf8').toString('base64');
const part = (mimeType: string, data: string) => ({
  mimeType,
  filename: '',
  headers: [{ name: 'Content-Type', value: mimeType }],
  body: { size: data.length, data: b64url(data) },
});

/** The message resource of `format=full` (payload tree) or `format=raw` (the RFC 2822 text, base64url). */
export function gmailMessageFormat(x: InboxMessage, headers: Header[], format: 'full' | 'raw'): Reply {
  const b = BODIES[x.id] ?? { text: x.snippet };
  const internalDate = String(Date.parse(x.date));
  if (format === 'raw') {
    const lines = [...headers.map((h) => `${h.name}: ${h.value}`), 'MIME-Version: 1.0', 'Content-Type: multipart/mixed; boundary="b1"', ''];
    if (b.text) lines.push('--b1', 'Content-Type: text/plain; charset="UTF-8"', '', b.text.replace(/\n/g, '\r\n'));
    if (b.html) lines.push('--b1', 'Content-Type: text/html; charset="UTF-8"', '', b.html);
    if (b.attachment)
      lines.push(
        '--b1',
        `Content-Type: application/pdf; name="${b.attachment.filename}"`,
        `Content-Disposition: attachment; filename="${b.attachment.filename}"`,
        'Content-Transfer-Encoding: base64',
        '',
        b64(b.attachment.data),
      );
    lines.push('--b1--', '');
    return { status: 200, body: { id: x.id, threadId: x.threadId, snippet: x.snippet, internalDate, raw: b64url(lines.join('\r\n')) } };
  }
  const texts = [...(b.text ? [part('text/plain', b.text)] : []), ...(b.html ? [part('text/html', b.html)] : [])];
  const payload = b.attachment
    ? {
        mimeType: 'multipart/mixed',
        headers,
        parts: [
          ...texts,
          {
            mimeType: 'application/pdf',
            filename: b.attachment.filename,
            headers: [{ name: 'Content-Disposition', value: `attachment; filename="${b.attachment.filename}"` }],
            body: { size: b.attachment.data.length, attachmentId: `att-${x.id}` },
          },
        ],
      }
    : texts.length === 1
      ? { ...texts[0], headers }
      : { mimeType: 'multipart/alternative', headers, parts: texts };
  return { status: 200, body: { id: x.id, threadId: x.threadId, snippet: x.snippet, internalDate, payload } };
}
