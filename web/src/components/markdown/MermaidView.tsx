import { useEffect, useId, useLayoutEffect, useRef, useState } from "react";
import { loadOnce } from "./lazy";
import { mermaidSafeSource } from "./mermaidSource";
import { sanitizeSvg } from "./sanitize";

type Mermaid = typeof import("mermaid").default;

const loadMermaid = loadOnce(() =>
  import("mermaid").then((mod): Mermaid => {
    const mermaid = mod.default;
    mermaid.initialize({
      startOnLoad: false,
      securityLevel: "strict",
      theme: "dark",
      // Labels as SVG text: HTML labels would need foreignObject, which the sanitizer removes.
      htmlLabels: false,
      flowchart: { htmlLabels: false },
      maxTextSize: 50_000,
    });
    return mermaid;
  }),
);

interface Props {
  source: string;
}

const FIT_PADDING = 8;

/** Mermaid sizes its viewBox from text measured off-screen; a label that wraps differently once
 *  shown (long or odd text) can then stick out and be cut off. Fit the box to what is drawn. */
function fitViewBox(svg: SVGSVGElement): void {
  let box: DOMRect;
  try {
    box = svg.getBBox();
  } catch {
    return; // not laid out (hidden): keep Mermaid's box
  }
  if (!box.width || !box.height) return;
  const x = box.x - FIT_PADDING;
  const y = box.y - FIT_PADDING;
  const w = box.width + 2 * FIT_PADDING;
  const h = box.height + 2 * FIT_PADDING;
  const current = svg.viewBox.baseVal;
  const inside =
    current && current.width > 0 && x >= current.x && y >= current.y && x + w <= current.x + current.width && y + h <= current.y + current.height;
  if (inside) return;
  const nx = Math.min(x, current?.x ?? x);
  const ny = Math.min(y, current?.y ?? y);
  const nw = Math.max(x + w, (current?.x ?? x) + (current?.width ?? 0)) - nx;
  const nh = Math.max(y + h, (current?.y ?? y) + (current?.height ?? 0)) - ny;
  svg.setAttribute("viewBox", `${nx} ${ny} ${nw} ${nh}`);
  svg.style.maxWidth = `${nw}px`;
}

/** A ```mermaid block as a diagram; the source is shown while it renders or when it is invalid. */
export function MermaidView(props: Props) {
  const id = `mmd-${useId().replace(/[^a-zA-Z0-9]/g, "")}`;
  const [svg, setSvg] = useState<string | null>(null);
  const [failed, setFailed] = useState(false);
  const box = useRef<HTMLDivElement>(null);
  useLayoutEffect(() => {
    const el = box.current?.querySelector("svg");
    if (el) fitViewBox(el);
  }, [svg]);
  useEffect(() => {
    let live = true;
    setFailed(false);
    loadMermaid()
      .then((mermaid) => mermaid.render(id, mermaidSafeSource(props.source)))
      .then((out) => {
        if (live) setSvg(sanitizeSvg(out.svg));
      })
      .catch(() => {
        if (live) setFailed(true);
      });
    return () => {
      live = false;
    };
  }, [id, props.source]);
  if (svg === null || failed) {
    return (
      <div className="code-block">
        <div className="code-head">
          <span>{failed ? "mermaid (could not render)" : "mermaid"}</span>
        </div>
        <pre>
          <code>{props.source}</code>
        </pre>
      </div>
    );
  }
  // SECURITY AUDIT: the diagram source is model output. Its tag openers are made entities first
  // (mermaidSource.ts: no label is parsed as HTML, so no CSP report either), Mermaid runs with
  // securityLevel "strict" (labels are sanitized, click handlers disabled) and its SVG is
  // sanitized again with DOMPurify (SVG profile; no scripts, foreignObject, links, images or
  // event handlers) before insertion.
  return (
    <div ref={box} className="mermaid-diagram" role="img" aria-label="Mermaid diagram" dangerouslySetInnerHTML={{ __html: svg }} />
  );
}
