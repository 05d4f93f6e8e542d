// A dialog around one form: Cancel and a submit button in the footer, the submit button
// inert while the action runs (disabled while `canSubmit` is false), and whatever the action
// throws shown under the fields. Throw a plain Error for a check of the form's own.
//
// While the action runs the button is only aria-disabled: disabling the focused element would
// drop focus to <body>, and a failed submit would leave a dialog that no key reaches. After a
// failure, focus goes to the form's first field so the user can correct it.

import { useRef, useState, type ReactNode } from "react";
import { errorMessage } from "../../api/http";
import { closeDialog } from "../../state/app";
import { Modal } from "./Modal";
import { FormError } from "../FormParts";

interface Props {
  title: string;
  formId: string;
  submitLabel: string;
  canSubmit?: boolean;
  onSubmit: () => Promise<void>;
  children: ReactNode;
}

export function FormDialog(props: Props) {
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const running = useRef(false);
  const form = useRef<HTMLFormElement>(null);
  const submit = async () => {
    if (running.current || props.canSubmit === false) return;
    running.current = true;
    setBusy(true);
    setError(null);
    try {
      await props.onSubmit();
    } catch (exc) {
      setError(errorMessage(exc));
      refocus(form.current);
    } finally {
      running.current = false;
      setBusy(false);
    }
  };
  return (
    <Modal
      title={props.title}
      onClose={closeDialog}
      footer={
        <>
          <button type="button" className="btn" onClick={closeDialog}>
            Cancel
          </button>
          <button
            type="submit"
            form={props.formId}
            className="btn btn-primary"
            disabled={props.canSubmit === false}
            aria-disabled={busy || undefined}
          >
            {props.submitLabel}
          </button>
        </>
      }
    >
      <form
        ref={form}
        id={props.formId}
        onSubmit={(e) => {
          e.preventDefault();
          void submit();
        }}
      >
        {props.children}
        <FormError message={error} />
      </form>
    </Modal>
  );
}

/** After a failed submit, give the keyboard to the form's first field (the one to correct),
 *  unless the user is already typing in one of its fields. */
function refocus(form: HTMLFormElement | null): void {
  if (!form) return;
  const dialog = form.closest("[role='dialog']");
  const active = document.activeElement;
  if (active && form.contains(active) && active.matches("input, select, textarea")) return;
  const field =
    form.querySelector<HTMLElement>("[data-autofocus]") ?? form.querySelector<HTMLElement>("input, select, textarea");
  (field ?? (dialog as HTMLElement | null))?.focus({ preventScroll: true });
}
