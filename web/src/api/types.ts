// Shapes of the server API (docs/api.md) and the engine event vocabulary (docs/events.md).
// The server is the source of truth; these types mirror it and nothing here is synthesized.
// The event interfaces are checked against events.schema.json (generated from the engine's
// classes by `make event-schema`) by tests/unit/test_event_schema.py.

export type RuntimeSpec =
  | { type: "local"; host?: null }
  | { type: "worktree"; host?: null }
  | { type: "ssh"; host: string }
  | { type: "docker"; host?: null; image: string }
  | { type: "devcontainer"; host?: null; config?: string | null };

export type RuntimeType = RuntimeSpec["type"];

/** GET /api/server/container-engine: whether the Docker runtime can be offered. */
export interface ContainerEngine {
  available: boolean;
  cli: string | null;
  version: string | null;
  problem: string | null;
}

export type WorkspaceState = "idle" | "streaming" | "waiting" | "error";

export interface ApiErrorBody {
  code: string;
  message: string;
  hint?: string | null;
}

/** A message waiting to run: after the current step, or as a turn after this one. */
export interface QueuedMessage {
  when: "step" | "turn";
  /** Its first 500 characters. */
  text: string;
  truncated: boolean;
}

export interface WorkspaceStatus {
  state: WorkspaceState;
  phase: "model" | "tools" | "compacting" | null;
  /** Counts are exact; `messages` lists at most 20, in the order they will run. */
  queued: { step: number; turn: number; messages?: QueuedMessage[] };
  lastSeq: number;
  readSeq: number;
  unread: boolean;
  busyElsewhere: boolean;
  error: ApiErrorBody | null;
}

export interface Project {
  path: string;
  name: string;
  addedAt: number;
  trusted: boolean;
  isGit: boolean;
}

export type AgentMode = "exec" | "plan";

export interface Workspace {
  id: string;
  name: string;
  title: string;
  projectPath: string;
  projectName: string;
  runtime: RuntimeSpec;
  path: string;
  branch: string | null;
  agent: string;
  /** null: the server's default model / thinking level applies. */
  model: string | null;
  thinking: string | null;
  parentId: string | null;
  createdAt: number;
  archivedAt: number | null;
  status: WorkspaceStatus;
  /** The log's last seq when an idle compaction finished (the badge shows while nothing followed). */
  idleCompactedSeq?: number | null;
  /** The permission mode (docs/security.md#approvals). */
  permissions: PermissionMode;
  /** The workspace's own ports (XUM_PORT, XUM_PORTS); null or absent: it has none. */
  ports?: PortRange | null;
  /** "Notify on all responses" (docs/notifications.md). */
  notifyOnResponse?: boolean;
  /** A scratch chat: no project, a private folder, no git (docs/workspaces.md). */
  scratch?: boolean;
  /** The external ACP agent that is this workspace's agent (config.json `externalAgents`);
   *  null: xum's own engine. */
  externalAgent?: string | null;
}

export interface PortRange {
  first: number;
  last: number;
  count: number;
}

export type PermissionMode = "auto" | "ask" | "read-only";

export interface SafetySettings {
  sandbox: { mode: "auto" | "workspace-write" | "read-only" | "off"; egress: "shared" | "off"; writable: string[]; privateTmp: boolean };
  readDenylist: { sensitive: boolean; paths: string[] };
  backend: { ok: boolean; detail: string; effective: string };
  rules: { project: string; tool: string; prefix: string; addedAt: number | null }[];
}

/** Settings → External agents (config.json `externalAgents`, docs/external-agents.md): read-only.
 *  A definition's `env` values and `args` are never sent, only the variables' names. */
export interface ExternalAgentSettings {
  configFile: string;
  agents: { name: string; label: string; command: string; models: string[]; envNames: string[] }[];
  /** The section cannot be read: what is wrong (then `agents` is empty). */
  problem: string | null;
}

