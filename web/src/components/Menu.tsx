// A small popover list with keyboard navigation (Up/Down, Enter, Esc), rendered inline (no
// portal) above its anchor. Closing on an outside click is handled here.

import { useEffect, useRef, useState, type ReactNode } from "react";

export interface MenuItem {
  id: string;
  label: ReactNode;
  description?: ReactNode;
  trailing?: ReactNode;
  active?: boolean;
}

interface Props {
  label: string;
  items: MenuItem[];
  onSelect: (id: string) => void;
  onClose: () => void;
  filterable?: boolean;
  filter?: (item: MenuItem, query: string) => boolean;
  style?: React.CSSProperties;
}

export function Menu(props: Props) {
  const ref = useRef<HTMLDivElement>(null);
  const [query, setQuery] = useState("");
  const [index, setIndex] = useState(() => Math.max(0, props.items.findIndex((i) => i.active)));
  const items = props.filterable && query ? props.items.filter((i) => props.filter?.(i, query) ?? true) : props.items;
  const clamped = Math.min(index, Math.max(0, items.length - 1));

  useEffect(() => {
    const onDown = (e: MouseEvent) => {
      if (ref.current && e.target instanceof Node && !ref.current.contains(e.target)) props.onClose();
    };
    document.addEventListener("mousedown", onDown);
    return () => document.removeEventListener("mousedown", onDown);
  }, [props]);

  useEffect(() => {
    ref.current?.querySelector<HTMLElement>(props.filterable ? "input" : "[role=option]")?.focus();
  }, [props.filterable]);

  const onKeyDown = (e: React.KeyboardEvent) => {
    if (e.key === "ArrowDown") {
      e.preventDefault();
      setIndex((clamped + 1) % Math.max(1, items.length));
    } else if (e.key === "ArrowUp") {
      e.preventDefault();
      setIndex((clamped - 1 + items.length) % Math.max(1, items.length));
    } else if (e.key === "Enter") {
      e.preventDefault();
      const item = items[clamped];
      if (item) props.onSelect(item.id);
    } else if (e.key === "Escape") {
      e.preventDefault();
      e.stopPropagation();
      props.onClose();
    }
  };

  return (
    <div className="popover" ref={ref} onKeyDown={onKeyDown} style={props.style} role="dialog" aria-label={props.label}>
      {props.filterable ? (
        <input
          className="input"
          style={{ border: "none", borderBottom: "1px solid var(--color-border)", borderRadius: 0 }}
          placeholder="Filter…"
          aria-label={`Filter ${props.label}`}
          value={query}
          onChange={(e) => {
            setQuery(e.target.value);
            setIndex(0);
          }}
        />
      ) : null}
      <div role="listbox" aria-label={props.label}>
        {items.map((item, i) => (
          <button
            key={item.id}
            type="button"
            role="option"
            aria-selected={i === clamped}
            className={`menu-item ${i === clamped ? "active" : ""}`}
            onMouseEnter={() => setIndex(i)}
            onClick={() => props.onSelect(item.id)}
          >
            <span className="grow">
              {item.label}
              {item.description ? <div className="desc">{item.description}</div> : null}
            </span>
            {item.trailing}
          </button>
        ))}
        {items.length === 0 ? <div className="menu-item faint">Nothing matches.</div> : null}
      </div>
    </div>
  );
}
