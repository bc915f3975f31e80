// Small helpers of the command flows: cancellation racing, error text, selections as LSP ranges.
import * as vscode from "vscode";
import type { Range } from "./protocol";

export class Cancelled extends Error {
  constructor() {
    super("cancelled");
  }
}

/** Settle as soon as the token fires, even when the server never answers the cancelled request. */
export function raceCancellation<T>(promise: Promise<T>, token: vscode.CancellationToken): Promise<T> {
  if (token.isCancellationRequested) return Promise.reject(new Cancelled());
  return new Promise<T>((resolve, reject) => {
    const sub = token.onCancellationRequested(() => {
      sub.dispose();
      reject(new Cancelled());
    });
    promise.then(
      (v) => {
        sub.dispose();
        if (token.isCancellationRequested) reject(new Cancelled());
        else resolve(v);
      },
      (e) => {
        sub.dispose();
        reject(token.isCancellationRequested ? new Cancelled() : e);
      },
    );
  });
}

export function errorText(e: unknown): string {
  if (e instanceof Error) return e.message;
  if (e && typeof e === "object" && "message" in e) return String((e as { message: unknown }).message);
  return String(e);
}

export function toLspRange(sel: vscode.Selection | vscode.Range): Range {
  return {
    start: { line: sel.start.line, character: sel.start.character },
    end: { line: sel.end.line, character: sel.end.character },
  };
}