/** Settings → Models → Model Fallbacks (config.json `modelFallbacks`, docs/models.md). */
export interface FallbackChain {
  /** The model that refuses (`provider:model-id`). */
  model: string;
  /** The models to try after it, in order. */
  models: string[];
}
export interface FallbackSettings {
  chains: FallbackChain[];
  /** config.json has no `modelFallbacks`: the built-in chains apply. */
  builtIn: boolean;
  /** The key is there but cannot be used: what is wrong. */
  error: string | null;
}

export interface DeletionItem {
  kind: string;
  path?: string | null;
  name?: string | null;
  detail?: string | null;
}

export interface DeletionPreview {
  workspaceId: string;
  removes: DeletionItem[];
  warnings: string[];
}

export interface Usage {
  input_tokens: number;
  output_tokens: number;
  cache_read_tokens: number;
  cache_write_tokens: number;
  reasoning_tokens: number;
}

export interface CostsUsage {
  inputTokens: number;
  outputTokens: number;
  cacheReadTokens: number;
  cacheWriteTokens: number;
  reasoningTokens: number;
}

export interface CostTurn {
  turnId: string;
  startSeq: number;
  endSeq: number | null;
  reason: string | null;
  model: string | null;
  usage: CostsUsage;
  costUsd: number | null;
  steps: number;
}

/** GET /api/workspaces/{id}/context: the Context bar and the auto-compaction warning. */
export interface ContextUsage {
  tokens: number | null;
  estimated: boolean;
  model: string | null;
  window: number | null;
  threshold: number;
  autoCompact: boolean;
  idleHours: number | null;
}

export interface Costs {
  usage: CostsUsage;
  cacheHitRatio: number | null;
  costUsd: number | null;
  turns: CostTurn[];
  lastRequest?: { inputTokens: number; contextWindow: number | null } | null;
  /** What each model's replies cost (a refused reply included), in the order they first ran. */
  byModel?: { model: string; usage: CostsUsage; costUsd: number | null }[];
}

export interface GitStatus {
  isGit: boolean;
  branch: string | null;
  base: { ref: string; sha: string } | null;
  ahead: number;
  behind: number;
  entries: { path: string; origPath?: string | null; index: string; worktree: string }[];
  truncated: boolean;
}

export interface GitDiffFile {
  path: string;
  additions: number;
  deletions: number;
  binary: boolean;
}

export interface GitDiff {
  base: { ref: string; sha: string } | null;
  files: GitDiffFile[];
  diff: string;
  truncated: boolean;
}

export interface ProviderRow {
  id: string;
  displayName: string;
  custom: boolean;
  configured: boolean;
  usable: boolean;
  credentialSource: string | null;
  baseUrl: string | null;
  problem: string | null;
  /** The provider's `models` in providers.jsonc, in file order. */
  models: string[];
}

/** One suggestion from a provider's own model list (`GET .../catalog`). */
export interface CatalogModel {
  id: string;
  displayName: string | null;
}

export interface CatalogList {
  provider: string;
  models: CatalogModel[];
  /** Why listing failed; ids can still be typed. */
  error: string | null;
  truncated: boolean;
  cached: boolean;
}

/** The answer to adding or removing a custom model. */
export interface ModelEdit {
  provider: ProviderRow;
  changed: boolean;
  message: string | null;
}

export interface ModelEntry {
  model: string;
  provider: string;
  id: string;
  displayName: string;
  contextWindow: number | null;
  priced: boolean;
  usable: boolean;
  thinkingLevels?: string[];
}

export interface ModelsInfo {
  defaultModel: string | null;
  /** config.json `defaultModel`; null when the default is chosen automatically. */
  configuredDefaultModel?: string | null;
  aliases: Record<string, string>;
  models: ModelEntry[];
}

export interface SlashCommand {
  name: string;
  description: string;
  usage?: string | null;
  /** "command" (carried out by the server: /model, /fork), "skill" or "override". */
  kind?: string | null;
}

/** `GET /api/fs/dirs?path=`: one folder's subdirectories, for the Add project folder browser. */
export interface DirListing {
  /** Absolute, `~` expanded, symlinks resolved. */
  path: string;
  /** Null at the root. */
  parent: string | null;
  home: string;
  dirs: string[];
  truncated: boolean;
}

