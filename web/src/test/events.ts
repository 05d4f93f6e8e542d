// Engine events as the server sends them, for the projection tests.
import type { EngineEvent } from "../api/types";

export const turnStart = (seq: number, turn = "t1"): EngineEvent => ({ type: "turn-start", seq, turn_id: turn });
export const user = (seq: number, text: string): EngineEvent => ({ type: "user-message", seq, text });
export const assistant = (seq: number, text: string, calls: { id: string; name: string }[] = []): EngineEvent => ({
  type: "assistant-message",
  seq,
  text,
  reasoning: "",
  tool_calls: calls.map((c) => ({ ...c, arguments: "{}" })),
  finish_reason: calls.length ? "tool_calls" : "stop",
  usage: { input_tokens: 100 + seq, output_tokens: 1, cache_read_tokens: 0, cache_write_tokens: 0, reasoning_tokens: 0 },
});
export const result = (seq: number, callId: string, output = "ok"): EngineEvent => ({
  type: "tool-result",
  seq,
  call_id: callId,
  name: "bash",
  is_error: false,
  output,
});
export const turnEnd = (seq: number, reason = "completed", turn = "t1"): EngineEvent => ({
  type: "turn-end",
  seq,
  turn_id: turn,
  reason,
  error: reason === "error" ? { code: "server", message: "boom" } : null,
});
