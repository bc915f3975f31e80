// Status bar item with the last edit's fidelity.
import * as vscode from "vscode";
import type { FidelityReport } from "./protocol";
import { statusText, statusTooltip, summarize, type Summary } from "./render";

export class FidelityStatus implements vscode.Disposable {
  private readonly item: vscode.StatusBarItem;
  private enabled = true;
  /** undefined: not known yet; false: no server (the item then offers a restart). */
  private serverUp: boolean | undefined;
  lastReport: FidelityReport | undefined;
  lastOrigin = "";
  lastSummary: Summary | undefined;

  constructor(
    private readonly showReportCommand: string,
    private readonly restartCommand = "editFidelity.restartServer",
  ) {
    this.item = vscode.window.createStatusBarItem("editFidelity.status", vscode.StatusBarAlignment.Right, 100);
    this.item.name = "Edit Fidelity";
    this.render();
  }

  setServerRunning(up: boolean): void {
    this.serverUp = up;
    this.render();
  }

  setEnabled(enabled: boolean): void {
    this.enabled = enabled;
    this.render();
  }

  update(report: FidelityReport | undefined | null, origin: string, flagged?: number[] | null): Summary | undefined {
    this.lastReport = report ?? undefined;
    this.lastOrigin = origin;
    this.lastSummary = summarize(report ?? undefined, flagged);
    this.render();
    return this.lastSummary;
  }

  get text(): string {
    return this.item.text;
  }

  private render(): void {
    if (this.serverUp === false) {
      this.item.text = "$(error) Fidelity: no server";
      this.item.tooltip = "Edit Fidelity: the language server is not running. Click to start it again.";
      this.item.command = this.restartCommand;
      this.item.backgroundColor = new vscode.ThemeColor("statusBarItem.errorBackground");
    } else {
      this.item.text = statusText(this.lastSummary);
      this.item.tooltip = statusTooltip(this.lastSummary, this.lastOrigin);
      this.item.command = this.showReportCommand;
      this.item.backgroundColor =
        this.lastSummary && this.lastSummary.flagged > 0 ? new vscode.ThemeColor("statusBarItem.warningBackground") : undefined;
    }
    if (this.enabled) this.item.show();
    else this.item.hide();
  }

  dispose(): void {
    this.item.dispose();
  }
}
