// Small pieces several forms share.
import type { Project } from "../api/types";

/** A form's error line (announced to screen readers); nothing while there is none. */
export function FormError(props: { message: string | null | undefined }) {
  return props.message ? (
    <div className="form-error" role="alert">
      {props.message}
    </div>
  ) : null;
}

/** The project a settings section applies to. */
export function ProjectSelect(props: {
  projects: Project[];
  value: string;
  onChange: (path: string) => void;
  label: string;
}) {
  return (
    <label className="field">
      <span>Project</span>
      <select className="input" value={props.value} onChange={(e) => props.onChange(e.target.value)} aria-label={props.label}>
        {props.projects.map((p) => (
          <option key={p.path} value={p.path}>
            {p.name}
          </option>
        ))}
      </select>
    </label>
  );
}