/** `GET /api/workspaces/{id}/files?q=&limit=`: checkout paths matching `q`, best first. */
export interface FileMatches {
  paths: string[];
}

/** `GET /api/workspaces/{id}/mcp/resources`: the composer's MCP resource suggestions. */
export interface McpResourceList {
  resources: { server: string; uri: string; mention: string; name: string; description: string; mimeType: string | null; size: number | null }[];
  errors: string[];
  truncated: boolean;
}

/** `GET`/`PUT /api/workspaces/{id}/plan`: the workspace's plan file. */
export interface PlanFile {
  path: string;
  exists: boolean;
  /** "" when the file does not exist. */
  content: string;
  /** Of the content as read ("" when absent); a PUT passes it back as `expectedSha256`. */
  sha256: string;
}

/** What `POST .../messages` answers. */
export interface SentMessage {
  disposition: "started" | "queued" | "command";
  when: "step" | "turn" | null;
  command?: "model" | "fork" | null;
  /** /model: the workspace as changed; /fork: the new fork. */
  workspace?: Workspace | null;
  forkMessage?: "started" | null;
  forkMessageError?: { code: string; message: string } | null;
}

/** An agent the picker offers (`GET .../agents`). */
export interface AgentInfo {
  id: string;
  name: string;
  description: string;
  color: string | null;
  scope: string;
}

export interface AuthStatus {
  authRequired: boolean;
  authenticated: boolean;
  /** The browser sent a session cookie the server no longer accepts: its sign-in ended. */
  sessionEnded?: boolean;
}

export interface ServerSession {
  id: string;
  createdAt: number;
  lastSeenAt: number;
  userAgent: string | null;
  current: boolean;
}

export interface HistoryPage {
  events: EngineEvent[];
  firstSeq: number | null;
  lastSeq: number | null;
  hasMore: boolean;
  logLastSeq: number;
}

// ---- Engine events ------------------------------------------------------------------------

export interface ToolCallRef {
  id: string;
  name: string;
  arguments: string;
}

export interface ErrorInfo {
  code: string;
  message: string;
  hint?: string | null;
  kind?: string | null;
}

interface Durable {
  seq: number;
  ts?: number;
}

