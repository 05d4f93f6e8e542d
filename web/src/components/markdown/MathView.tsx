import { useEffect, useState } from "react";
import { loadOnce } from "./lazy";
import { sanitizeMath } from "./sanitize";

type Katex = typeof import("katex").default;

let katex: Katex | null = null;

const loadKatex = loadOnce(() =>
  Promise.all([import("katex"), import("katex/dist/katex.min.css")]).then(([mod]) => {
    katex = mod.default;
    return katex;
  }),
);

interface Props {
  tex: string;
  display: boolean;
}

/** `$$...$$` math rendered with KaTeX (loaded on first use); the TeX source shows until then. */
export function MathView(props: Props) {
  const [lib, setLib] = useState<Katex | null>(katex);
  useEffect(() => {
    if (lib) return;
    let live = true;
    loadKatex()
      .then((k) => {
        if (live) setLib(() => k);
      })
      .catch(() => undefined); // the TeX source stays; the next math block tries again
    return () => {
      live = false;
    };
  }, [lib]);
  const Tag = props.display ? "div" : "span";
  const className = props.display ? "math-display" : "math-inline";
  if (!lib) return <Tag className={className}>{props.tex}</Tag>;
  const html = lib.renderToString(props.tex, {
    displayMode: props.display,
    throwOnError: false,
    trust: false,
    strict: "ignore",
    maxExpand: 1000,
    maxSize: 50,
    output: "htmlAndMathml",
  });
  // SECURITY AUDIT: the TeX source is model output (attacker-controlled). KaTeX renders it with
  // `trust: false` (no \href, \url, \includegraphics, \htmlClass...), and the HTML it returns is
  // sanitized with DOMPurify (no scripts, event handlers, links, images or styles elements)
  // before it reaches the DOM.
  return <Tag className={className} dangerouslySetInnerHTML={{ __html: sanitizeMath(html) }} />;
}
