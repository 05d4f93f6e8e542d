import { useState } from "react";
import { classifyDiffLine, splitLines } from "../../lib/diff";

const INITIAL_LINES = 2000;

/** A unified diff as text lines coloured by kind; never interpreted as markup. */
export function DiffView(props: { diff: string; label?: string }) {
  const [all, setAll] = useState(false);
  const lines = splitLines(props.diff);
  const shown = all ? lines : lines.slice(0, INITIAL_LINES);
  return (
    <div className="diff" role="region" aria-label={props.label ?? "Diff"}>
      {shown.map((line, i) => (
        <div key={i} className={`line ${classifyDiffLine(line)}`}>
          {line}
        </div>
      ))}
      {!all && lines.length > INITIAL_LINES && (
        <div className="line">
          <button type="button" className="btn" onClick={() => setAll(true)}>
            Show {lines.length - INITIAL_LINES} more lines
          </button>
        </div>
      )}
    </div>
  );
}
