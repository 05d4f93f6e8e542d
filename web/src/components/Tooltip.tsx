// The shared tooltip: shown on hover and keyboard focus, portalled to <body> so clipped
// containers cannot hide it. Used instead of native `title` attributes.

import { cloneElement, useLayoutEffect, useRef, useState, type ReactElement, type ReactNode } from "react";
import { createPortal } from "react-dom";

interface Props {
  content: ReactNode;
  children: ReactElement<{
    onMouseEnter?: (e: React.MouseEvent) => void;
    onMouseLeave?: (e: React.MouseEvent) => void;
    onFocus?: (e: React.FocusEvent) => void;
    onBlur?: (e: React.FocusEvent) => void;
    ref?: React.Ref<HTMLElement>;
  }>;
}

interface Anchor {
  center: number;
  top: number;
  bottom: number;
}

const MARGIN = 6;

/** Touch screens have no hover: a tap must not leave a tooltip behind. */
function canHover(): boolean {
  return window.matchMedia("(hover: hover)").matches;
}

export function Tooltip(props: Props) {
  const [anchor, setAnchor] = useState<Anchor | null>(null);
  const tip = useRef<HTMLDivElement>(null);
  const show = (el: EventTarget | null) => {
    if (!(el instanceof HTMLElement)) return;
    const r = el.getBoundingClientRect();
    setAnchor({ center: r.left + r.width / 2, top: r.top, bottom: r.bottom });
  };
  // Place it above the anchor (below when there is no room), kept inside the viewport.
  useLayoutEffect(() => {
    const el = tip.current;
    if (!el || !anchor) return;
    const w = el.offsetWidth;
    const h = el.offsetHeight;
    const left = Math.min(Math.max(MARGIN, anchor.center - w / 2), window.innerWidth - w - MARGIN);
    const above = anchor.top - h - MARGIN;
    el.style.left = `${left}px`;
    el.style.top = `${above >= MARGIN ? above : anchor.bottom + MARGIN}px`;
    el.style.visibility = "visible";
  }, [anchor]);
  const hide = () => setAnchor(null);
  const child = cloneElement(props.children, {
    onMouseEnter: (e: React.MouseEvent) => {
      props.children.props.onMouseEnter?.(e);
      if (canHover()) show(e.currentTarget);
    },
    onMouseLeave: (e: React.MouseEvent) => {
      props.children.props.onMouseLeave?.(e);
      hide();
    },
    onFocus: (e: React.FocusEvent) => {
      props.children.props.onFocus?.(e);
      if (e.currentTarget.matches(":focus-visible")) show(e.currentTarget);
    },
    onBlur: (e: React.FocusEvent) => {
      props.children.props.onBlur?.(e);
      hide();
    },
  });
  return (
    <>
      {child}
      {anchor !== null &&
        props.content !== null &&
        props.content !== "" &&
        createPortal(
          <div className="tooltip" role="tooltip" ref={tip} style={{ visibility: "hidden", left: 0, top: 0 }}>
            {props.content}
          </div>,
          document.body,
        )}
    </>
  );
}

interface IconButtonProps {
  label: string;
  shortcut?: string;
  onClick: () => void;
  children: ReactNode;
  className?: string;
  disabled?: boolean;
  pressed?: boolean;
}

/** An icon-only button: accessible name from `label`, the tooltip shows label and shortcut. */
export function IconButton(props: IconButtonProps) {
  return (
    <Tooltip
      content={
        <>
          {props.label}
          {props.shortcut ? <span className="kbd-hint"> ({props.shortcut})</span> : null}
        </>
      }
    >
      <button
        type="button"
        className={`icon-btn ${props.className ?? ""}`}
        aria-label={props.label}
        aria-pressed={props.pressed}
        disabled={props.disabled}
        onClick={props.onClick}
      >
        {props.children}
      </button>
    </Tooltip>
  );
}