export interface TurnStartEvent extends Durable {
  type: "turn-start";
  turn_id: string;
  model?: string;
  /** "compaction": a summarization turn. */
  kind?: string;
}
export interface UserMessageEvent extends Durable {
  type: "user-message";
  text: string;
  queued?: boolean;
  /** A slash command: what the user typed, and what the command was. */
  typed?: string;
  slash?: Record<string, unknown>;
  /** A row xum added (a context update, a goal continuation). */
  synthetic?: boolean;
  /** "context_update" or "goal_continuation" on a synthetic row. */
  kind?: string;
  /** A context update: the sections that changed. */
  changed?: string[];
  /** Images the message carries, served by GET /api/workspaces/{id}/images/{sha256}. */
  images?: ImageRef[];
}
/** A stored image a message refers to (never its bytes). */
export interface ImageRef {
  sha256: string;
  media_type: string;
  size: number;
  name?: string;
  width?: number;
  height?: number;
}
/** A context segment starts: its system prompt and tools were frozen (names only here). */
export interface ContextFrozenEvent extends Durable {
  type: "context-frozen";
  reason?: string;
  agent?: string;
  mode?: string;
  tools: string[];
}
/** A search result or a cited page: a title and a link (text, never HTML). */
export interface SearchHitRef {
  title: string;
  url: string;
}
/** A web search the provider ran inside a reply. */
export interface WebSearchRef {
  query: string;
  results: SearchHitRef[];
  error?: string;
}
export interface AssistantMessageEvent extends Durable {
  type: "assistant-message";
  text: string;
  reasoning: string;
  tool_calls: ToolCallRef[];
  finish_reason: string;
  usage?: Usage;
  cost_usd?: number | null;
  model?: string;
  step?: number;
  web_searches?: WebSearchRef[];
  citations?: SearchHitRef[];
}
export interface ToolResultEvent extends Durable {
  type: "tool-result";
  call_id: string;
  name: string;
  is_error: boolean;
  output: string;
  meta?: Record<string, unknown> | null;
  duration_s?: number;
}
export interface TurnEndEvent extends Durable {
  type: "turn-end";
  turn_id: string;
  reason: string;
  usage?: Usage;
  cost_usd?: number | null;
  steps?: number;
  error?: ErrorInfo | null;
  /** "crash": crash recovery closed the turn. */
  cause?: string;
}
export interface DamagedFrameEvent extends Durable {
  type: "damaged-frame";
  raw?: string;
}
export interface CompactionStartEvent extends Durable {
  type: "compaction-start";
  turn_id?: string;
  trigger?: string;
  model?: string;
}
export interface CompactionEvent extends Durable {
  type: "compaction";
  /** What the model sees from here on (lead-in included). */
  summary: string;
  trigger?: string;
  model?: string;
  /** The last frame the summary covers. */
  through_seq?: number;
  source_seq?: number;
  usage?: Usage;
  cost_usd?: number | null;
}
export interface ContextResetEvent extends Durable {
  type: "context-reset";
  reason?: string;
  /** /clear (not --soft): the chat starts over here. */
  hard?: boolean;
}
export interface GoalInfo {
  goalId: string;
  objective: string;
  status: string;
  budgetCents?: number | null;
  turnCap?: number | null;
  summary?: string | null;
  reason?: string | null;
}
export interface GoalEvent extends Durable {
  type: "goal";
  goal: GoalInfo;
}
/** A model refused and the turn went on with the next model of its fallback chain. */
export interface ModelFallbackEvent extends Durable {
  type: "model-fallback";
  turn_id?: string;
  step?: number;
  from_model: string;
  to_model: string;
  /** One line for the transcript: "X refused; continued with Y". */
  message: string;
  /** What the refused reply said (often nothing). */
  text?: string;
  category?: string;
  usage?: Usage;
  cost_usd?: number | null;
}

export interface StepStartEvent {
  type: "step-start";
  step: number;
  turn_id: string;
}
export interface TextDeltaEvent {
  type: "text-delta";
  text: string;
}
export interface ReasoningDeltaEvent {
  type: "reasoning-delta";
  text: string;
}
export interface ToolCallStartEvent {
  type: "tool-call-start";
  index: number;
  call_id: string;
  name: string;
}
export interface ToolCallDeltaEvent {
  type: "tool-call-delta";
  index: number;
  call_id: string;
  arguments: string;
}
export interface ToolCallEvent {
  type: "tool-call";
  call_id: string;
  name: string;
  arguments: unknown;
}
export interface UsageEvent {
  type: "usage";
  turn: Usage;
  turn_cost_usd: number | null;
  session_cost_usd: number | null;
}
export interface RetryingEvent {
  type: "retrying";
  attempt: number;
  delay_s: number;
  reason: string;
}
/** The model's reply has sent nothing that counts for `silent_s` seconds (a quarter of the
 * idle timeout `idle_s`, where the attempt ends and is retried). */
