// A dialog over the app: Esc or a click on the backdrop closes it; focus moves into it. Esc
// works even when focus has fallen out of the dialog (onto <body>): a dialog no key can close
// would leave its overlay over the page.

import { X } from "lucide-react";
import { useEffect, useRef, type ReactNode } from "react";
import { IconButton } from "../Tooltip";

interface Props {
  title: string;
  onClose: () => void;
  children: ReactNode;
  footer?: ReactNode;
  wide?: boolean;
}

export function Modal(props: Props) {
  const ref = useRef<HTMLDivElement>(null);
  useEffect(() => {
    // The field marked data-autofocus, else the dialog itself (so Esc works and nothing scrolls).
    const el = ref.current;
    const target = el?.querySelector<HTMLElement>("[data-autofocus]") ?? el;
    target?.focus({ preventScroll: true });
  }, []);
  const onClose = useRef(props.onClose);
  onClose.current = props.onClose;
  useEffect(() => {
    const onKey = (e: KeyboardEvent) => {
      const el = ref.current;
      if (e.key !== "Escape" || e.defaultPrevented || !el) return;
      if (e.target instanceof Node && el.contains(e.target)) return; // the dialog's own handler
      if (e.target instanceof Element && e.target.closest("[role='dialog']")) return; // another one
      e.preventDefault();
      onClose.current();
    };
    window.addEventListener("keydown", onKey);
    return () => window.removeEventListener("keydown", onKey);
  }, []);
  return (
    <div
      className="overlay"
      onMouseDown={(e) => {
        if (e.target === e.currentTarget) props.onClose();
      }}
    >
      <div
        className={`dialog ${props.wide ? "wide" : ""}`}
        role="dialog"
        aria-modal="true"
        aria-label={props.title}
        tabIndex={-1}
        ref={ref}
        onKeyDown={(e) => {
          if (e.key === "Escape") {
            e.stopPropagation();
            props.onClose();
          }
        }}
      >
        <div className="dialog-head">
          <span className="grow">{props.title}</span>
          <IconButton label="Close" onClick={props.onClose}>
            <X size={16} />
          </IconButton>
        </div>
        <div className="dialog-body">{props.children}</div>
        {props.footer ? <div className="dialog-foot">{props.footer}</div> : null}
      </div>
    </div>
  );
}
