// Markdown for model output: GitHub extensions (tables, task lists, strikethrough, autolinks),
// `$$` math (single `$` stays text: prices and shell variables are common in code talk),
// highlighted code, Mermaid diagrams. Raw HTML in the source is never interpreted.

import { memo, type ReactNode } from "react";
import ReactMarkdown, { type Components } from "react-markdown";
import remarkGfm from "remark-gfm";
import remarkMath from "remark-math";
import type { Element, ElementContent } from "hast";
import type { PluggableList } from "unified";
import { markdownUrlTransform, safeHref } from "../../lib/urls";
import { CodeBlock } from "./CodeBlock";
import { MathView } from "./MathView";
import { MermaidView } from "./MermaidView";

function textOf(node: ElementContent | Element): string {
  if (node.type === "text") return node.value;
  if (node.type === "element") return node.children.map(textOf).join("");
  return "";
}

function classesOf(node: Element | undefined): string[] {
  const cls = node?.properties?.className;
  return Array.isArray(cls) ? cls.map(String) : [];
}

function languageOf(classes: string[]): string | null {
  const lang = classes.find((c) => c.startsWith("language-"));
  return lang ? lang.slice("language-".length) : null;
}

const components: Components = {
  a(props) {
    const href = safeHref(props.href);
    if (href === null) {
      // Not http(s)/mailto (javascript:, data:, relative...): shown as text, never clickable.
      return <span className="inert-link">{props.children}</span>;
    }
    return (
      <a href={href} target="_blank" rel="noopener noreferrer nofollow">
        {props.children}
      </a>
    );
  },
  img(props) {
    // Images are not loaded: a URL in model output can carry data out (a prompt-injected
    // "tracking pixel"). The image becomes a link the user may choose to open.
    const href = safeHref(props.src);
    const label = `image: ${props.alt || "untitled"}`;
    if (href === null) return <span className="inert-link">[{label}]</span>;
    return (
      <a href={href} target="_blank" rel="noopener noreferrer nofollow">
        [{label}]
      </a>
    );
  },
  pre(props) {
    const child = props.node?.children.find(
      (c): c is Element => c.type === "element" && c.tagName === "code",
    );
    if (!child) return <pre>{props.children}</pre>;
    const classes = classesOf(child);
    const code = textOf(child).replace(/\n$/, "");
    if (classes.includes("math-display")) return <MathView tex={code} display />;
    const language = languageOf(classes);
    if (language === "mermaid") return <MermaidView source={code} />;
    return <CodeBlock code={code} language={language} />;
  },
  code(props) {
    const classes = classesOf(props.node);
    if (classes.includes("math-inline")) {
      return <MathView tex={props.node ? textOf(props.node) : String(props.children)} display={false} />;
    }
    return <code>{props.children}</code>;
  },
};

const remarkPlugins: PluggableList = [remarkGfm, [remarkMath, { singleDollarTextMath: false }]];

interface Props {
  text: string;
}

function MarkdownImpl(props: Props): ReactNode {
  return (
    <div className="md">
      <ReactMarkdown
        remarkPlugins={remarkPlugins}
        urlTransform={markdownUrlTransform}
        skipHtml={false}
        components={components}
      >
        {props.text}
      </ReactMarkdown>
    </div>
  );
}

/** Markdown is the most expensive thing in a row; re-render only when the text changes. */
export const Markdown = memo(MarkdownImpl);
