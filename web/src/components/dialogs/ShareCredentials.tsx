// The "Share credentials" checkbox of the new-workspace dialog, for the runtimes whose workspace
// is a container (Docker, Dev Container): the create request's `runtime.shareCredentials`.
export function ShareCredentialsCheckbox(props: { checked: boolean; onChange: (checked: boolean) => void }) {
  return (
    <label className="list-row">
      <input type="checkbox" checked={props.checked} onChange={(e) => props.onChange(e.target.checked)} aria-label="Share credentials" />
      <span className="grow">Share credentials: your SSH agent, ~/.gitconfig and GitHub CLI login (GH_TOKEN) go into the container</span>
    </label>
  );
}
