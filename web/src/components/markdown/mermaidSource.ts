// Diagram source (model output) made safe to hand to Mermaid without any HTML being parsed.
//
// Mermaid runs every label through DOMPurify, which parses it as HTML. Chromium reports a
// Content-Security-Policy violation (script-src-attr) as soon as it parses an inline event
// handler such as `onerror=`, even in the inert document DOMPurify uses, where nothing runs:
// a label like `A["<img src=x onerror=...>"]` would send a CSP report on every render. So the
// `<` that would open a tag is written as Mermaid's own entity `#lt;` first: the parser sees
// text, and the label shows the characters the model wrote. `<br>` (Mermaid's line break) and
// the arrows (`<-->`, `<|--`, `<<interface>>`, `x < y`) are left as they are.
//
// Interaction statements are dropped as well: `click`, `callback`, `link` and `links` bind a
// node to a URL or a script function (never wanted from model output, and a javascript: URL is
// one more thing to trust the sanitizer with), and Mermaid draws a clickable node over the plain
// one, so the diagram showed a node twice. Only the statement lines go; a node that happens to
// be named `click` (`click --> B`) stays.

// A class annotation (`<<interface>>`, a bare word: harmless as HTML), else a `<` that opens a
// tag, a comment or a closing tag, unless it is exactly a `<br>`.
const TAG_OPENER = /<<[A-Za-z][\w-]*>>|<(?!br\s*\/?>)(?=[A-Za-z!?/])/gi;

const INTERACTION = /^[ \t]*(?:click|callback|links?)[ \t]+(?![-=.~<>&|])[^\n]*$/gim;

export function mermaidSafeSource(source: string): string {
  return source.replace(INTERACTION, "").replace(TAG_OPENER, (m) => (m.startsWith("<<") ? m : "#lt;"));
}
