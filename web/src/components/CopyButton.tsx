import { Check, Copy } from "lucide-react";
import { useState } from "react";
import { IconButton } from "./Tooltip";

export function CopyButton(props: { text: string; label?: string }) {
  const [copied, setCopied] = useState(false);
  const copy = () => {
    void navigator.clipboard
      ?.writeText(props.text)
      .then(() => setCopied(true))
      .catch(() => setCopied(false));
  };
  return (
    <IconButton label={copied ? "Copied" : (props.label ?? "Copy")} onClick={copy}>
      {copied ? <Check size={14} /> : <Copy size={14} />}
    </IconButton>
  );
}
