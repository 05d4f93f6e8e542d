// A minimal external store for React (useSyncExternalStore). Components subscribe to the slice
// they display, so a streaming delta re-renders the message being streamed, not the app.

import { useSyncExternalStore } from "react";

export class Store<T> {
  private state: T;
  private readonly listeners = new Set<() => void>();

  constructor(initial: T) {
    this.state = initial;
  }

  get = (): T => this.state;

  set(next: T | ((prev: T) => T)): void {
    const value = typeof next === "function" ? (next as (prev: T) => T)(this.state) : next;
    if (Object.is(value, this.state)) return;
    this.state = value;
    for (const listener of this.listeners) listener();
  }

  update(patch: Partial<T>): void {
    this.set((prev) => ({ ...prev, ...patch }));
  }

  subscribe = (listener: () => void): (() => void) => {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  };
}

/** Subscribe to `selector(state)`; the selector must return stable values (fields, not new objects). */
export function useStore<T, S>(store: Store<T>, selector: (state: T) => S): S {
  return useSyncExternalStore(
    store.subscribe,
    () => selector(store.get()),
    () => selector(store.get()),
  );
}
