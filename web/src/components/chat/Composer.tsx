// The message input. Enter sends (while a turn runs: queued after the current step), Ctrl+Enter
// sends after the turn, Shift+Enter is a newline, Esc interrupts a running turn. A leading `/`
// suggests the slash commands the server's registry has. Every command is carried out by the
// server (`/model x`, `/fork`, skills, overrides); the one exception is a bare `/model`, which
// opens the model picker here. Enter on a suggestion runs it when it is complete (typed out, or
// needing no arguments) and completes it otherwise. `@` suggests the workspace's file paths.
// Images pasted into the box or dropped on the composer go with the next message.

import { ArrowUp, Square } from "lucide-react";
import { useEffect, useLayoutEffect, useRef, useState } from "react";
import { ApiError, errorMessage } from "../../api/http";
import type { QueuedMessage, SlashCommand, Workspace } from "../../api/types";
import { drafts } from "../../lib/drafts";
import { isMacPlatform } from "../../lib/keybinds";
import { matchSlash, parseSlash, slashEnter, slashInsertion, slashQuery } from "../../lib/slash";
import { useStore } from "../../lib/store";
import { app, openDialog, openPicker } from "../../state/app";
import { clearQueue, interrupt, sendMessage } from "../../state/actions";
import { IconButton } from "../Tooltip";
import { onComposerText } from "./composerBus";
import { ComposerPickers } from "./Pickers";
import { AutoCompactHint } from "../ContextBar";
import { useMentions } from "./useMentions";
import { AttachedImages, imageFiles, useImageAttachments } from "./AttachedImages";

const mac = typeof navigator !== "undefined" && isMacPlatform(navigator.platform);

/** Whether the text is a bare `/model` of the registry's command kind (a skill or alias of that
 *  name is never taken for it): the UI answers it by opening the model picker. */
function isBareModelCommand(text: string, commands: readonly SlashCommand[]): boolean {
  const parsed = parseSlash(text);
  if (!parsed || parsed.name !== "model" || parsed.args || parsed.rest) return false;
  return commands.some((c) => c.kind === "command" && c.name === "model");
}


/** An error under the composer; `network` ones go away by themselves once the server is back,
 *  `settings` ones (no provider, an unknown model: the server's config_error) are fixed there. */
interface ComposerError {
  message: string;
  network: boolean;
  settings?: boolean;
}

function composerError(exc: unknown): ComposerError {
  const code = exc instanceof ApiError ? exc.code : null;
  return { message: errorMessage(exc), network: code === "network", settings: code === "config_error" };
}

/** What is queued, one line each (the user's own text, shown as text), in the order it runs. */
function QueuedList(props: { messages: readonly QueuedMessage[]; total: number }) {
  if (props.messages.length === 0) return null;
  const more = props.total - props.messages.length;
  return (
    <ol className="queued-list">
      {props.messages.map((m, i) => (
        <li key={i} data-when={m.when} title={m.text}>
          <span className="faint">{m.when === "step" ? "after this step" : "after the turn"}:</span> {m.text}
          {m.truncated ? "…" : ""}
        </li>
      ))}
      {more > 0 ? <li className="faint">and {more} more</li> : null}
    </ol>
  );
}

