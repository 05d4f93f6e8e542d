// The bell in the chat header (docs/notifications.md): a popover with "Notify on all responses"
// for this workspace, also toggled with Ctrl+Shift+, (Cmd+Shift+, on macOS). Says so when the
// browser blocks notifications, since the setting cannot help then.

import { Bell, BellRing } from "lucide-react";
import { useEffect, useRef, useState } from "react";
import type { Workspace } from "../../api/types";
import { isMacPlatform, shortcutLabel } from "../../lib/keybinds";
import { useStore } from "../../lib/store";
import { toggleNotifyOnResponse } from "../../state/commands";
import { notificationPermission } from "../../state/notifications";
import { IconButton } from "../Tooltip";

const mac = typeof navigator !== "undefined" && isMacPlatform(navigator.platform);

export function NotifyBell(props: { workspace: Workspace }) {
  const on = Boolean(props.workspace.notifyOnResponse);
  const [open, setOpen] = useState(false);
  const permission = useStore(notificationPermission, (s) => s.permission);
  const ref = useRef<HTMLDivElement>(null);
  useEffect(() => {
    if (!open) return;
    const onDown = (e: MouseEvent) => {
      if (ref.current && e.target instanceof Node && !ref.current.contains(e.target)) setOpen(false);
    };
    document.addEventListener("mousedown", onDown);
    return () => document.removeEventListener("mousedown", onDown);
  }, [open]);
  return (
    <div className="notify-bell" ref={ref} style={{ position: "relative" }}>
      <IconButton
        label={on ? "Notifications: on for all responses" : "Notifications"}
        shortcut={shortcutLabel("TOGGLE_NOTIFY", mac)}
        onClick={() => setOpen(!open)}
        pressed={on}
        className="notify-bell-btn"
      >
        {on ? <BellRing size={18} /> : <Bell size={18} />}
      </IconButton>
      {open ? (
        <div className="popover notify-popover" role="dialog" aria-label="Notifications" style={{ right: 0, top: "100%", bottom: "auto", marginTop: 6 }}>
          <label className="menu-item" style={{ gap: 8 }}>
            <input
              type="checkbox"
              checked={on}
              onChange={() => void toggleNotifyOnResponse()}
              aria-label="Notify on all responses"
            />
            <span className="grow">Notify on all responses</span>
            <span className="faint">{shortcutLabel("TOGGLE_NOTIFY", mac)}</span>
          </label>
          {permission === "denied" ? (
            <div className="menu-item faint">This browser blocks notifications from xum: allow them in the site settings.</div>
          ) : permission === "unsupported" ? (
            <div className="menu-item faint">This browser cannot show notifications.</div>
          ) : null}
        </div>
      ) : null}
    </div>
  );
}
