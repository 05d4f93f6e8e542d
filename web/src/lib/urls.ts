// Which links in model output may become clickable.
//
// Model output and repository content are attacker-controlled. Only absolute http(s) and mailto
// URLs become links; everything else (javascript:, data:, vbscript:, file:, relative paths that
// would point into this server, protocol-relative `//host` URLs) is rendered as inert text.

const ALLOWED_PROTOCOLS = new Set(["http:", "https:", "mailto:"]);

/** The URL to put in `href`, or null when the link must be rendered inert. */
export function safeHref(raw: string | null | undefined): string | null {
  if (raw == null) return null;
  // Browsers strip ASCII control characters and surrounding whitespace before parsing a URL
  // ("java\tscript:" is javascript:), so parse exactly what the browser would.
  // eslint-disable-next-line no-control-regex
  const cleaned = raw.replace(/[\u0000-\u001F\u007F]/g, "").trim();
  if (cleaned === "") return null;
  let url: URL;
  try {
    url = new URL(cleaned);
  } catch {
    return null; // relative or malformed: no base is applied on purpose
  }
  if (!ALLOWED_PROTOCOLS.has(url.protocol)) return null;
  if (url.protocol !== "mailto:" && url.hostname === "") return null;
  return url.href;
}

/** react-markdown's urlTransform: keep safe URLs, blank out everything else. */
export function markdownUrlTransform(url: string): string {
  return safeHref(url) ?? "";
}
