// DOMPurify settings for the few places that must insert library-generated markup.
// Each caller marks its sink with a SECURITY AUDIT comment naming what it inserts and why.

import DOMPurify from "dompurify";

/** KaTeX output: HTML plus MathML, no scripts, no event handlers, no links. */
export function sanitizeMath(html: string): string {
  return DOMPurify.sanitize(html, {
    USE_PROFILES: { html: true, mathMl: true },
    FORBID_TAGS: ["a", "img", "form", "input", "iframe", "object", "embed", "script", "style"],
    FORBID_ATTR: ["href", "xlink:href", "src", "action"],
  });
}

/** Mermaid SVG: SVG elements only (no foreignObject HTML), no scripts, no links. */
export function sanitizeSvg(svg: string): string {
  return DOMPurify.sanitize(svg, {
    USE_PROFILES: { svg: true, svgFilters: true },
    ADD_TAGS: ["style"],
    FORBID_TAGS: ["a", "foreignObject", "script", "image", "use"],
    FORBID_ATTR: ["href", "xlink:href", "src"],
  });
}
