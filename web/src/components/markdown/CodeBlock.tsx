import { useEffect, useState } from "react";
import { CopyButton } from "../CopyButton";
import { getHighlighter, highlightToReact, loadHighlighter, onHighlighterReady } from "./highlight";

interface Props {
  code: string;
  language: string | null;
}

export function CodeBlock(props: Props) {
  const [ready, setReady] = useState(() => getHighlighter() !== null);
  useEffect(() => {
    if (ready || !props.language) return;
    const off = onHighlighterReady(() => setReady(true));
    loadHighlighter().catch(() => undefined); // plain text stays; the next block tries again
    return off;
  }, [ready, props.language]);
  const highlighted = ready ? highlightToReact(props.code, props.language) : null;
  return (
    <div className="code-block">
      <div className="code-head">
        <span>{props.language ?? "text"}</span>
        <CopyButton text={props.code} label="Copy code" />
      </div>
      <pre>
        <code className={props.language ? `hljs language-${props.language}` : undefined}>
          {highlighted ?? props.code}
        </code>
      </pre>
    </div>
  );
}
