// The provider's own web searches in a reply, and the pages its text cites: plain text and
// links only. Titles and URLs come from search results, which anyone on the web can write, so
// they are rendered as text (never HTML) and a URL becomes a link only when safeHref allows it.

import { Search } from "lucide-react";
import type { SearchHitRef, WebSearchRef } from "../../api/types";
import { safeHref } from "../../lib/urls";

function HitLink(props: { hit: SearchHitRef }) {
  const href = safeHref(props.hit.url);
  const label = props.hit.title || props.hit.url;
  return (
    <li>
      {href ? (
        <a href={href} target="_blank" rel="noopener noreferrer nofollow" title={props.hit.url}>
          {label}
        </a>
      ) : (
        <span title={props.hit.url}>{label}</span>
      )}
    </li>
  );
}

export function WebSearches(props: { searches: readonly WebSearchRef[] }) {
  if (props.searches.length === 0) return null;
  return (
    <div className="web-searches" data-role="web-searches">
      {props.searches.map((search, i) => (
        <details key={i} className="web-search">
          <summary>
            <Search size={12} aria-hidden /> searched: {search.query || "(no query)"}
            {search.error ? <span className="faint"> (failed: {search.error})</span> : null}
            {!search.error ? <span className="faint"> ({search.results.length} results)</span> : null}
          </summary>
          {search.results.length > 0 ? (
            <ul>
              {search.results.map((hit, j) => (
                <HitLink key={j} hit={hit} />
              ))}
            </ul>
          ) : null}
        </details>
      ))}
    </div>
  );
}

export function Citations(props: { citations: readonly SearchHitRef[] }) {
  if (props.citations.length === 0) return null;
  return (
    <div className="citations" data-role="citations">
      <span className="faint">Sources:</span>
      <ul>
        {props.citations.map((hit, i) => (
          <HitLink key={i} hit={hit} />
        ))}
      </ul>
    </div>
  );
}
