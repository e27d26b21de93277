import { useState } from "preact/hooks";
import { storeKey } from "../api/client.js";

/** Paste an API key once; it stays in this tab's sessionStorage. */
export function LoginPage({ message, onSignedIn }: { message?: string; onSignedIn: () => void }) {
  const [key, setKey] = useState("");
  return (
    <main id="main" class="login">
      <h1>Stepwise console</h1>
      <form
        class="card"
        onSubmit={(e) => {
          e.preventDefault();
          if (key.trim() === "") return;
          storeKey(key.trim());
          onSignedIn();
        }}
      >
        <label for="api-key">API key</label>
        <input
          id="api-key"
          type="password"
          autocomplete="off"
          value={key}
          onInput={(e) => setKey((e.target as HTMLInputElement).value)}
        />
        <p class="muted small">
          Sent as <code>Authorization: Bearer …</code> and kept in this tab only (sessionStorage).
        </p>
        {message ? (
          <p class="notice error" role="alert">
            {message}
          </p>
        ) : null}
        <button type="submit" class="primary">
          Sign in
        </button>
      </form>
    </main>
  );
}
