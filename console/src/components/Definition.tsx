import { useState } from "preact/hooks";
import type { StateMachineDetail } from "../api/types.js";

/** Whether the text as sent was YAML (anything that is not JSON). */
export function sentAsYaml(text: string | undefined): boolean {
  if (text === undefined) return false;
  try {
    JSON.parse(text);
    return false;
  } catch {
    return true;
  }
}

/**
 * A state machine's definition as JSON, and as the YAML it was sent as (when it was),
 * with Copy and Download. Collapsed by default: it can be long.
 */
export function DefinitionView({ machine }: { machine: StateMachineDetail }) {
  const yaml = sentAsYaml(machine.definitionText) ? machine.definitionText : undefined;
  const [format, setFormat] = useState<"json" | "yaml">(yaml ? "yaml" : "json");
  const [copied, setCopied] = useState<string>();
  // As sent when it was JSON text (its own layout), else the stored definition, indented.
  const shown =
    format === "yaml" && yaml !== undefined
      ? yaml
      : yaml === undefined && machine.definitionText !== undefined
        ? machine.definitionText
        : JSON.stringify(machine.definition, null, 2);
  const file = `${machine.name}-v${machine.version}.${format === "yaml" ? "yaml" : "json"}`;

  const copy = async () => {
    try {
      await navigator.clipboard.writeText(shown);
      setCopied("Copied.");
    } catch {
      setCopied("The browser refused the clipboard: select the text and copy it.");
    }
  };
  const download = () => {
    const blob = new Blob([shown], {
      type: format === "yaml" ? "application/yaml" : "application/json",
    });
    const url = URL.createObjectURL(blob);
    const a = document.createElement("a");
    a.href = url;
    a.download = file;
    document.body.append(a);
    a.click();
    a.remove();
    setTimeout(() => URL.revokeObjectURL(url), 1000);
  };

  return (
    <details class="card definition">
      <summary>
        <h2>
          Definition <span class="muted small">v{machine.version}</span>
        </h2>
      </summary>
      <div class="definition-tools">
        {yaml !== undefined ? (
          <span role="tablist" aria-label="Format" class="tabs">
            {(["yaml", "json"] as const).map((f) => (
              <button
                key={f}
                type="button"
                role="tab"
                class="small"
                aria-selected={format === f}
                onClick={() => setFormat(f)}
              >
                {f.toUpperCase()}
              </button>
            ))}
          </span>
        ) : null}
        <button type="button" class="small" onClick={() => void copy()}>
          Copy
        </button>
        <button type="button" class="small" onClick={download}>
          Download {file}
        </button>
        <span class="muted small" role="status">
          {copied}
        </span>
      </div>
      <pre class="json definition-text" data-format={format}>
        {shown}
      </pre>
    </details>
  );
}
