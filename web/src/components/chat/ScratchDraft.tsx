// A new scratch chat before its first message (docs/workspaces.md): sending makes the chat and
// its folder; leaving the draft empty makes nothing.

import { Menu as MenuIcon, MessageSquarePlus } from "lucide-react";
import { useEffect, useRef, useState } from "react";
import { errorMessage } from "../../api/http";
import { app } from "../../state/app";
import { startScratchChat } from "../../state/scratch";
import { IconButton } from "../Tooltip";

export function ScratchDraft() {
  const [text, setText] = useState("");
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const ref = useRef<HTMLTextAreaElement>(null);
  useEffect(() => ref.current?.focus(), []);
  const send = () => {
    const message = text.trim();
    if (!message || busy) return;
    setBusy(true);
    setError(null);
    startScratchChat(message).catch((exc: unknown) => {
      setError(errorMessage(exc));
      setBusy(false);
    });
  };
  return (
    <div className="main" data-scratch-draft>
      <div className="chat-header">
        <IconButton label="Toggle sidebar" onClick={() => app.update({ leftOpen: !app.get().leftOpen })}>
          <MenuIcon size={18} />
        </IconButton>
        <div className="chat-title">
          <span className="t">New scratch chat</span>
          <span className="s">no project: a private folder xum manages, no git</span>
        </div>
      </div>
      <div className="empty-state">
        <MessageSquarePlus size={20} aria-hidden /> The chat and its folder are made when you send the first message.
      </div>
      <div className="composer">
        <div className="composer-inner">
          <textarea
            ref={ref}
            data-scratch-composer
            rows={1}
            aria-label="Message"
            placeholder="Message the agent"
            value={text}
            disabled={busy}
            onChange={(e) => setText(e.target.value)}
            onKeyDown={(e) => {
              if (e.key === "Enter" && !e.shiftKey && !e.altKey) {
                e.preventDefault();
                send();
              }
            }}
          />
          {error ? (
            <div className="form-error" role="alert">
              {error}
            </div>
          ) : null}
        </div>
      </div>
    </div>
  );
}
