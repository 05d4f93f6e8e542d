import { useEffect, useId, useState } from "react";
import { sanitizeSvg } from "./sanitize";

type Mermaid = typeof import("mermaid").default;

let loading: Promise<Mermaid> | null = null;

function loadMermaid(): Promise<Mermaid> {
  loading ??= import("mermaid").then((mod) => {
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
  });
  return loading;
}

interface Props {
  source: string;
}

/** A ```mermaid block as a diagram; the source is shown while it renders or when it is invalid. */
export function MermaidView(props: Props) {
  const id = `mmd-${useId().replace(/[^a-zA-Z0-9]/g, "")}`;
  const [svg, setSvg] = useState<string | null>(null);
  const [failed, setFailed] = useState(false);
  useEffect(() => {
    let live = true;
    setFailed(false);
    loadMermaid()
      .then((mermaid) => mermaid.render(id, props.source))
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
  // SECURITY AUDIT: the diagram source is model output. Mermaid runs with securityLevel "strict"
  // (labels are sanitized, click handlers disabled) and its SVG is sanitized again with DOMPurify
  // (SVG profile; no scripts, foreignObject, links, images or event handlers) before insertion.
  return (
    <div className="mermaid-diagram" role="img" aria-label="Mermaid diagram" dangerouslySetInnerHTML={{ __html: svg }} />
  );
}