export interface ReplyStalledEvent {
  type: "reply-stalled";
  silent_s: number;
  idle_s: number;
  /** Part of the reply had arrived (else the silence follows the response headers). */
  began: boolean;
  message: string;
}
/** Something of this workspace waits for the process's governor (docs/governor.md). */
export interface GovernorWaitEvent {
  type: "governor-wait";
  reason: "concurrency" | "backoff" | "subagents" | "budget" | string;
  message: string;
  /** Unix time in seconds. */
  since: number;
  provider?: string;
  model?: string;
  /** Unix time in seconds when the pause ends (backoff) or the day ends (budget). */
  retry_at?: number;
}
export interface GovernorWaitEndEvent {
  type: "governor-wait-end";
  reason: string;
  waited_s: number;
}
export interface DiscardPartialEvent {
  type: "discard-partial";
}
export interface AdvisoryEvent {
  type: "advisory";
  kind: string;
  message: string;
  call_id?: string;
  workspace_id?: string;
}
export interface AgentChangedEvent {
  type: "agent-changed";
  agent: string;
}
/** The agent proposed its plan (plan mode); `content` is null for a plan too large to keep. */
export interface PlanProposedEvent {
  type: "plan-proposed";
  call_id: string;
  path: string | null;
  content: string | null;
  mtime_ns: number | null;
}
/** The agent called `notify` (docs/notifications.md); live only, never replayed. */
export interface NotificationEvent {
  type: "notification";
  call_id: string;
  title: string;
  message: string | null;
}
/** One line of the workspace's `.xum/init` output, secrets masked. */
export interface InitOutputEvent {
  type: "init-output";
  line: string;
}
export interface InitEndEvent {
  type: "init-end";
  status: string;
  exit_code: number | null;
}
export interface SubagentStatusEvent {
  type: "subagent-status";
  task_id: string;
  title: string;
  status: string;
  header: Record<string, unknown> | null;
}
export interface SubagentReportEvent {
  type: "subagent-report";
  task_id: string;
  title: string | null;
  text: string;
}
export interface SubagentRemovedEvent {
  type: "subagent-removed";
  task_id: string;
}
/** A monitored background process printed lines it watches for, or ended. */
export interface BackgroundWakeEvent {
  type: "background-wake";
  task_id: string;
  process_id: string;
  display_name: string;
  reason: "output" | "exit" | string;
  status: string;
  lines: string[];
  exit_code?: number;
  retired?: boolean;
}
/** One row of the background processes list (GET /api/workspaces/:id/background). */
export interface BackgroundProcessRow {
  task_id: string;
  process_id: string;
  display_name: string;
  script: string;
  status: string;
  started_at: number;
  exit_code: number | null;
  monitored: boolean;
  total_bytes: number;
  last_lines?: string[];
}
/** The workspace's background processes after one started or ended. */
export interface BackgroundProcessesEvent {
  type: "background-processes";
  processes: BackgroundProcessRow[];
}
export interface ErrorEvent extends ErrorInfo {
  type: "error";
}
/** A plain run adopts the goal its agent set and continues like a goal run. */
export interface GoalAdoptedEvent {
  type: "goal-adopted";
  goalId: string;
  objective: string;
  status: string;
  budgetCents: number | null;
  turnCap: number | null;
}
export interface GoalContinuingEvent {
  type: "goal-continuing";
  goalId: string;
  turn: number;
  turnCap: number | null;
  spentCents: number | null;
  budgetCents: number | null;
  wrapUp: boolean;
}
export interface GoalCompletedEvent {
  type: "goal-completed";
  goalId: string;
  objective: string;
  summary: string | null;
  turns: number;
  spentCents: number | null;
}
export interface GoalIncompleteEvent {
  type: "goal-incomplete";
  goalId: string;
  objective: string;
  /** goal_budget, goal_turns, session_budget, error, interrupted */
  reason: string;
  turns: number;
  spentCents: number | null;
  budgetCents: number | null;
  turnCap: number | null;
}
/** A tool call waits for a person (docs/security.md#approvals). All text is model- or
 * repository-controlled: it is shown as text, never as HTML. */
export interface ApprovalRequestEvent {
  type: "approval-request";
  request_id: string;
  call_id: string;
  tool: string;
  /** command | critical | escalation | write */
  kind: string;
  subject: string;
  why: string;
  reason?: string;
  /** What "always allow" would remember; absent: not offered. */
  prefix?: string;
}
export interface ApprovalResolvedEvent {
  type: "approval-resolved";
  request_id: string;
  call_id: string;
  decision: "once" | "always" | "deny";
  by: string;
  reason?: string;
}
/** Live output of a running tool call (docs/events.md): secrets masked, bounded by the server. */
export interface ToolOutputEvent {
  type: "tool-output";
  call_id: string;
  /** "output" (bash), "bash:<id>" (a background command), "hook:tool_pre", "hook:tool_post". */
  stream: string;
  text: string;
}

export type DurableEvent =
  | TurnStartEvent
  | UserMessageEvent
  | AssistantMessageEvent
  | ToolResultEvent
  | TurnEndEvent
  | DamagedFrameEvent
  | CompactionStartEvent
  | CompactionEvent
  | ContextResetEvent
  | ContextFrozenEvent
  | GoalEvent
  | ModelFallbackEvent;

