import { useState } from "react";
import { useStore } from "../lib/store";
import { app, signIn } from "../state/app";
import { FormError } from "./FormParts";

/** Shown when the server requires a token this browser has not presented. */
export function SignIn() {
  const notice = useStore(app, (s) => s.signinNotice);
  const [token, setToken] = useState("");
  const [error, setError] = useState<string | null>(
    notice === "link-failed" ? "That sign-in link's token was not accepted." : null,
  );
  const [busy, setBusy] = useState(false);
  return (
    <main className="signin">
      <div className="card" data-testid="signin">
        <h1>Sign in to xum</h1>
        {notice === "session-ended" ? (
          <p className="signin-reason" data-testid="signin-reason" role="status">
            This browser was signed in, and that sign-in has ended: the server now uses another token
            (it was started with a different one, or its kept token file was deleted), or this browser
            session was revoked. Sign in again to continue; what you had typed is kept.
          </p>
        ) : null}
        <p>
          Open the URL that <code>xum server</code> printed when it started (it ends in <code>?token=…</code>). It
          signs this browser in and the token leaves the address bar.
        </p>
        <p className="muted">Or paste the token here:</p>
        <form
          className="inline-form"
          onSubmit={(e) => {
            e.preventDefault();
            if (!token.trim()) return;
            setBusy(true);
            void signIn(token.trim()).then((err) => {
              setBusy(false);
              setError(err);
            });
          }}
        >
          <input
            className="input"
            type="password"
            autoComplete="off"
            aria-label="Server token"
            value={token}
            onChange={(e) => setToken(e.target.value)}
          />
          <button type="submit" className="btn btn-primary" disabled={busy || !token.trim()}>
            Sign in
          </button>
        </form>
        <FormError message={error} />
      </div>
    </main>
  );
}