export function Composer(props: { workspace: Workspace }) {
  const ws = props.workspace;
  const [text, setText] = useState(() => drafts.get(ws.id));
  const [error, setErrorState] = useState<ComposerError | null>(null);
  const setError = (message: string | null) => setErrorState(message === null ? null : { message, network: false });
  const connected = useStore(app, (s) => s.connection === "open");
  const [sending, setSending] = useState(false);
  const [slashIndex, setSlashIndex] = useState(0);
  // The text the suggestions were closed at (Esc, or a suggestion accepted): they stay closed
  // until the text changes.
  const [dismissedAt, setDismissedAt] = useState<string | null>(null);
  const ref = useRef<HTMLTextAreaElement>(null);
  const idRef = useRef(ws.id);
  idRef.current = ws.id;
  const status = useStore(app, (s) => s.statuses[ws.id] ?? ws.status);
  const commands = useStore(app, (s) => s.slash);
  const streaming = status.state === "streaming";
  const queued = status.queued.step + status.queued.turn;
  const attachments = useImageAttachments(ws.id, setError);
  const [dragging, setDragging] = useState(false);

  useEffect(() => {
    setText(drafts.get(ws.id));
    setErrorState(null);
  }, [ws.id]);

  // "The server cannot be reached" is over once it can be: do not leave it on screen.
  useEffect(() => {
    if (connected) setErrorState((e) => (e?.network ? null : e));
  }, [connected]);

  useEffect(
    () =>
      onComposerText((id, value, mode) => {
        if (id !== ws.id) return;
        const el = ref.current;
        setText((cur) => {
          if (mode === "replace" || !el) return value;
          const start = el.selectionStart ?? cur.length;
          return cur.slice(0, start) + value + cur.slice(el.selectionEnd ?? start);
        });
        el?.focus();
      }),
    [ws.id],
  );

  useEffect(() => {
    drafts.set(ws.id, text);
  }, [ws.id, text]);

  useLayoutEffect(() => {
    const el = ref.current;
    if (!el) return;
    el.style.height = "auto";
    el.style.height = `${Math.min(el.scrollHeight + 2, window.innerHeight * 0.4)}px`;
  }, [text]);

  // Where the caret is, for `@` mentions (read again on each input, click and key).
  const [caret, setCaret] = useState(0);
  const noteCaret = () => setCaret(ref.current?.selectionStart ?? 0);
  const mentions = useMentions(ws.id, text, caret);

  const acceptMention = (path?: string) => {
    const next = mentions.accept(path);
    if (!next) return;
    setText(next.text);
    setCaret(next.caret);
    requestAnimationFrame(() => {
      const el = ref.current;
      if (!el) return;
      el.focus();
      el.setSelectionRange(next.caret, next.caret);
    });
  };

  const query = text === dismissedAt ? null : slashQuery(text);
  const suggestions = query === null ? [] : matchSlash(commands, query).slice(0, 12);
  const slashOpen = suggestions.length > 0;
  const slashActive = Math.min(slashIndex, Math.max(0, suggestions.length - 1));

  const acceptSlash = (cmd: SlashCommand) => {
    const inserted = slashInsertion(cmd);
    setText(inserted);
    setDismissedAt(inserted);
    ref.current?.focus();
  };

  /** Send the box's text (or `override`: a slash command picked from the suggestions). */
  const send = async (when: "step" | "turn", override?: string) => {
    const typed = override ?? text;
    const value = typed.trim();
    const images = override === undefined ? attachments.images : [];
    if ((!value && images.length === 0) || sending || attachments.uploading > 0) return;
    setSending(true);
    setError(null);
    const source = ws.id;
    // The box empties as the message leaves, not when the server's answer comes back: its
    // bubble can reach the transcript first, and the same words must not show in both places.
    setText("");
    setDismissedAt(null);
    try {
      if (isBareModelCommand(value, commands)) openPicker("model");
      else await sendMessage(source, value, when, images);
      if (images.length) attachments.clear();
      // A /fork has moved the composer to the new fork by now: clear the source's draft.
      drafts.set(source, "");
    } catch (exc) {
      setErrorState(composerError(exc));
      // Nothing was sent: give the words back, unless something new has been typed meanwhile.
      if (idRef.current === source) setText((cur) => (cur === "" ? typed : cur));
      else if (drafts.get(source) === "") drafts.set(source, typed);
    } finally {
      setSending(false);
    }
  };

  const stop = async () => {
    try {
      await interrupt(ws.id);
    } catch (exc) {
      setErrorState(composerError(exc));
    }
  };

  const onKeyDown = (e: React.KeyboardEvent<HTMLTextAreaElement>) => {
    if (e.nativeEvent.isComposing) return;
    if (mentions.open && !slashOpen) {
      if (e.key === "ArrowDown" || e.key === "ArrowUp") {
        e.preventDefault();
        mentions.move(e.key === "ArrowDown" ? 1 : -1);
        return;
      }
      if (e.key === "Tab" || (e.key === "Enter" && !e.shiftKey && !e.ctrlKey && !e.metaKey && !e.altKey)) {
        e.preventDefault();
        acceptMention();
        return;
      }
      if (e.key === "Escape") {
        e.preventDefault();
        e.stopPropagation();
        mentions.dismiss();
        return;
      }
    }
    if (slashOpen) {
      if (e.key === "ArrowDown" || e.key === "ArrowUp") {
        e.preventDefault();
        const d = e.key === "ArrowDown" ? 1 : -1;
        setSlashIndex((slashActive + d + suggestions.length) % suggestions.length);
        return;
      }
      const cmd = suggestions[slashActive];
      if (e.key === "Tab" && cmd) {
        e.preventDefault();
        acceptSlash(cmd);
        return;
      }
      // One Enter runs a command that is complete (typed out, or needing no arguments); one
      // that takes arguments is completed instead, to type them.
      if (e.key === "Enter" && !e.shiftKey && !e.ctrlKey && !e.metaKey && !e.altKey && cmd) {
        e.preventDefault();
        const action = slashEnter(text, cmd);
        if ("send" in action) void send("step", action.send);
        else acceptSlash(cmd);
        return;
      }
      if (e.key === "Escape") {
        e.preventDefault();
        e.stopPropagation();
        setDismissedAt(text);
        return;
      }
    }
    const primary = mac ? e.metaKey : e.ctrlKey;
    if (e.key === "Enter" && primary && !e.shiftKey) {
      e.preventDefault();
      void send("turn");
      return;
    }
    if (e.key === "Enter" && !e.shiftKey && !e.altKey && !primary) {
      e.preventDefault();
      void send("step");
    }
  };

  const plan = ws.agent === "plan";
  return (
    <div
      className={`composer ${plan ? "plan" : ""} ${dragging ? "dropping" : ""}`}
      onDragOver={(e) => {
        if (!Array.from(e.dataTransfer.items).some((i) => i.kind === "file")) return;
        e.preventDefault();
        setDragging(true);
      }}
      onDragLeave={() => setDragging(false)}
      onDrop={(e) => {
        const files = imageFiles(e.dataTransfer);
        setDragging(false);
        if (e.dataTransfer.files.length === 0) return;
        e.preventDefault();
        if (files.length === 0) setError("Only images (PNG, JPEG, GIF, WebP) can be dropped here.");
        else void attachments.add(files);
      }}
    >
      <div className="composer-inner">
        {slashOpen ? (
          <div className="popover" role="listbox" aria-label="Slash commands" style={{ left: 12 }}>
            {suggestions.map((c, i) => (
              <button
                type="button"
                key={c.name}
                role="option"
                aria-selected={i === slashActive}
                className={`menu-item ${i === slashActive ? "active" : ""}`}
                onMouseDown={(e) => {
                  e.preventDefault();
                  acceptSlash(c);
                }}
              >
                <span className="grow" data-kind={c.kind ?? undefined}>
                  /{c.name}
                  {c.usage ? <span className="faint"> {c.usage}</span> : null}
                  <div className="desc">{c.description}</div>
                </span>
              </button>
            ))}
          </div>
        ) : null}
        {mentions.open && !slashOpen ? (
          <div className="popover" role="listbox" aria-label="File mentions" style={{ left: 12 }}>
            {mentions.paths.map((p, i) => (
              <button
                type="button"
                key={p}
                role="option"
                aria-selected={i === mentions.active}
                className={`menu-item ${i === mentions.active ? "active" : ""}`}
                onMouseDown={(e) => {
                  e.preventDefault();
                  acceptMention(p);
                }}
              >
                <span className="grow mention-path">@{p}</span>
                {mentions.isResource(p) ? <span className="muted">MCP resource</span> : null}
              </button>
            ))}
          </div>
        ) : null}
        {queued > 0 ? (
          <div className="queue" aria-label="Queued messages">
            <div className="queue-bar">
              <span className="counter-nums">
                {queued} queued message{queued === 1 ? "" : "s"}
                {status.queued.step > 0 ? ` (${status.queued.step} after this step)` : ""}
              </span>
              <button type="button" className="btn" onClick={() => void clearQueue(ws.id).catch((x: unknown) => setError(errorMessage(x)))}>
                Clear queue
              </button>
            </div>
            <QueuedList messages={status.queued.messages ?? []} total={queued} />
          </div>
        ) : null}
        <AutoCompactHint workspaceId={ws.id} />
        {status.busyElsewhere ? (
          <div className="queue-bar">Another process (such as xum run) is writing this workspace's session.</div>
        ) : null}
        <AttachedImages workspaceId={ws.id} attachments={attachments} />
        <textarea
          ref={ref}
          data-composer
          data-escape-interrupts-stream
          rows={1}
          aria-label="Message"
          placeholder={streaming ? "Queue a message" : plan ? "Describe what to plan" : "Message the agent"}
          value={text}
          onChange={(e) => {
            setText(e.target.value);
            setCaret(e.target.selectionStart ?? e.target.value.length);
            setSlashIndex(0);
          }}
          onSelect={noteCaret}
          onKeyDown={onKeyDown}
          onPaste={(e) => {
            const files = imageFiles(e.clipboardData);
            if (files.length === 0) return; // text pastes as usual
            e.preventDefault();
            void attachments.add(files);
          }}
        />
        {error ? (
          <div className="form-error" role="alert" data-network={error.network || undefined}>
            {error.message}
            {error.settings ? (
              <div className="error-action">
                Settings can store a provider's API key or change the model.{" "}
                <button type="button" className="btn" onClick={() => openDialog({ kind: "settings" })}>
                  Open Settings
                </button>
              </div>
            ) : null}
          </div>
        ) : null}
        <div className="composer-bar">
          <ComposerPickers workspace={ws} onError={setError} />
          <span className="spacer" />
          {streaming ? (
            <IconButton label="Interrupt" shortcut="Esc" onClick={() => void stop()}>
              <Square size={15} />
            </IconButton>
          ) : null}
          <IconButton
            label={streaming ? "Queue message" : "Send"}
            shortcut="Enter"
            onClick={() => void send("step")}
            disabled={(!text.trim() && attachments.images.length === 0) || sending || attachments.uploading > 0}
            className="send"
          >
            <ArrowUp size={16} />
          </IconButton>
        </div>
      </div>
    </div>
  );
}