export type LiveEvent =
  | StepStartEvent
  | TextDeltaEvent
  | ReasoningDeltaEvent
  | ToolCallStartEvent
  | ToolCallDeltaEvent
  | ToolCallEvent
  | UsageEvent
  | RetryingEvent
  | ReplyStalledEvent
  | GovernorWaitEvent
  | GovernorWaitEndEvent
  | DiscardPartialEvent
  | AdvisoryEvent
  | ErrorEvent
  | ToolOutputEvent
  | AgentChangedEvent
  | PlanProposedEvent
  | NotificationEvent
  | InitOutputEvent
  | InitEndEvent
  | SubagentStatusEvent
  | SubagentReportEvent
  | SubagentRemovedEvent
  | BackgroundWakeEvent
  | BackgroundProcessesEvent
  | GoalAdoptedEvent
  | GoalContinuingEvent
  | GoalCompletedEvent
  | GoalIncompleteEvent
  | ApprovalRequestEvent
  | ApprovalResolvedEvent;

export type EngineEvent = DurableEvent | LiveEvent;

// ---- WebSocket ----------------------------------------------------------------------------

export interface PartialMessage {
  text: string;
  reasoning: string;
  tool_calls: ToolCallRef[];
}

export interface PendingQuestionOption {
  label: string;
  description: string;
}

export interface PendingQuestionItem {
  question: string;
  header: string;
  multiSelect: boolean;
  options: PendingQuestionOption[];
}

/** An `ask_user_question` waiting for the user (sent to subscribers, again on resubscribe). */
export interface PendingQuestion {
  questionId: string;
  questions: PendingQuestionItem[];
}

/** What waits for a person somewhere on the server (docs/inbox.md, docs/api.md). */
export interface InboxItem {
  id: string;
  kind: "approval" | "question" | "plan" | "turn-ended" | "goal-stopped" | "budget-spent" | "notify" | "held";
  workspaceId: string;
  workspaceName: string;
  project: string;
  parentId: string | null;
  summary: string;
  /** When it arrived, ms since the epoch. */
  since: number;
  seq: number;
  actions: string[];
  detail: Record<string, unknown>;
}

export type InboxMessage =
  | { type: "inbox"; items: InboxItem[] }
  | { type: "inbox-added"; item: InboxItem }
  | { type: "inbox-removed"; id: string; workspaceId: string };

/** A desktop notification to show (docs/notifications.md). */
export interface NotificationNotice {
  id: string;
  /** "notify" (the agent's tool), "response" (notify on all responses) or an inbox kind. */
  source: string;
  workspaceId: string;
  workspaceName: string;
  project: string;
  title: string;
  body: string | null;
  since: number;
}

export type ServerMessage =
  | InboxMessage
  | { type: "notification"; notification: NotificationNotice }
  | { type: "hello"; protocol: number; serverVersion?: string }
  | { type: "event"; workspaceId: string; event: EngineEvent }
  | {
      type: "partial";
      workspaceId: string;
      afterSeq: number;
      message: PartialMessage;
      turnId?: string | null;
      step?: number | null;
    }
  | { type: "subscribed"; workspaceId: string; lastSeq: number; status: WorkspaceStatus }
  | { type: "resync"; workspaceId: string; reason: string }
  | { type: "workspace-status"; workspaceId: string; status: WorkspaceStatus }
  | { type: "workspaces-changed" }
  | ({ type: "question"; workspaceId: string } & PendingQuestion)
  | { type: "question-closed"; workspaceId: string; questionId: string }
  | { type: "pong"; id?: unknown }
  | { type: "error"; error: ApiErrorBody };

export type ClientMessage =
  | { type: "subscribe"; workspaceId: string; afterSeq: number }
  | { type: "unsubscribe"; workspaceId: string }
  | { type: "inbox-subscribe" }
  | { type: "notifications-subscribe" }
  | { type: "ping"; id?: unknown };
